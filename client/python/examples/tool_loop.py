"""hashline's read and edit as the tools of a plain tool-calling loop.

A model that calls tools is a function from the conversation so far to its
next turn: text, or tool calls (a name and JSON arguments each). The loop
runs each call, appends the result, and asks again until the model answers
with text. Here the model is RecordedModel, which replays the turns of a
recorded session (recorded_session.json, in the chat-completions message
shape), so the example runs without one; put a real model's client behind
the same call to use one.

The tools hand the model what it needs to act: read_file gives tagged
lines ("2:08|    return ..."), edit_file takes references to them, and
when a line changed since the model read it (another agent got there
first), the result is the refusal's view of the current lines with the
fresh tags, and nothing is written: the model retries from those. The
recorded session does exactly that, while a second agent (alice) edits the
same line between the model's turns.

    hashlined serve &                       (in any directory: the workspace)
    PYTHONPATH=client/python/src python3 client/python/examples/tool_loop.py

HASHLINE_TARGET overrides the server address (default 127.0.0.1:7420).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any, Callable, Dict, List, Optional

from google.protobuf import json_format

from hashline_client import Client, HashlineError, StaleRefError, pb

# The tools as a model sees them (JSON Schema parameters). edit_file's
# items are the API's own FileEdit in its JSON form, so every operation
# and field of the API is there, checked by the generated message.
TOOLS: List[Dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read a file as tagged lines LINE:HASH|content. Edit by citing LINE:HASH references.",
            "parameters": {
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "Path relative to the workspace root."},
                    "offset": {"type": "integer", "description": "First line, 1-based."},
                    "limit": {"type": "integer", "description": "Most lines to return."},
                },
                "required": ["path"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "edit_file",
            "description": (
                "Apply edits to a file, all or nothing. Each edit is one of "
                '{"replace": {"start": "LINE:HASH", "end": "LINE:HASH", "text": "..."}}, '
                '{"insert_after": {"anchor": "LINE:HASH", "text": "..."}}, '
                '{"insert_before": {"anchor": "LINE:HASH", "text": "..."}}, '
                '{"delete": {"start": "LINE:HASH", "end": "LINE:HASH"}}, '
                '{"append": {"text": "..."}}, {"prepend": {"text": "..."}}, '
                '{"replace_text": {"old_text": "...", "new_text": "..."}}. '
                "If a line changed since you read it, nothing is written and the "
                "result shows the current lines: retry with their references."
            ),
            "parameters": {
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "edits": {"type": "array", "items": {"type": "object"}},
                },
                "required": ["path", "edits"],
            },
        },
    },
]


class HashlineTools:
    """Runs the model's tool calls against one hashlined, as one agent."""

    def __init__(self, client: Client):
        self.client = client

    def call(self, name: str, arguments: str) -> str:
        """The result text of one tool call; a failure is a result too, with
        what to do next, so that the model can act on it."""
        try:
            args = json.loads(arguments or "{}")
            if not isinstance(args, dict):
                raise ValueError("the arguments must be a JSON object")
        except ValueError as e:
            return f"Error: {name}: arguments are not a JSON object ({e}); call it again with valid JSON."
        if name == "read_file":
            return self.read_file(**args)
        if name == "edit_file":
            return self.edit_file(**args)
        return f"Error: no tool named {name}; the tools are read_file and edit_file."

    def read_file(self, path: str = "", offset: int = 0, limit: int = 0, **unknown: Any) -> str:
        if unknown:
            return f"Error: read_file takes path, offset and limit, not {', '.join(unknown)}."
        try:
            r = self.client.read(path, offset=offset, limit=limit)
        except HashlineError as e:
            return f"Error reading {path} ({e.reason or e.code.name}): {e.message}"
        more = f"\n(more: read again with offset {r.next_offset})" if r.truncated else ""
        return f"File: {path} ({_lines(r.total_lines)}, version {r.version})\n{r.text}{more}"

    def edit_file(self, path: str = "", edits: Optional[List[Dict[str, Any]]] = None, **unknown: Any) -> str:
        if unknown:
            return f"Error: edit_file takes path and edits, not {', '.join(unknown)}."
        try:
            batch = [json_format.ParseDict(e, pb.FileEdit()) for e in edits or []]
        except (json_format.ParseError, TypeError, AttributeError) as e:
            return f"Error: edit_file: an edit is not one of the operations listed ({e}); fix it and call again."
        try:
            r = self.client.edit(path, batch)
        except StaleRefError as e:
            # The server's message is the view to retry from: the current
            # lines, ">>>" on those that changed.
            return f"{e.message}\nNothing was written. Retry with the references above."
        except HashlineError as e:
            return f"Error editing {path} ({e.reason or e.code.name}): {e.message}"
        return f"Updated {path} ({_lines(r.total_lines)}, version {r.version}):\n{r.tagged_diff}"


