"""What the tests of the sync and the asyncio client share: the workspace
of the calls' tests, a quick retry policy, and the plan of answers a test
interceptor loses."""

from __future__ import annotations

import os
import tempfile
from typing import Dict, List, Optional, Tuple

import grpc

from tests.server import Server

from hashline_client import RetryPolicy, edits, new_request_id

FAST_RETRY = RetryPolicy(max_attempts=4, initial_backoff=0.01, max_backoff=0.05, multiplier=2)

CALLS_FILES = {"main.go": 'package main\n\nfunc main() {\n\tprintln("hi")\n}\n',
               "notes/todo.txt": "TODO: one\nfine\nTODO: two\n",
               "a.py": "x = 1\n# TODO later\n"}
"""The files of the calls' tests: grep finds "TODO" in a.py and notes/todo.txt."""


BUILDERS_BEFORE = "a\nb\nc\nd\n"
BUILDERS_AFTER = "start\na\nB\nb2\nc\nc2\nend\n"


def every_builder(lines) -> list:
    """A batch of every edits builder for BUILDERS_BEFORE, read as lines:
    the file is BUILDERS_AFTER once it is applied."""
    _, b, c, d = lines
    return [
        edits.replace(b, "B"),
        edits.insert_after(c, "c2"),
        edits.insert_before(c, "b2"),
        edits.delete(d),
        edits.append("end"),
        edits.prepend("start"),
    ]


class WithServer:
    """A hashlined for the whole test class, serving files."""

    files: Dict[str, str] = {}
    server: Server

    @classmethod
    def setUpClass(cls):
        super().setUpClass()  # type: ignore[misc]
        cls.server = Server(cls.files)

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()
        super().tearDownClass()  # type: ignore[misc]


def new_file(server: Server, content: str) -> str:
    """A new file at the root of the server's workspace, by its name."""
    fd, p = tempfile.mkstemp(prefix="f", suffix=".txt", dir=server.root)
    with os.fdopen(fd, "w") as f:
        f.write(content)
    return os.path.basename(p)


def new_named_file(server: Server, content: str) -> str:
    """A new file at the root of the server's workspace, named by a request id."""
    name = f"r{new_request_id()[:10]}.txt"
    with open(server.path(name), "w") as f:
        f.write(content)
    return name


CHANGES = ("Edit", "Write", "Delete", "Move", "Apply", "Revert")
"""The methods that change files."""


class LosePlan:
    """Which answers of the calls that change files an interceptor loses:
    each entry of plan is the code the next attempt's answer is replaced
    with after the server applied it, or None to keep it. ids and metadata
    hold each attempt's request id and metadata."""

    def __init__(self, plan):
        self.plan = list(plan)
        self.ids: List[str] = []
        self.metadata: List[dict] = []

    def take(self, details, request) -> Optional[grpc.StatusCode]:
        """The code to lose this attempt's answer with, or None."""
        method = details.method.decode() if isinstance(details.method, bytes) else details.method
        if method.rsplit("/", 1)[-1] not in CHANGES:
            return None
        self.ids.append(request.request_id)
        self.metadata.append(dict(_pairs(details.metadata)))
        return self.plan.pop(0) if self.plan else None


def _pairs(metadata) -> List[Tuple[str, str]]:
    return [(k, v) for k, v in metadata or ()]
