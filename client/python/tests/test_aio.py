"""The asyncio client (hashline_client.aio) against the real hashlined:
the calls as coroutines, stale references with their fresh tags, grep and
watch as async iterators, retries under one request id with the call's
metadata, coroutines sharing one client, and cancellation."""

from __future__ import annotations

import asyncio
import inspect
import os
import shutil
import socket
import tempfile
import unittest

import grpc
import grpc.aio

from tests import common
from tests.server import Server

from hashline_client import (
    NO_RETRY,
    AsyncClient,
    AsyncGrepStream,
    AsyncWatchStream,
    Client,
    ErrorReason,
    HashlineError,
    StaleRefError,
    StaleRefReason,
    WatchEventKind,
    edits,
    new_request_id,
    stale_ref_reason,
)
from hashline_client import aio



class ShapeTest(unittest.TestCase):
    def test_every_call_of_client_is_on_async_client_with_its_parameters(self):
        calls = [n for n, v in vars(Client).items() if not n.startswith("_") and inspect.isfunction(v) and n != "close"]
        self.assertIn("blame", calls)
        for name in calls:
            with self.subTest(name):
                mine = getattr(AsyncClient, name, None)
                self.assertIsNotNone(mine, f"AsyncClient has no {name}")
                self.assertEqual(list(inspect.signature(mine).parameters.items()),
                                 list(inspect.signature(getattr(Client, name)).parameters.items()))
                if name in ("grep", "watch"):
                    self.assertFalse(inspect.iscoroutinefunction(mine), "a stream is returned, not awaited")
                elif name == "list_all":
                    self.assertTrue(inspect.isasyncgenfunction(mine))
                else:
                    self.assertTrue(inspect.iscoroutinefunction(mine), name)
        self.assertIs(aio.AsyncClient, AsyncClient)


