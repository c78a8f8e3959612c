"""The client against the real hashlined: every call, stale references
with their fresh tags, retries under one request id, tokens, unix sockets."""

from __future__ import annotations

import os
import re
import socket
import tempfile
import threading
import time
import unittest

import grpc

from tests import common
from tests.server import Server

from hashline_client import (
    DEFAULT_RETRY,
    NO_RETRY,
    Client,
    EntryType,
    ErrorReason,
    HashlineError,
    RetryPolicy,
    StaleRefError,
    StaleRefReason,
    WatchEventKind,
    edits,
    new_request_id,
    ref,
    stale_ref_reason,
)


class CallsTest(common.WithServer, unittest.TestCase):
    files = common.CALLS_FILES

    def setUp(self):
        self.c = Client(self.server.addr, agent="py-test")
        self.addCleanup(self.c.close)
        self.n = getattr(self, "n", 0)

    def new_file(self, content: str) -> str:
        return common.new_file(self.server, content)

    def test_read_returns_version_and_tagged_lines(self):
        r = self.c.read("main.go")
        self.assertTrue(r.version.startswith("v"), r.version)
        self.assertEqual(r.total_lines, 5)
        self.assertEqual([l.number for l in r.lines], [1, 2, 3, 4, 5])
        self.assertEqual(r.lines[3].content, '\tprintln("hi")')
        self.assertRegex(r.lines[3].hash, r"^[0-9a-f]{2}$")
        self.assertTrue(r.text.startswith(f"1:{r.lines[0].hash}|package main\n"), r.text)
        page = self.c.read("main.go", offset=2, limit=2)
        self.assertEqual([l.number for l in page.lines], [2, 3])
        self.assertTrue(page.truncated)
        self.assertEqual(page.next_offset, 4)

    def test_read_of_a_missing_file_is_not_found(self):
        with self.assertRaises(HashlineError) as cm:
            self.c.read("nope.txt")
        e = cm.exception
        self.assertEqual(e.code, grpc.StatusCode.NOT_FOUND)
        self.assertEqual(e.reason, "NOT_FOUND")
        self.assertTrue(e.has_reason(ErrorReason.Value("ERROR_REASON_NOT_FOUND")))
        self.assertTrue(e.has_reason("NOT_FOUND"))
        self.assertEqual(e.reason_value, ErrorReason.Value("ERROR_REASON_NOT_FOUND"))
        self.assertNotIsInstance(e, StaleRefError)
        self.assertIn("NOT_FOUND (NOT_FOUND)", str(e))

    def test_edit_with_every_builder(self):
        name = self.new_file(common.BUILDERS_BEFORE)
        r = self.c.read(name)
        resp = self.c.edit(name, common.every_builder(r.lines))
        self.assertEqual(self.server.read_file(name), common.BUILDERS_AFTER)
        self.assertEqual(resp.total_lines, 7)
        self.assertNotEqual(resp.version, r.version)
        resp = self.c.edit(name, [edits.replace_text("c2", "C2")])
        self.assertEqual(self.server.read_file(name), "start\na\nB\nb2\nc\nC2\nend\n")
        r = self.c.read(name)
        self.c.edit(name, [edits.replace(r.lines[0], "S", end=ref(r.lines[1])), edits.delete(r.lines[5], r.lines[6])])
        self.assertEqual(self.server.read_file(name), "S\nB\nb2\nc\n")

    def test_dry_run_writes_nothing(self):
        name = self.new_file("a\n")
        resp = self.c.edit(name, [edits.append("b")], dry_run=True)
        self.assertTrue(resp.dry_run)
        self.assertEqual(self.server.read_file(name), "a\n")

    def test_stale_ref_carries_fresh_tags_and_the_retry_from_them_lands(self):
        name = self.new_file('def greet(name):\n    return "hello " + name\n')
        bob = Client(self.server.addr, agent="bob")
        self.addCleanup(bob.close)
        seen = bob.read(name)
        self.c.read(name)
        self.c.edit(name, [edits.replace("2:" + seen.lines[1].hash, '    return f"hello {name}"')])
        with self.assertRaises(StaleRefError) as cm:
            bob.edit(name, [edits.replace(seen.lines[1], '    return "hi " + name')])
        e = cm.exception
        self.assertEqual(e.code, grpc.StatusCode.ABORTED)
        self.assertEqual(e.reason, "STALE_REF")
        self.assertEqual(len(e.refs), 1)
        stale = e.refs[0]
        self.assertEqual(stale.line, 2)
        self.assertEqual(stale.expected_hash, seen.lines[1].hash)
        self.assertNotEqual(stale.actual_hash, seen.lines[1].hash)
        self.assertEqual(stale_ref_reason(stale), StaleRefReason.Value("STALE_REF_REASON_CHANGED"))
        self.assertEqual(stale.current_line, f'2:{stale.actual_hash}|    return f"hello {{name}}"')
        self.assertIn(stale.current_line, stale.fresh)
        self.assertEqual(e.current_version, self.c.read(name).version)
        self.assertIn(">>> " + stale.current_line, e.message)
        self.assertEqual(self.server.read_file(name), 'def greet(name):\n    return f"hello {name}"\n')
        bob.edit(name, [edits.replace(stale.current_line, '    return f"hi {name}"')])
        self.assertEqual(self.server.read_file(name), 'def greet(name):\n    return f"hi {name}"\n')

    def test_invalid_edit_lists_the_bad_edits(self):
        name = self.new_file("a\n")
        self.c.read(name)
        with self.assertRaises(HashlineError) as cm:
            self.c.edit(name, [edits.replace("9:zz", "x")])
        e = cm.exception
        self.assertEqual(e.code, grpc.StatusCode.INVALID_ARGUMENT)
        self.assertTrue(e.edits, e)
        self.assertEqual(e.edits[0].edit_index, 0)

    def test_write_modes_and_expected_version(self):
        name = f"w/{new_request_id()}.txt"
        resp = self.c.write(name, "one\n", mode="create")
        self.assertTrue(resp.created)
        self.assertEqual(resp.total_lines, 1)
        with self.assertRaises(HashlineError) as cm:
            self.c.write(name, "two\n", mode="create")
        self.assertEqual(cm.exception.reason, "ALREADY_EXISTS")
        with self.assertRaises(HashlineError) as cm:
            self.c.write(name, "two\n", expected_version="v2-0000")
        self.assertEqual(cm.exception.code, grpc.StatusCode.ABORTED)
        self.assertEqual(cm.exception.reason, "VERSION_MISMATCH")
        resp2 = self.c.write(name, "two\n", expected_version=resp.version)
        self.assertFalse(resp2.created)
        self.assertEqual(self.server.read_file(name), "two\n")
        with self.assertRaises(HashlineError) as cm:
            self.c.write("w/missing.txt", "x", mode="replace")
        self.assertEqual(cm.exception.reason, "NOT_FOUND")

    def test_grep_streams_files_in_path_order_then_the_summary(self):
        g = self.c.grep("TODO", context=1)
        files = list(g)
        self.assertEqual([f.path for f in files], ["a.py", "notes/todo.txt"])
        todo = files[1]
        self.assertEqual([(l.number, l.match) for l in todo.lines], [(1, True), (2, False), (3, True)])
        self.assertRegex(todo.lines[0].hash, r"^[0-9a-f]{2}$")
        self.assertEqual(g.summary.matches, 3)
        self.assertEqual(g.summary.files_matched, 2)
        files, summary = self.c.grep("todo", glob="*.txt", case_insensitive=True).collect()
        self.assertEqual([f.path for f in files], ["notes/todo.txt"])
        self.assertEqual(summary.matches, 2)
        with self.assertRaises(HashlineError) as cm:
            list(self.c.grep("("))
        self.assertEqual(cm.exception.reason, "INVALID_PATTERN")

    def test_grep_left_early_can_be_cancelled(self):
        with self.c.grep("TODO") as g:
            first = next(g)
        self.assertEqual(first.path, "a.py")
        self.assertIsNone(g.summary)

    def test_list_and_list_all(self):
        root = f"l{new_request_id()[:8]}"
        for i in range(5):
            self.c.write(f"{root}/f{i}.txt", f"{i}\n")
        self.c.write(f"{root}/sub/g.txt", "g\n")
        page = self.c.list(root)
        self.assertEqual([e.path for e in page.entries], [f"{root}/f{i}.txt" for i in range(5)] + [f"{root}/sub"])
        self.assertEqual(page.entries[-1].type, EntryType.Value("ENTRY_TYPE_DIR"))
        page = self.c.list(root, max_entries=2, recursive=True)
        self.assertTrue(page.truncated)
        self.assertEqual(len(page.entries), 2)
        nxt = self.c.list(root, max_entries=2, recursive=True, page_token=page.next_page_token)
        self.assertEqual(nxt.entries[0].path, f"{root}/f2.txt")
        every = [e.path for e in self.c.list_all(root, recursive=True, max_entries=2)]
        self.assertEqual(every, [f"{root}/f{i}.txt" for i in range(5)] + [f"{root}/sub", f"{root}/sub/g.txt"])
        with_versions = list(self.c.list_all(root, glob="*.txt", include_versions=True))
        self.assertTrue(all(e.version for e in with_versions), with_versions)

    def test_delete_and_move(self):
        name = self.new_file("x\n")
        r = self.c.read(name)
        moved = self.c.move(name, f"moved/{name}")
        self.assertEqual(getattr(moved, "from"), name)
        self.assertEqual(moved.to, f"moved/{name}")
        self.assertFalse(os.path.exists(self.server.path(name)))
        # The references read before the move hold at the new path.
        self.c.edit(f"moved/{name}", [edits.replace(r.lines[0], "y")])
        self.assertEqual(self.server.read_file(f"moved/{name}"), "y\n")
        other = self.new_file("o\n")
        with self.assertRaises(HashlineError) as cm:
            self.c.move(other, f"moved/{name}")
        self.assertEqual(cm.exception.reason, "ALREADY_EXISTS")
        self.c.move(other, f"moved/{name}", overwrite=True)
        self.assertEqual(self.server.read_file(f"moved/{name}"), "o\n")
        with self.assertRaises(HashlineError) as cm:
            self.c.delete("moved")
        self.assertEqual(cm.exception.reason, "DIRECTORY_NOT_EMPTY")
        resp = self.c.delete(f"moved/{name}")
        self.assertFalse(resp.directory)
        self.assertFalse(os.path.exists(self.server.path(f"moved/{name}")))
        self.assertTrue(self.c.delete("moved").directory)
        with self.assertRaises(HashlineError) as cm:
            self.c.delete("moved")
        self.assertEqual(cm.exception.reason, "NOT_FOUND")

    def test_apply_is_all_or_nothing(self):
        a = self.new_file("a\n")
        b = self.new_file("b\n")
        ra = self.c.read(a)
        resp = self.c.apply([
            {"edit": {"path": a, "edits": [edits.replace(ra.lines[0], "A")]}},
            {"write": {"path": f"{a}.new", "content": "new\n", "mode": "create"}},
            {"move": {"from": b, "to": f"{b}.moved"}},
        ])
        self.assertEqual([r.WhichOneof("result") for r in resp.results], ["edit", "write", "move"])
        self.assertTrue(resp.change_set)
        self.assertEqual(self.server.read_file(a), "A\n")
        self.assertEqual(self.server.read_file(f"{a}.new"), "new\n")
        self.assertEqual(self.server.read_file(f"{b}.moved"), "b\n")
        # A stale reference in one change refuses the set: the write of the
        # other is not done, and the error lists the failing change.
        with self.assertRaises(StaleRefError) as cm:
            self.c.apply([
                {"write": {"path": f"{a}.other", "content": "x\n"}},
                {"edit": {"path": a, "edits": [edits.replace(ra.lines[0], "again")]}},
            ])
        e = cm.exception
        self.assertEqual([(ch.change_index, ch.path, ch.reason) for ch in e.changes], [(1, a, "STALE_REF")])
        self.assertEqual(e.refs[0].change_index, 1)
        self.assertFalse(os.path.exists(self.server.path(f"{a}.other")))
        with self.assertRaises(ValueError):
            self.c.apply([{"write": {"path": "x", "text": "oops"}}])
        with self.assertRaises(ValueError):
            self.c.apply([{"edit": {"path": a}, "write": {"path": a, "content": ""}}])

    def test_revert_keeps_another_agents_change_and_refuses_one_in_its_way(self):
        p = self.new_file("one\ntwo\nthree\nfour\nfive\n")
        other = Client(self.server.addr, agent="py-other")
        self.addCleanup(other.close)
        r = self.c.read(p)
        self.c.edit(p, [edits.replace(r.lines[1], "TWO")])
        mine = self.c.history(p, max_entries=1).entries[0].change_id
        o = other.read(p)
        other.edit(p, [edits.replace(o.lines[4], "FIVE")])
        theirs = self.c.history(p, max_entries=1).entries[0].change_id

        dry = self.c.revert(mine, dry_run=True)
        self.assertTrue(dry.dry_run)
        self.assertIn("-TWO", dry.results[0].edit.tagged_diff)
        self.assertEqual(self.server.read_file(p), "one\nTWO\nthree\nfour\nFIVE\n")

        resp = self.c.revert(mine)
        self.assertEqual(resp.reverted, mine)
        self.assertEqual(self.server.read_file(p), "one\ntwo\nthree\nfour\nFIVE\n")
        h = self.c.history(p, max_entries=1).entries[0]
        self.assertEqual((h.change_id, h.reverts, h.agent), (resp.change_id, mine, "py-test"))

        # A later edit of line 5 is in the way of undoing the other agent's
        # change: refused, naming it, and nothing is written.
        now = self.c.read(p)
        self.c.edit(p, [edits.replace(now.lines[4], "5")])
        latest = self.c.history(p, max_entries=1).entries[0].change_id
        with self.assertRaises(HashlineError) as cm:
            other.revert(theirs)
        e = cm.exception
        self.assertTrue(e.has_reason(ErrorReason.ERROR_REASON_REVERT_CONFLICT), e)
        self.assertEqual(e.code, grpc.StatusCode.ABORTED)
        self.assertEqual([(l.change_id, l.agent, l.path) for l in e.later], [(latest, "py-test", p)])
        self.assertTrue(any(f.endswith("|5") for s in e.stale for f in s.fresh))
        self.assertEqual(self.server.read_file(p), "one\ntwo\nthree\nfour\n5\n")

    def test_blame_names_the_change_and_agent_of_each_line(self):
        p = self.new_file("one\ntwo\nthree\n")
        other = Client(self.server.addr, agent="py-other")
        self.addCleanup(other.close)
        r = other.read(p)
        other.edit(p, [edits.replace(r.lines[1], "TWO")])
        theirs = self.c.history(p, max_entries=1).entries[0].change_id
        b = self.c.blame(p, offset=2, limit=1)
        self.assertEqual(b.total_lines, 3)
        self.assertTrue(b.truncated)
        self.assertEqual([(l.line.number, l.line.content, l.change_id, l.agent) for l in b.lines],
                         [(2, "TWO", theirs, "py-other")])
        self.assertEqual(b.lines[0].line.hash, other.read(p).lines[1].hash)
        first = self.c.blame(p).lines[0]
        self.assertTrue(first.before_history, first)
        self.assertEqual(first.change_id, "")

    def test_status(self):
        s = self.c.status()
        self.assertEqual(os.path.realpath(s.root), os.path.realpath(self.server.root))
        self.assertGreaterEqual(s.hash_len, 2)
        self.assertTrue(s.version)

    def test_watch_delivers_changes_until_cancelled(self):
        name = f"watched/{new_request_id()[:8]}.txt"
        w = self.c.watch("watched")
        w.wait_ready()
        events = []
        done = threading.Event()

        def collect():
            for ev in w:
                events.append(ev)
                if len(events) == 2:
                    done.set()
            done.set()

        t = threading.Thread(target=collect)
        t.start()
        other = Client(self.server.addr, agent="writer")
        self.addCleanup(other.close)
        other.write(name, "one\n")
        r = other.read(name)
        other.edit(name, [edits.replace(r.lines[0], "ONE")])
        self.assertTrue(done.wait(20), "no events")
        w.cancel()
        t.join(10)
        self.assertFalse(t.is_alive(), "the loop did not end on cancel")
        self.assertEqual([(e.path, e.kind) for e in events],
                         [(name, WatchEventKind.Value("WATCH_EVENT_KIND_CREATED")), (name, WatchEventKind.Value("WATCH_EVENT_KIND_MODIFIED"))])
        self.assertEqual(events[1].agent, "writer")
        self.assertEqual(events[1].changed[0].old_start, 1)


