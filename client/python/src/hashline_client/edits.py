"""Builders for the edits of a batch (Client.edit, and the edits of an
apply change).

A reference is "LINE:HASH" as read and grep return it ("12:3f"); a whole
tagged line ("12:3f|...") is accepted too, and so is a Line or GrepLine
itself (anything with number and hash)::

    r = client.read("main.go")
    client.edit("main.go", [
        edits.replace(r.lines[3], '\\tprintln("hello")'),
        edits.insert_after("5:18", "// end"),
    ])
"""

from __future__ import annotations

from typing import Protocol, Union

from ._gen.hashline.v1 import hashline_pb2

FileEdit = hashline_pb2.FileEdit


class Tagged(Protocol):
    """A line as read or grep return it."""

    number: int
    hash: str


Ref = Union[str, Tagged]


def ref(line: Ref) -> str:
    """The reference "LINE:HASH" of a tagged line (a Line or GrepLine);
    a string is returned as it is."""
    if isinstance(line, str):
        return line
    return f"{line.number}:{line.hash}"


def replace(start: Ref, text: str, end: Ref = "") -> FileEdit:
    """Replaces lines start..end (end defaults to start) with text; "" deletes them."""
    return FileEdit(replace=hashline_pb2.ReplaceOp(start=ref(start), end=ref(end), text=text))


def insert_after(anchor: Ref, text: str) -> FileEdit:
    """Inserts text after the anchor line."""
    return FileEdit(insert_after=hashline_pb2.InsertOp(anchor=ref(anchor), text=text))


def insert_before(anchor: Ref, text: str) -> FileEdit:
    """Inserts text before the anchor line."""
    return FileEdit(insert_before=hashline_pb2.InsertOp(anchor=ref(anchor), text=text))


def delete(start: Ref, end: Ref = "") -> FileEdit:
    """Deletes lines start..end (end defaults to start)."""
    return FileEdit(delete=hashline_pb2.DeleteOp(start=ref(start), end=ref(end)))


def append(text: str) -> FileEdit:
    """Adds text at the end of the file; needs no reference (works on empty files)."""
    return FileEdit(append=hashline_pb2.TextOp(text=text))


def prepend(text: str) -> FileEdit:
    """Adds text at the start of the file; needs no reference."""
    return FileEdit(prepend=hashline_pb2.TextOp(text=text))


def replace_text(old_text: str, new_text: str, all: bool = False) -> FileEdit:  # noqa: A002 (the proto's name)
    """The tag-free fallback: replaces the exact old_text (which must occur
    once, unless all) by new_text."""
    return FileEdit(replace_text=hashline_pb2.ReplaceTextOp(old_text=old_text, new_text=new_text, all=all))