class AsyncCallsTest(common.WithServer, unittest.IsolatedAsyncioTestCase):
    files = common.CALLS_FILES

    async def asyncSetUp(self):
        self.c = AsyncClient(self.server.addr, agent="py-aio")
        self.addAsyncCleanup(self.c.close)

    def new_file(self, content: str) -> str:
        return common.new_file(self.server, content)

    async def test_read_returns_version_and_tagged_lines(self):
        r = await self.c.read("main.go")
        self.assertTrue(r.version.startswith("v"), r.version)
        self.assertEqual(r.total_lines, 5)
        self.assertEqual(r.lines[3].content, '\tprintln("hi")')
        self.assertTrue(r.text.startswith(f"1:{r.lines[0].hash}|package main\n"), r.text)
        page = await self.c.read("main.go", offset=2, limit=2)
        self.assertEqual([l.number for l in page.lines], [2, 3])
        self.assertEqual(page.next_offset, 4)
        with self.assertRaises(HashlineError) as cm:
            await self.c.read("nope.txt")
        self.assertEqual(cm.exception.code, grpc.StatusCode.NOT_FOUND)
        self.assertTrue(cm.exception.has_reason(ErrorReason.ERROR_REASON_NOT_FOUND))
        self.assertNotIsInstance(cm.exception, StaleRefError)

    async def test_edit_with_every_builder(self):
        name = self.new_file(common.BUILDERS_BEFORE)
        r = await self.c.read(name)
        resp = await self.c.edit(name, common.every_builder(r.lines), base_version=r.version)
        self.assertEqual(self.server.read_file(name), common.BUILDERS_AFTER)
        self.assertEqual(resp.total_lines, 7)
        await self.c.edit(name, [edits.replace_text("c2", "C2")])
        self.assertEqual(self.server.read_file(name), "start\na\nB\nb2\nc\nC2\nend\n")
        dry = await self.c.edit(name, [edits.append("more")], dry_run=True)
        self.assertTrue(dry.dry_run)
        self.assertEqual(self.server.read_file(name), "start\na\nB\nb2\nc\nC2\nend\n")

    async def test_stale_ref_carries_fresh_tags_and_the_retry_from_them_lands(self):
        name = self.new_file('def greet(name):\n    return "hello " + name\n')
        bob = AsyncClient(self.server.addr, agent="bob")
        self.addAsyncCleanup(bob.close)
        seen = await bob.read(name)
        await self.c.read(name)
        await self.c.edit(name, [edits.replace(seen.lines[1], '    return f"hello {name}"')])
        with self.assertRaises(StaleRefError) as cm:
            await bob.edit(name, [edits.replace(seen.lines[1], '    return "hi " + name')])
        e = cm.exception
        self.assertEqual((e.code, e.reason), (grpc.StatusCode.ABORTED, "STALE_REF"))
        stale = e.refs[0]
        self.assertEqual(stale.expected_hash, seen.lines[1].hash)
        self.assertEqual(stale_ref_reason(stale), StaleRefReason.Value("STALE_REF_REASON_CHANGED"))
        self.assertEqual(stale.current_line, f'2:{stale.actual_hash}|    return f"hello {{name}}"')
        self.assertEqual(e.current_version, (await self.c.read(name)).version)
        self.assertIn(">>> " + stale.current_line, e.message)
        await bob.edit(name, [edits.replace(stale.current_line, '    return f"hi {name}"')])
        self.assertEqual(self.server.read_file(name), 'def greet(name):\n    return f"hi {name}"\n')

    async def test_write_move_delete_apply_history_blame_and_revert(self):
        name = f"w/{new_request_id()[:10]}.txt"
        created = await self.c.write(name, "one\ntwo\n", mode="create")
        self.assertTrue(created.created)
        with self.assertRaises(HashlineError) as cm:
            await self.c.write(name, "x\n", mode="create")
        self.assertEqual(cm.exception.reason, "ALREADY_EXISTS")
        r = await self.c.read(name)
        await self.c.apply([{"edit": {"path": name, "edits": [edits.replace(r.lines[1], "TWO")]}},
                            {"write": {"path": name + ".b", "content": "b\n"}}])
        with self.assertRaises(ValueError):
            await self.c.apply([{"write": {"path": "x", "text": "oops"}}])
        blame = await self.c.blame(name)
        self.assertEqual([(l.line.content, l.agent) for l in blame.lines], [("one", "py-aio"), ("TWO", "py-aio")])
        last = (await self.c.history(name, max_entries=1)).entries[0]
        self.assertEqual(blame.lines[1].change_id, last.change_id)
        undone = await self.c.revert(last.change_id)
        self.assertEqual(undone.reverted, last.change_id)
        # The whole change set is undone: the edit, and the file it created.
        self.assertEqual(self.server.read_file(name), "one\ntwo\n")
        self.assertFalse(os.path.exists(self.server.path(name + ".b")))
        await self.c.write(name + ".b", "b\n")
        moved = await self.c.move(name + ".b", name + ".c")
        self.assertEqual(moved.to, name + ".c")
        await self.c.delete(name + ".c")
        self.assertFalse(os.path.exists(self.server.path(name + ".c")))
        entries = [e.path async for e in self.c.list_all("w", max_entries=1)]
        self.assertIn(name, entries)
        self.assertEqual((await self.c.list("w", glob=os.path.basename(name))).entries[0].path, name)
        self.assertEqual(os.path.realpath((await self.c.status()).root), os.path.realpath(self.server.root))

    async def test_grep_streams_files_in_path_order_then_the_summary(self):
        g = self.c.grep("TODO", context=1)
        self.assertIsInstance(g, AsyncGrepStream)
        files = [f async for f in g]
        self.assertEqual([f.path for f in files], ["a.py", "notes/todo.txt"])
        self.assertEqual([(l.number, l.match) for l in files[1].lines], [(1, True), (2, False), (3, True)])
        self.assertEqual((g.summary.matches, g.summary.files_matched), (3, 2))
        files, summary = await self.c.grep("todo", glob="*.txt", case_insensitive=True).collect()
        self.assertEqual([f.path for f in files], ["notes/todo.txt"])
        self.assertEqual(summary.matches, 2)
        with self.assertRaises(HashlineError) as cm:
            await self.c.grep("(").collect()
        self.assertEqual(cm.exception.reason, "INVALID_PATTERN")

    async def test_grep_left_early_is_cancelled(self):
        async with self.c.grep("TODO") as g:
            async for first in g:
                break
        self.assertEqual(first.path, "a.py")
        self.assertIsNone(g.summary)
        g = self.c.grep("TODO")
        self.assertEqual((await g.__anext__()).path, "a.py")
        g.cancel()
        with self.assertRaises(HashlineError) as cm:
            await g.__anext__()
        self.assertEqual(cm.exception.code, grpc.StatusCode.CANCELLED)

    async def test_watch_delivers_changes_until_cancelled(self):
        name = f"watched/{new_request_id()[:8]}.txt"
        w = self.c.watch("watched")
        self.assertIsInstance(w, AsyncWatchStream)
        await w.wait_ready()
        events = []
        two = asyncio.Event()

        async def collect():
            async for ev in w:
                events.append(ev)
                if len(events) == 2:
                    two.set()

        reader = asyncio.create_task(collect())
        writer = AsyncClient(self.server.addr, agent="writer")
        self.addAsyncCleanup(writer.close)
        await writer.write(name, "one\n")
        r = await writer.read(name)
        await writer.edit(name, [edits.replace(r.lines[0], "ONE")])
        await asyncio.wait_for(two.wait(), 20)
        w.cancel()
        await asyncio.wait_for(reader, 10)  # the loop ended quietly
        self.assertEqual([(e.path, e.kind) for e in events],
                         [(name, WatchEventKind.Value("WATCH_EVENT_KIND_CREATED")),
                          (name, WatchEventKind.Value("WATCH_EVENT_KIND_MODIFIED"))])
        self.assertEqual(events[1].agent, "writer")

    async def test_cancelling_the_task_that_reads_a_watch_ends_the_subscription(self):
        w = self.c.watch("")
        await w.wait_ready()
        reader = asyncio.create_task(w.__anext__())
        await asyncio.sleep(0)  # the reader is waiting for an event
        reader.cancel()
        with self.assertRaises(asyncio.CancelledError):
            await reader
        # The stream is over: a loop over it ends without waiting for an
        # event that would come, and the client goes on serving calls.
        after = await asyncio.wait_for(self._drain(w), 10)
        self.assertEqual(after, [])
        await self.c.write(f"after-{new_request_id()[:8]}.txt", "x\n")

    async def _drain(self, w):
        return [ev async for ev in w]

    async def test_coroutines_share_one_client(self):
        names = [self.new_file(f"{i}\n") for i in range(8)]

        async def agent(name: str, i: int):
            for n in range(3):
                r = await self.c.read(name)
                await self.c.edit(name, [edits.insert_after(r.lines[-1], f"{i}.{n}")], base_version=r.version)
            return (await self.c.read(name)).total_lines

        got = await asyncio.gather(*(agent(name, i) for i, name in enumerate(names)))
        self.assertEqual(got, [4] * 8)
        for i, name in enumerate(names):
            self.assertEqual(self.server.read_file(name), f"{i}\n{i}.0\n{i}.1\n{i}.2\n")