class _Lost(grpc.RpcError, grpc.Call, grpc.Future):
    """What an intercepted call returns instead of the server's answer."""

    def __init__(self, code: grpc.StatusCode):
        self._code = code

    def code(self):
        return self._code

    def details(self):
        return "the answer was lost"

    def trailing_metadata(self):
        return ()

    def initial_metadata(self):
        return ()

    def result(self, timeout=None):
        raise self

    def exception(self, timeout=None):
        return self

    def traceback(self, timeout=None):
        return None

    def add_done_callback(self, fn):
        fn(self)

    def cancel(self):
        return False

    def cancelled(self):
        return False

    def running(self):
        return False

    def done(self):
        return True

    def is_active(self):
        return False

    def time_remaining(self):
        return None

    def add_callback(self, callback):
        return False


class _Lossy(common.LosePlan, grpc.UnaryUnaryClientInterceptor):
    """Loses the answers of the calls that change files as the plan says."""

    def intercept_unary_unary(self, continuation, details, request):
        code = self.take(details, request)
        outcome = continuation(details, request)
        return _Lost(code) if code is not None else outcome


class RetryTest(common.WithServer, unittest.TestCase):

    def lossy(self, plan, retry=common.FAST_RETRY):
        lose = _Lossy(plan)
        c = Client(self.server.addr, agent="lossy", interceptors=[lose], retry=retry)
        self.addCleanup(c.close)
        return c, lose.ids

    def file(self, content: str) -> str:
        return common.new_named_file(self.server, content)

    def test_a_lost_answer_is_retried_under_one_request_id_and_applied_once(self):
        for what, plan in [("UNAVAILABLE", [grpc.StatusCode.UNAVAILABLE]),
                           ("DEADLINE_EXCEEDED", [grpc.StatusCode.DEADLINE_EXCEEDED]),
                           ("twice in a row", [grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED])]:
            with self.subTest(what):
                name = self.file("start\n")
                c, ids = self.lossy(plan)
                resp = c.edit(name, [edits.append("one")])
                self.assertEqual(self.server.read_file(name), "start\none\n")
                self.assertEqual(resp.total_lines, 2)
                self.assertEqual(len(ids), len(plan) + 1)
                self.assertRegex(ids[0], r"^[0-9a-f]{32}$")
                self.assertEqual(set(ids), {ids[0]}, "the retries changed the request id")

    def test_every_change_is_retried_under_a_request_id(self):
        c, ids = self.lossy([grpc.StatusCode.UNAVAILABLE, None] * 4)
        created = c.write(f"new{new_request_id()[:8]}.txt", "x\n", mode="create")
        self.assertTrue(created.created, "a create whose answer was lost is answered as created, not ALREADY_EXISTS")
        name = self.file("m\n")
        c.move(name, name + ".moved")
        self.assertEqual(self.server.read_file(name + ".moved"), "m\n")
        c.delete(name + ".moved")
        self.assertFalse(os.path.exists(self.server.path(name + ".moved")))
        a = self.file("a\n")
        c.apply([{"edit": {"path": a, "edits": [edits.append("b")]}}])
        self.assertEqual(self.server.read_file(a), "a\nb\n")
        self.assertEqual(len(ids), 8)
        for i in range(0, 8, 2):
            self.assertRegex(ids[i], r"^[0-9a-f]{32}$")
            self.assertEqual(ids[i], ids[i + 1])
        self.assertEqual(len(set(ids)), 4, "each call has its own request id")

    def test_without_retries_a_lost_answer_raises_although_the_edit_landed(self):
        name = self.file("start\n")
        c, ids = self.lossy([grpc.StatusCode.DEADLINE_EXCEEDED], retry=NO_RETRY)
        with self.assertRaises(HashlineError) as cm:
            c.edit(name, [edits.append("one")])
        self.assertEqual(cm.exception.code, grpc.StatusCode.DEADLINE_EXCEEDED)
        self.assertEqual(self.server.read_file(name), "start\none\n")
        self.assertEqual(ids, [""])

    def test_a_caller_that_retries_itself_with_its_request_id_applies_once(self):
        name = self.file("start\n")
        c, _ = self.lossy([grpc.StatusCode.DEADLINE_EXCEEDED], retry=NO_RETRY)
        rid = new_request_id()
        with self.assertRaises(HashlineError):
            c.edit(name, [edits.append("one")], request_id=rid)
        resp = c.edit(name, [edits.append("one")], request_id=rid)
        self.assertEqual(self.server.read_file(name), "start\none\n")
        self.assertEqual(resp.total_lines, 2)
        with self.assertRaises(HashlineError) as cm:
            c.edit(name, [edits.append("two")], request_id=rid)
        self.assertEqual(cm.exception.code, grpc.StatusCode.INVALID_ARGUMENT)
        self.assertEqual(cm.exception.reason, "REQUEST_ID_REUSED")

    def test_a_dry_run_carries_no_request_id(self):
        name = self.file("start\n")
        c, ids = self.lossy([])
        c.edit(name, [edits.append("one")], dry_run=True)
        self.assertEqual(ids, [""])
        self.assertEqual(self.server.read_file(name), "start\n")

    def test_other_errors_are_answers(self):
        name = self.file("start\n")
        c, ids = self.lossy([])
        with self.assertRaises(HashlineError):
            c.edit(name, [edits.replace("1:zz", "x")])
        self.assertEqual(len(ids), 1)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ConnectTest(unittest.TestCase):
    def test_calls_before_the_server_listens_are_retried(self):
        port = _free_port()
        attempts = []

        class Count(grpc.UnaryUnaryClientInterceptor):
            def intercept_unary_unary(self, continuation, details, request):
                attempts.append(details.method)
                return continuation(details, request)

        # Retries until the 30 s deadline, however long the server takes to start.
        c = Client(f"127.0.0.1:{port}", interceptors=[Count()],
                   retry=RetryPolicy(max_attempts=1000, initial_backoff=0.05, max_backoff=0.2))
        self.addCleanup(c.close)
        out = {}

        def read():
            try:
                out["r"] = c.read("f.txt")
            except Exception as e:  # reported below
                out["err"] = e

        t = threading.Thread(target=read)
        t.start()
        while len(attempts) < 3 and t.is_alive():
            time.sleep(0.01)
        server = Server({"f.txt": "one\n"}, "--listen", f"127.0.0.1:{port}")
        self.addCleanup(server.stop)
        t.join(40)
        self.assertNotIn("err", out)
        self.assertEqual(out["r"].lines[0].content, "one")
        self.assertGreater(len(attempts), 3)

    def test_a_server_that_is_down_is_unavailable_after_the_retries(self):
        c = Client(f"127.0.0.1:{_free_port()}", retry=common.FAST_RETRY)
        self.addCleanup(c.close)
        t0 = time.monotonic()
        with self.assertRaises(HashlineError) as cm:
            c.status()
        self.assertEqual(cm.exception.code, grpc.StatusCode.UNAVAILABLE)
        self.assertEqual(cm.exception.reason, "")
        self.assertLess(time.monotonic() - t0, 10)

    def test_unix_socket(self):
        d = tempfile.mkdtemp(prefix="hl-sock-")
        sock = os.path.join(d, "h.sock")
        server = Server({"f.txt": "sock\n"}, "--listen", f"unix://{sock}")
        self.addCleanup(server.stop)
        with Client(f"unix://{sock}", agent="u") as c:
            self.assertEqual(c.read("f.txt").lines[0].content, "sock")

    def test_token(self):
        tokens = os.path.join(tempfile.mkdtemp(prefix="hl-tok-"), "tokens.yaml")
        with open(tokens, "w") as f:
            f.write("tokens:\n  - token: 0123456789abcdef0123\n    agent: a\n    permission: read\n")
        os.chmod(tokens, 0o600)
        server = Server({"f.txt": "secret\n"}, "--tokens", tokens)
        self.addCleanup(server.stop)
        with Client(f"http://{server.addr}", token="0123456789abcdef0123") as c:
            self.assertEqual(c.read("f.txt").lines[0].content, "secret")
            with self.assertRaises(HashlineError) as cm:
                c.write("f.txt", "x\n")
            self.assertEqual(cm.exception.code, grpc.StatusCode.PERMISSION_DENIED)
        for token in ("", "wrong-token-wrong-token"):
            with Client(server.addr, token=token, retry=NO_RETRY) as c:
                with self.assertRaises(HashlineError) as cm:
                    c.read("f.txt")
                self.assertEqual(cm.exception.code, grpc.StatusCode.UNAUTHENTICATED, token)
                self.assertEqual(cm.exception.reason, "UNAUTHENTICATED")

    def test_bad_targets(self):
        from hashline_client import TLS
        for target, tls, msg in [("http://127.0.0.1:1", TLS(), "plaintext"),
                                 ("https://127.0.0.1:1/x", None, "want https://host:port"),
                                 ("unix:///tmp/x.sock", TLS(), "unix socket")]:
            with self.subTest(target):
                with self.assertRaisesRegex(ValueError, re.escape(msg)):
                    Client(target, tls=tls)


if __name__ == "__main__":
    unittest.main()
