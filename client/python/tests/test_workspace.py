"""The workspace a client names: the x-hashline-workspace header, which a
hashlined started with --workspace checks, and the host of
workspace_domain."""

from __future__ import annotations

import os
import unittest

import grpc

from tests.server import Server
from hashline_client import NO_RETRY, Client, ErrorReason, HashlineError, workspace_name_error


class WorkspaceTest(unittest.TestCase):
    def test_a_server_serving_another_workspace_refuses_and_writes_nothing(self):
        server = Server({"f.txt": "one\n"}, "--workspace", "alpha")
        self.addCleanup(server.stop)
        with Client(server.addr, agent="a", workspace="alpha") as c:
            self.assertEqual(c.status().workspace, "alpha")
        # The host alpha.hashline.test, while dialling the server's address.
        with Client(server.addr, agent="a", workspace="alpha", workspace_domain="hashline.test") as c:
            self.assertEqual(c.read("f.txt").lines[0].content, "one")
        with Client(server.addr, agent="a", workspace="beta", retry=NO_RETRY) as c:
            with self.assertRaises(HashlineError) as cm:
                c.write("f.txt", "two\n")
        e = cm.exception
        self.assertEqual(e.code, grpc.StatusCode.FAILED_PRECONDITION)
        self.assertEqual(e.reason, "WRONG_WORKSPACE")
        self.assertTrue(e.has_reason(ErrorReason.ERROR_REASON_WRONG_WORKSPACE))
        self.assertIn('serves workspace "alpha", not "beta"', e.message)
        with open(os.path.join(server.root, "f.txt"), encoding="utf-8") as f:
            self.assertEqual(f.read(), "one\n")

    def test_names_that_are_not_names_are_refused(self):
        for name, want in [("../alpha", "path syntax"), ("alpha.hashline.test", "host syntax"),
                           ("alpha:7420", "host syntax"), ("Alpha", "upper case"), ("x" * 64, "at most 63"),
                           ("", "empty"), ("-a", "starting and ending")]:
            self.assertIn(want, workspace_name_error(name) or "", name)
            if name:
                with self.assertRaisesRegex(ValueError, want):
                    Client("127.0.0.1:1", workspace=name)
        self.assertIsNone(workspace_name_error("ws-1"))
        with self.assertRaisesRegex(ValueError, "needs workspace"):
            Client("127.0.0.1:1", workspace_domain="hashline.test")
        with self.assertRaisesRegex(ValueError, "want a domain"):
            Client("127.0.0.1:1", workspace="a", workspace_domain="hashline.test/x")


if __name__ == "__main__":
    unittest.main()