def _lost(code: grpc.StatusCode) -> grpc.aio.AioRpcError:
    return grpc.aio.AioRpcError(code, grpc.aio.Metadata(), grpc.aio.Metadata(), details="the answer was lost")


class _Lossy(common.LosePlan, grpc.aio.UnaryUnaryClientInterceptor):
    """Loses the answers of the calls that change files as the plan says."""

    async def intercept_unary_unary(self, continuation, details, request):
        code = self.take(details, request)
        call = await continuation(details, request)
        if code is None:
            return call
        await call  # the server applied it; the answer is lost on the way
        raise _lost(code)


class AsyncRetryTest(common.WithServer, unittest.IsolatedAsyncioTestCase):

    async def lossy(self, plan, retry=common.FAST_RETRY, **kw):
        lose = _Lossy(plan)
        c = AsyncClient(self.server.addr, agent="lossy", interceptors=[lose], retry=retry, **kw)
        self.addAsyncCleanup(c.close)
        return c, lose

    def file(self, content: str) -> str:
        return common.new_named_file(self.server, content)

    async def test_a_lost_answer_is_retried_under_one_request_id_and_metadata_and_applied_once(self):
        traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
        for what, plan in [("UNAVAILABLE", [grpc.StatusCode.UNAVAILABLE]),
                           ("DEADLINE_EXCEEDED", [grpc.StatusCode.DEADLINE_EXCEEDED]),
                           ("twice in a row", [grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED])]:
            with self.subTest(what):
                name = self.file("start\n")
                contexts = []

                def trace_context():
                    contexts.append(1)
                    return {"Traceparent": traceparent}

                c, lose = await self.lossy(plan, trace_context=trace_context)
                resp = await c.edit(name, [edits.append("one")])
                self.assertEqual(self.server.read_file(name), "start\none\n")
                self.assertEqual(resp.total_lines, 2)
                ids = lose.ids
                self.assertEqual(len(ids), len(plan) + 1)
                self.assertRegex(ids[0], r"^[0-9a-f]{32}$")
                self.assertEqual(set(ids), {ids[0]}, "the retries changed the request id")
                for md in lose.metadata:
                    self.assertEqual((md.get("x-agent-id"), md.get("traceparent")), ("lossy", traceparent))
                self.assertEqual(len(contexts), 1, "the trace context is asked once per call, not per attempt")

    async def test_every_change_is_retried_under_a_request_id(self):
        c, lose = await self.lossy([grpc.StatusCode.UNAVAILABLE, None] * 4)
        created = await c.write(f"new{new_request_id()[:8]}.txt", "x\n", mode="create")
        self.assertTrue(created.created, "a create whose answer was lost is answered as created, not ALREADY_EXISTS")
        name = self.file("m\n")
        await c.move(name, name + ".moved")
        await c.delete(name + ".moved")
        self.assertFalse(os.path.exists(self.server.path(name + ".moved")))
        a = self.file("a\n")
        await c.apply([{"edit": {"path": a, "edits": [edits.append("b")]}}])
        self.assertEqual(self.server.read_file(a), "a\nb\n")
        ids = lose.ids
        self.assertEqual(len(ids), 8)
        for i in range(0, 8, 2):
            self.assertRegex(ids[i], r"^[0-9a-f]{32}$")
            self.assertEqual(ids[i], ids[i + 1])
        self.assertEqual(len(set(ids)), 4, "each call has its own request id")

    async def test_without_retries_a_lost_answer_raises_and_the_callers_request_id_applies_once(self):
        name = self.file("start\n")
        c, lose = await self.lossy([grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.DEADLINE_EXCEEDED], retry=NO_RETRY)
        with self.assertRaises(HashlineError) as cm:
            await c.edit(name, [edits.append("one")])
        self.assertEqual(cm.exception.code, grpc.StatusCode.DEADLINE_EXCEEDED)
        self.assertEqual(self.server.read_file(name), "start\none\n")
        rid = new_request_id()
        with self.assertRaises(HashlineError):
            await c.edit(name, [edits.append("two")], request_id=rid)
        resp = await c.edit(name, [edits.append("two")], request_id=rid)
        self.assertEqual(resp.total_lines, 3)
        self.assertEqual(self.server.read_file(name), "start\none\ntwo\n")
        self.assertEqual(lose.ids, ["", rid, rid])

    async def test_other_errors_are_answers(self):
        name = self.file("start\n")
        c, lose = await self.lossy([])
        with self.assertRaises(HashlineError) as cm:
            await c.edit(name, [edits.replace("1:zz", "x")])
        self.assertEqual(cm.exception.reason, "NOT_READ")
        self.assertEqual(len(lose.ids), 1)

    async def test_a_server_that_is_down_is_unavailable_after_the_retries(self):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        async with AsyncClient(f"127.0.0.1:{port}", retry=common.FAST_RETRY) as c:
            with self.assertRaises(HashlineError) as cm:
                await c.status()
            self.assertEqual((cm.exception.code, cm.exception.reason), (grpc.StatusCode.UNAVAILABLE, ""))
            with self.assertRaises(HashlineError) as cm:
                await c.grep("x").collect()
            self.assertEqual(cm.exception.code, grpc.StatusCode.UNAVAILABLE)


