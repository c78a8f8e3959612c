"""The client carries the caller's trace context (trace_context) to the
real hashlined, which continues the trace: its spans, received by a real
OTLP receiver (internal/otlptest/otlpsink), are children of the caller's
span."""

from __future__ import annotations

import atexit
import json
import os
import queue
import re
import shutil
import subprocess
import tempfile
import threading
import time
import unittest

from tests.server import REPO_ROOT, Server

from hashline_client import Client, edits


def _sink_binary() -> str:
    """$OTLPSINK_BIN when the Makefile built it, else one built now."""
    if os.environ.get("OTLPSINK_BIN"):
        return os.environ["OTLPSINK_BIN"]
    d = tempfile.mkdtemp(prefix="otlpsink-bin-")
    atexit.register(shutil.rmtree, d, True)
    out = os.path.join(d, "otlpsink")
    subprocess.run(["go", "build", "-o", out, "./internal/otlptest/otlpsink"], cwd=REPO_ROOT, check=True)
    return out


class Sink:
    """otlpsink: an OTLP receiver that prints each span it gets as JSON."""

    def __init__(self):
        self.proc = subprocess.Popen([_sink_binary()], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.spans: list = []
        self._lock = threading.Lock()
        first: "queue.Queue[str]" = queue.Queue()
        threading.Thread(target=self._read, args=(first,), daemon=True).start()
        m = re.match(r"^otlpsink: grpc (\S+) http (\S+)$", first.get(timeout=60))
        assert m, "otlpsink did not start"
        self.grpc_addr, self.http_url = m.group(1), m.group(2)

    def _read(self, first) -> None:
        first.put(self.proc.stdout.readline().rstrip("\n"))
        for line in self.proc.stdout:
            with self._lock:
                self.spans.append(json.loads(line))

    def wait(self, done, timeout: float = 10.0) -> list:
        end = time.monotonic() + timeout
        while True:
            with self._lock:
                spans = list(self.spans)
            if done(spans) or time.monotonic() > end:
                return spans
            time.sleep(0.05)

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=30)
        self.proc.stdout.close()


TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_ID = "00f067aa0ba902b7"


class TraceContextTest(unittest.TestCase):
    def test_calls_carry_the_callers_trace_context(self):
        sink = Sink()
        self.addCleanup(sink.close)
        # OTLP over gRPC, this time (the TypeScript test sends HTTP).
        srv = Server({"a.txt": "alpha\n"}, "--otlp-endpoint", "http://" + sink.grpc_addr, "--otlp-protocol", "grpc")
        self.addCleanup(srv.stop)
        traced = Client(srv.addr, agent="py-agent", trace_context=lambda: {"traceparent": f"00-{TRACE_ID}-{PARENT_ID}-01"})
        untraced = Client(srv.addr, agent="py-agent", trace_context=lambda: None)
        try:
            r = traced.read("a.txt")
            traced.edit("a.txt", [edits.append("beta")], base_version=r.version)
            files, _ = traced.grep("alpha").collect()
            self.assertEqual(len(files), 1)
            untraced.status()
        finally:
            traced.close()
            untraced.close()
        srv.stop()  # hashlined sends its last spans as it stops

        spans = sink.wait(lambda spans: any(s["name"].endswith("/Status") for s in spans))

        def rpc(name):
            return [s for s in spans if s["name"] == "hashline.v1.FileService/" + name]

        for name in ("Read", "Edit", "Grep"):
            got = rpc(name)
            self.assertEqual(len(got), 1, f"{name} spans in {[s['name'] for s in spans]}")
            s = got[0]
            self.assertEqual(s["traceId"], TRACE_ID, name)
            self.assertEqual(s["parentSpanId"], PARENT_ID, name)
            self.assertEqual(s["attributes"]["hashline.agent"], "py-agent")
        edit = rpc("Edit")[0]
        self.assertTrue(any(s["name"] == "hashline.commit" and s["parentSpanId"] == edit["spanId"] for s in spans))
        status = rpc("Status")
        self.assertEqual(len(status), 1)
        self.assertEqual(status[0]["parentSpanId"], "", "a call without trace context starts a trace")
        self.assertNotEqual(status[0]["traceId"], TRACE_ID)


if __name__ == "__main__":
    unittest.main()
