"""Helpers that build and run the real hashlined for the tests."""

from __future__ import annotations

import atexit
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from typing import Dict, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE_ROOT = os.path.dirname(HERE)  # client/python
REPO_ROOT = os.path.dirname(os.path.dirname(PACKAGE_ROOT))
sys.path.insert(0, os.path.join(PACKAGE_ROOT, "src"))

_built: Optional[str] = None


def hashlined_binary() -> str:
    """$HASHLINED_BIN when the Makefile built it, else one built now with go
    into a temporary directory."""
    global _built
    if os.environ.get("HASHLINED_BIN"):
        return os.environ["HASHLINED_BIN"]
    if _built is None:
        d = tempfile.mkdtemp(prefix="hashlined-bin-")
        atexit.register(shutil.rmtree, d, True)
        out = os.path.join(d, "hashlined")
        subprocess.run(["go", "build", "-o", out, "./cmd/hashlined"], cwd=REPO_ROOT, check=True)
        _built = out
    return _built


def write_files(root: str, files: Dict[str, str]) -> None:
    for name, content in files.items():
        p = os.path.join(root, name)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w", encoding="utf-8", newline="") as f:
            f.write(content)


_SERVING = re.compile(r"^hashlined: serving .* on (.*)$")


class Server:
    """hashlined serving a temporary workspace; stop() ends it and removes
    the workspace."""

    def __init__(self, files: Optional[Dict[str, str]] = None, *args: str, root: Optional[str] = None):
        self.root = root or tempfile.mkdtemp(prefix="hashline-py-")
        self._own_root = root is None
        write_files(self.root, files or {})
        listen = [] if "--listen" in args else ["--listen", "127.0.0.1:0"]
        self.proc = subprocess.Popen([hashlined_binary(), "serve", "--root", self.root, *listen, *args],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self._stderr: list = []
        threading.Thread(target=self._drain_stderr, daemon=True).start()
        lines: "queue.Queue[Optional[str]]" = queue.Queue()
        threading.Thread(target=self._drain_stdout, args=(lines,), daemon=True).start()
        self.addr = ""
        while not self.addr:
            try:
                line = lines.get(timeout=60)
            except queue.Empty:
                self.stop()
                raise RuntimeError(f"hashlined did not start: {self.log()}")
            if line is None:
                self.stop()
                raise RuntimeError(f"hashlined exited with {self.proc.wait()}: {self.log()}")
            m = _SERVING.match(line)
            if m:
                self.addr = m.group(1)

    def _drain_stdout(self, lines) -> None:
        for line in self.proc.stdout:
            lines.put(line.rstrip("\n"))
        lines.put(None)

    def _drain_stderr(self) -> None:
        for line in self.proc.stderr:
            self._stderr.append(line)

    def log(self) -> str:
        return "".join(self._stderr)

    def path(self, name: str) -> str:
        return os.path.join(self.root, name)

    def read_file(self, name: str) -> str:
        with open(self.path(name), encoding="utf-8", newline="") as f:
            return f.read()

    def stop(self, remove: bool = True) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for f in (self.proc.stdout, self.proc.stderr):
            try:
                f.close()
            except (OSError, ValueError):  # a drain thread may be reading it
                pass
        if remove and self._own_root:
            shutil.rmtree(self.root, ignore_errors=True)