class AsyncWorkspaceTest(unittest.IsolatedAsyncioTestCase):
    def setUp(self):
        # Outside the event loop: starting hashlined blocks.
        d = tempfile.mkdtemp(prefix="hl-tok-")
        self.addCleanup(shutil.rmtree, d, True)
        tokens = os.path.join(d, "tokens.yaml")
        with open(tokens, "w") as f:
            f.write("tokens:\n  - token: 0123456789abcdef0123\n    agent: a\n    permission: write\n")
        os.chmod(tokens, 0o600)
        self.server = Server({"f.txt": "one\n"}, "--workspace", "alpha", "--tokens", tokens)
        self.addCleanup(self.server.stop)

    async def test_the_workspace_header_and_token_are_sent(self):
        server = self.server
        async with AsyncClient(server.addr, token="0123456789abcdef0123", workspace="alpha") as c:
            self.assertEqual((await c.status()).workspace, "alpha")
        async with AsyncClient(server.addr, token="0123456789abcdef0123", workspace="beta", retry=NO_RETRY) as c:
            with self.assertRaises(HashlineError) as cm:
                await c.write("f.txt", "two\n")
        self.assertEqual(cm.exception.reason, "WRONG_WORKSPACE")
        async with AsyncClient(server.addr, workspace="alpha", retry=NO_RETRY) as c:
            with self.assertRaises(HashlineError) as cm:
                await c.read("f.txt")
        self.assertEqual(cm.exception.code, grpc.StatusCode.UNAUTHENTICATED)
        self.assertEqual(server.read_file("f.txt"), "one\n")
        with self.assertRaisesRegex(ValueError, "upper case"):
            AsyncClient(server.addr, workspace="Alpha")


class AsyncUnixSocketTest(unittest.IsolatedAsyncioTestCase):
    def setUp(self):
        d = tempfile.mkdtemp(prefix="hl-sock-")
        self.addCleanup(shutil.rmtree, d, True)
        self.sock = os.path.join(d, "h.sock")
        server = Server({"f.txt": "sock\n"}, "--listen", f"unix://{self.sock}")
        self.addCleanup(server.stop)

    async def test_unix_socket(self):
        async with AsyncClient(f"unix://{self.sock}", agent="u") as c:
            self.assertEqual((await c.read("f.txt")).lines[0].content, "sock")


if __name__ == "__main__":
    unittest.main()
