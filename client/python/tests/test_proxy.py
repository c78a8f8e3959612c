"""A proxy's HTTP error page in place of hashlined's answer (an Ingress
controller's default backend): a client given a workspace names it."""

from __future__ import annotations

import unittest
from concurrent import futures

import grpc

from tests.server import REPO_ROOT  # noqa: F401  (puts the package on sys.path)
from tests.proxypage import ProxyPage

from hashline_client import NO_RETRY, AsyncClient, Client, HashlineError, RetryPolicy, edits

RETRY_ONCE = RetryPolicy(max_attempts=2, initial_backoff=0.001, max_backoff=0.001, multiplier=1)

CALLS = [
    ("read", lambda c: c.read("f.txt")),
    ("edit", lambda c: c.edit("f.txt", [edits.append("x")])),
    ("grep", lambda c: c.grep("x").collect()),
    ("status", lambda c: c.status()),
    ("watch", lambda c: next(c.watch())),
]


class ProxyTest(unittest.TestCase):
    def test_a_proxys_http_error_names_the_workspace(self):
        for status, workspace, code, says, attempts in [
            (404, "zeta", grpc.StatusCode.NOT_FOUND,
             ['no workspace "zeta" behind this router (the proxy answered HTTP 404 Not Found, not a hashlined); '
              "nothing was done. Check the workspace name"], 1),
            (503, "zeta", grpc.StatusCode.UNAVAILABLE,
             ['workspace "zeta"\'s hashlined is down, restarting or not answering (the proxy answered HTTP 503 '
              "Service Unavailable, not a hashlined). Retry in a few seconds"], 2),
            (502, "zeta", grpc.StatusCode.UNAVAILABLE, ['workspace "zeta"\'s hashlined', "HTTP 502 Bad Gateway"], 2),
            (504, "zeta", grpc.StatusCode.UNAVAILABLE, ['workspace "zeta"\'s hashlined', "HTTP 504 Gateway Timeout"], 2),
            # Without a workspace, or for a status that says nothing of it,
            # gRPC's code and words stay.
            (404, "", grpc.StatusCode.UNIMPLEMENTED, [], 1),
            (403, "zeta", grpc.StatusCode.PERMISSION_DENIED, [], 1),
        ]:
            with self.subTest(status=status, workspace=workspace):
                page = ProxyPage(status)
                self.addCleanup(page.stop)
                with Client(page.addr, workspace=workspace, retry=RETRY_ONCE, timeout=30) as c:
                    for name, call in CALLS:
                        before = page.hits()
                        with self.assertRaises(HashlineError, msg=name) as cm:
                            call(c)
                        e = cm.exception
                        self.assertEqual(e.code, code, f"{name}: {e}")
                        self.assertEqual(e.http_status, status, name)
                        self.assertEqual(e.reason, "", name)
                        for s in says + [f"Received http2 header with status: {status}"]:
                            self.assertIn(s, e.message, name)
                            self.assertIn(s, str(e), name)
                        if not workspace:
                            self.assertNotIn("behind this router", e.message, name)
                        # watch is never retried.
                        self.assertEqual(page.hits() - before, 1 if name == "watch" else attempts, f"{name}: attempts")

    def test_a_servers_unimplemented_is_not_a_proxys_404(self):
        # A gRPC server without the FileService, as an older hashlined
        # lacking an RPC: its own UNIMPLEMENTED stays.
        server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
        port = server.add_insecure_port("127.0.0.1:0")
        server.start()
        self.addCleanup(server.stop, None)
        with Client(f"127.0.0.1:{port}", workspace="alpha", retry=NO_RETRY) as c:
            with self.assertRaises(HashlineError) as cm:
                c.read("f.txt")
        e = cm.exception
        self.assertEqual(e.code, grpc.StatusCode.UNIMPLEMENTED)
        self.assertEqual(e.http_status, 0)
        self.assertNotIn("alpha", e.message)


async def _first_event(c):
    async for ev in c.watch():
        return ev


ASYNC_CALLS = [
    ("read", lambda c: c.read("f.txt")),
    ("edit", lambda c: c.edit("f.txt", [edits.append("x")])),
    ("grep", lambda c: c.grep("x").collect()),
    ("status", lambda c: c.status()),
    ("watch", _first_event),
]


class AsyncProxyTest(unittest.IsolatedAsyncioTestCase):
    async def test_a_proxys_http_error_names_the_workspace(self):
        # AsyncClient shares the sync client's error translation: the same
        # page gives the same error, through every kind of call.
        for status, code, says, attempts in [
            (404, grpc.StatusCode.NOT_FOUND, 'no workspace "zeta" behind this router', 1),
            (503, grpc.StatusCode.UNAVAILABLE, 'workspace "zeta"\'s hashlined is down', 2),
        ]:
            with self.subTest(status=status):
                page = ProxyPage(status)
                self.addCleanup(page.stop)
                async with AsyncClient(page.addr, workspace="zeta", retry=RETRY_ONCE, timeout=30) as c:
                    for name, call in ASYNC_CALLS:
                        before = page.hits()
                        with self.assertRaises(HashlineError, msg=name) as cm:
                            await call(c)
                        e = cm.exception
                        self.assertEqual(e.code, code, f"{name}: {e}")
                        self.assertEqual(e.http_status, status, name)
                        self.assertIn(says, e.message, name)
                        self.assertEqual(page.hits() - before, 1 if name == "watch" else attempts, f"{name}: attempts")


if __name__ == "__main__":
    unittest.main()
