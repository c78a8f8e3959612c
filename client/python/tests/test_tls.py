"""TLS and mutual TLS against the real hashlined, with certificates made by
the repository's internal/testpki for this run."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import tempfile
import time
import unittest

import grpc

from tests.server import REPO_ROOT, Server

from hashline_client import DEFAULT_RETRY, NO_RETRY, TLS, AsyncClient, Client, HashlineError


class TLSTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="hashline-py-pki-")
        out = subprocess.run(["go", "run", "./internal/testpki/cmd/testpki", cls.dir], cwd=REPO_ROOT,
                             check=True, capture_output=True, text=True).stdout
        cls.pki = json.loads(out)
        files = {"f.txt": "secure\n"}
        p = cls.pki
        cls.tls = Server(files, "--tls-cert", p["ServerCert"], "--tls-key", p["ServerKey"])
        cls.mtls = Server(files, "--tls-cert", p["ServerCert"], "--tls-key", p["ServerKey"], "--tls-client-ca", p["CA"])

    @classmethod
    def tearDownClass(cls):
        cls.tls.stop()
        cls.mtls.stop()
        shutil.rmtree(cls.dir, ignore_errors=True)

    def read_once(self, target, tls, retry=NO_RETRY):
        with Client(target, tls=tls, timeout=10, retry=retry) as c:
            return c.read("f.txt").lines[0].content

    def test_a_private_ca_over_https(self):
        self.assertEqual(self.read_once(f"https://{self.tls.addr}", TLS(ca_file=self.pki["CA"])), "secure")

    def test_tls_makes_a_host_port_target_tls_and_takes_the_pem_itself(self):
        with open(self.pki["CA"], "rb") as f:
            ca = f.read()
        self.assertEqual(self.read_once(self.tls.addr, TLS(ca=ca, server_name="localhost")), "secure")

    def test_mutual_tls(self):
        p = self.pki
        self.assertEqual(self.read_once(f"https://{self.mtls.addr}", TLS(ca_file=p["CA"], cert_file=p["ClientCert"], key_file=p["ClientKey"])), "secure")

    def test_mismatches_are_unavailable_and_not_retried(self):
        p = self.pki
        for name, target, tls in [
            ("no CA for a private one", f"https://{self.tls.addr}", None),
            ("the wrong CA", f"https://{self.tls.addr}", TLS(ca_file=p["OtherCA"])),
            ("a server name the certificate lacks", f"https://{self.tls.addr}", TLS(ca_file=p["CA"], server_name="hashlined.example")),
        ]:
            with self.subTest(name):
                t0 = time.monotonic()
                with self.assertRaises(HashlineError) as cm:
                    # The default policy would wait about 1.5 s over its
                    # retries: a named mismatch fails the same every time.
                    self.read_once(target, tls, retry=DEFAULT_RETRY)
                self.assertEqual(cm.exception.code, grpc.StatusCode.UNAVAILABLE)
                self.assertLess(time.monotonic() - t0, 1.0, "retried")

    def test_mutual_tls_without_a_client_certificate_is_refused(self):
        with self.assertRaises(HashlineError) as cm:
            self.read_once(f"https://{self.mtls.addr}", TLS(ca_file=self.pki["CA"]))
        self.assertEqual(cm.exception.code, grpc.StatusCode.UNAVAILABLE)

    def test_the_async_client_over_tls_and_mutual_tls(self):
        p = self.pki

        async def read_once(target, tls):
            async with AsyncClient(target, tls=tls, timeout=10, retry=NO_RETRY) as c:
                return (await c.read("f.txt")).lines[0].content

        mutual = TLS(ca_file=p["CA"], cert_file=p["ClientCert"], key_file=p["ClientKey"])
        self.assertEqual(asyncio.run(read_once(f"https://{self.mtls.addr}", mutual)), "secure")
        self.assertEqual(asyncio.run(read_once(self.tls.addr, TLS(ca_file=p["CA"], server_name="localhost"))), "secure")
        for name, target, tls in [("the wrong CA", f"https://{self.tls.addr}", TLS(ca_file=p["OtherCA"])),
                                  ("no client certificate", f"https://{self.mtls.addr}", TLS(ca_file=p["CA"]))]:
            with self.subTest(name):
                with self.assertRaises(HashlineError) as cm:
                    asyncio.run(read_once(target, tls))
                self.assertEqual(cm.exception.code, grpc.StatusCode.UNAVAILABLE)

    def test_settings_that_cannot_work_are_refused_when_the_client_is_made(self):
        p = self.pki
        with self.assertRaisesRegex(ValueError, "cert and key go together"):
            Client(f"https://{self.tls.addr}", tls=TLS(cert_file=p["ClientCert"]))
        with self.assertRaisesRegex(ValueError, "ca_file .*nope.pem"):
            Client(f"https://{self.tls.addr}", tls=TLS(ca_file=os.path.join(self.dir, "nope.pem")))
        with self.assertRaisesRegex(ValueError, "ca and ca_file both given"):
            Client(f"https://{self.tls.addr}", tls=TLS(ca=b"x", ca_file=p["CA"]))


if __name__ == "__main__":
    unittest.main()