def _lines(n: int) -> str:
    return f"{n} line" if n == 1 else f"{n} lines"


Model = Callable[[List[Dict[str, Any]], List[Dict[str, Any]]], Dict[str, Any]]


def run(model: Model, tools: HashlineTools, task: str, after_tool: Optional[Callable[[int], None]] = None,
        max_turns: int = 20) -> List[Dict[str, Any]]:
    """The loop: asks the model for its next turn until it answers with
    text, running every tool call in between. after_tool(n) runs after the
    n-th tool result (1-based), for the example's second agent. Returns
    the conversation."""
    messages: List[Dict[str, Any]] = [{"role": "user", "content": task}]
    results = 0
    for _ in range(max_turns):
        turn = model(messages, TOOLS)
        messages.append(turn)
        calls = turn.get("tool_calls") or []
        if not calls:
            return messages
        for call in calls:
            fn = call["function"]
            out = tools.call(fn["name"], fn.get("arguments", ""))
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": out})
            results += 1
            if after_tool is not None:
                after_tool(results)
    raise RuntimeError(f"the model did not finish in {max_turns} turns")


class RecordedModel:
    """A model that replays recorded assistant turns in order. It checks
    that each turn answers the conversation it was recorded after: the
    tool results must contain what the recording says the model saw
    ("saw", text each result held), so a replay that went another way
    stops instead of acting on results it never got."""

    def __init__(self, turns: List[Dict[str, Any]]):
        self.turns = list(turns)

    def __call__(self, messages: List[Dict[str, Any]], tools: List[Dict[str, Any]]) -> Dict[str, Any]:
        if not self.turns:
            raise RuntimeError("the recording has no more turns")
        turn = dict(self.turns.pop(0))
        last = [m["content"] for m in messages if m["role"] == "tool"]
        for want in turn.pop("saw", []):
            if not last or want not in last[-1]:
                raise RuntimeError(f"the recording expected the last tool result to contain {want!r}, got {last[-1] if last else None!r}")
        return turn


def main() -> None:
    target = os.environ.get("HASHLINE_TARGET", "127.0.0.1:7420")
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "recorded_session.json"), encoding="utf-8") as f:
        session = json.load(f)
    with Client(target, agent="model") as model_client, Client(target, agent="alice") as alice:
        alice.write("app.py", session["file"])

        def meanwhile(n: int) -> None:
            # Right after the model's read, alice changes the line it is
            # about to edit.
            if n == 1:
                r = alice.read("app.py")
                alice.edit("app.py", [pb.FileEdit(replace=pb.ReplaceOp(start=f"2:{r.lines[1].hash}", text='    return f"hello {name}"'))])

        messages = run(RecordedModel(session["turns"]), HashlineTools(model_client), session["task"], after_tool=meanwhile)
        for m in messages:
            if m["role"] == "tool":
                print(f"[tool result]\n{m['content']}\n")
            elif m.get("tool_calls"):
                for c in m["tool_calls"]:
                    print(f"[{m['role']} calls {c['function']['name']}] {c['function']['arguments']}\n")
            else:
                print(f"[{m['role']}] {m['content']}\n")
        sys.stdout.write(f"app.py now:\n{alice.read('app.py').text}\n")


if __name__ == "__main__":
    main()
