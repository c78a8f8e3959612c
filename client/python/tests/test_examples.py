"""The README's Python quickstart, run as written, the package README's
asyncio example, and the examples."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import unittest

from tests.server import PACKAGE_ROOT, REPO_ROOT, Server, hashlined_binary

from hashline_client import Client

EXAMPLES = os.path.join(PACKAGE_ROOT, "examples")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _readme_section() -> str:
    with open(os.path.join(REPO_ROOT, "README.md"), encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"^## From Python .*?(?=^## )", text, re.S | re.M)
    assert m, "README.md has no section '## From Python'"
    return m.group(0)


def _blocks(section: str, lang: str):
    return re.findall(r"^```" + lang + r"(?:[ \t]+([^\n]*))?\n(.*?)^```$", section, re.S | re.M)


class ReadmeTest(unittest.TestCase):
    def test_the_quickstart_runs_as_written(self):
        blocks = _blocks(_readme_section(), "sh")
        self.assertEqual(len(blocks), 1, "one sh block in the Python section")
        info, script = blocks[0]
        # TestReadme (cmd/hashline) skips it, for a python3 with grpc may
        # be missing there; this test is what runs it.
        self.assertTrue(info.startswith("no-test:"), info)
        lines = script.splitlines()
        # The command whose output the block shows is the line before the
        # first "#" line; its output goes to a file, compared below.
        first = next(i for i, l in enumerate(lines) if l.startswith("#"))
        want = []
        for l in lines[first:]:
            if not l.startswith("#"):
                break
            want.append("" if l == "#" else l[2:])
        out = tempfile.mktemp(prefix="hl-readme-out-")
        self.addCleanup(lambda: os.path.exists(out) and os.remove(out))
        lines[first - 1] += ' >"$HL_OUT"'
        src = "set -e -o pipefail\ntrap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n" + "\n".join(lines) + "\n"
        src = src.replace("7423", str(_free_port()))
        # hashlined and this python3 (which imports grpc) first on PATH, as
        # a reader who followed the README has them.
        bin_dir = tempfile.mkdtemp(prefix="hl-readme-bin-")
        self.addCleanup(shutil.rmtree, bin_dir, True)
        os.symlink(hashlined_binary(), os.path.join(bin_dir, "hashlined"))
        os.symlink(sys.executable, os.path.join(bin_dir, "python3"))
        env = {k: v for k, v in os.environ.items() if not k.startswith(("HASHLINE_", "PYTHONPATH"))}
        env.update(PATH=bin_dir + os.pathsep + os.environ["PATH"], HL_OUT=out)
        res = subprocess.run(["bash", "-c", src], cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120)
        self.assertEqual(res.returncode, 0, res.stderr)
        with open(out, encoding="utf-8") as f:
            got = f.read().splitlines()
        self.assertEqual(got, want)

    def test_the_python_block_is_in_the_quickstart(self):
        blocks = _blocks(_readme_section(), "python")
        self.assertEqual(len(blocks), 1)
        with open(os.path.join(EXAMPLES, "quickstart.py"), encoding="utf-8") as f:
            example = f.read().splitlines()
        for line in blocks[0][1].splitlines():
            if line.strip():
                self.assertIn(line, example)


def _package_readme_section(title: str) -> str:
    with open(os.path.join(PACKAGE_ROOT, "README.md"), encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"^## " + re.escape(title) + r"\n.*?(?=^## )", text, re.S | re.M)
    assert m, f"client/python/README.md has no section '## {title}'"
    return m.group(0)


class AsyncQuickstartTest(unittest.TestCase):
    def setUp(self):
        self.server = Server({})
        self.addCleanup(self.server.stop)

    def test_it_prints_what_the_readme_shows(self):
        section = _package_readme_section("asyncio")
        texts = _blocks(section, "text")
        self.assertEqual(len(texts), 1, "one text block in the asyncio section")
        env = dict(os.environ, HASHLINE_TARGET=self.server.addr, PYTHONPATH=os.path.join(PACKAGE_ROOT, "src"))
        res = subprocess.run([sys.executable, os.path.join(EXAMPLES, "quickstart_async.py")], env=env,
                             capture_output=True, text=True, timeout=60)
        self.assertEqual(res.returncode, 0, res.stderr)
        self.assertEqual(res.stdout, texts[0][1])
        self.assertEqual(self.server.read_file("async-demo/two.txt"), "two, by bob\n")

    def test_the_readme_block_is_the_example_in_order(self):
        blocks = _blocks(_package_readme_section("asyncio"), "python")
        self.assertEqual(len(blocks), 1)
        with open(os.path.join(EXAMPLES, "quickstart_async.py"), encoding="utf-8") as f:
            example = iter(f.read().splitlines())
        for line in blocks[0][1].splitlines():
            if line.strip() and line.strip() != "...":
                self.assertIn(line, example, "missing, or out of the example's order")


def _load_tool_loop():
    spec = importlib.util.spec_from_file_location("tool_loop", os.path.join(EXAMPLES, "tool_loop.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class ToolLoopTest(unittest.TestCase):
    def setUp(self):
        self.server = Server({})
        self.addCleanup(self.server.stop)

    def test_the_recorded_session_recovers_from_the_stale_edit(self):
        env = dict(os.environ, HASHLINE_TARGET=self.server.addr, PYTHONPATH=os.path.join(PACKAGE_ROOT, "src"))
        res = subprocess.run([sys.executable, os.path.join(EXAMPLES, "tool_loop.py")], env=env,
                             capture_output=True, text=True, timeout=60)
        self.assertEqual(res.returncode, 0, res.stderr)
        self.assertIn(">>> 2:37|    return f\"hello {name}\"\nNothing was written.", res.stdout)
        self.assertIn("+2:0d|    return f\"hi {name}\"", res.stdout)
        self.assertEqual(self.server.read_file("app.py"), 'def greet(name):\n    return f"hi {name}"\n')

    def test_a_replay_that_went_another_way_stops(self):
        # Without alice's change the model's first edit lands, and the
        # recording, which saw a refusal next, stops instead of going on.
        tl = _load_tool_loop()
        with open(os.path.join(EXAMPLES, "recorded_session.json"), encoding="utf-8") as f:
            session = json.load(f)
        with Client(self.server.addr, agent="model") as c:
            c.write("app.py", session["file"])
            with self.assertRaisesRegex(RuntimeError, "expected the last tool result to contain"):
                tl.run(tl.RecordedModel(session["turns"]), tl.HashlineTools(c), session["task"])
            self.assertEqual(self.server.read_file("app.py"), 'def greet(name):\n    return f"hi {name}"\n')

    def test_bad_calls_are_results_that_say_what_to_do(self):
        tl = _load_tool_loop()
        with Client(self.server.addr, agent="model") as c:
            c.write("f.txt", "a\n")
            tools = tl.HashlineTools(c)
            self.assertIn("not a JSON object", tools.call("read_file", "{nope"))
            self.assertIn("no tool named write_file", tools.call("write_file", "{}"))
            self.assertIn("takes path, offset and limit, not pth", tools.call("read_file", '{"pth": "f.txt"}'))
            self.assertIn("Error reading nope.txt (NOT_FOUND)", tools.call("read_file", '{"path": "nope.txt"}'))
            self.assertIn("not one of the operations", tools.call("edit_file", '{"path": "f.txt", "edits": [{"set_line": {}}]}'))
            self.assertTrue(tools.call("read_file", '{"path": "f.txt"}').startswith("File: f.txt (1 line, version"))
            self.assertIn("Error editing f.txt (INVALID_REF)", tools.call("edit_file", '{"path": "f.txt", "edits": [{"replace": {"start": "1", "text": "b"}}]}'))
            self.assertIn("+2:bf|b", tools.call("edit_file", '{"path": "f.txt", "edits": [{"insertAfter": {"anchor": "1:' + c.read("f.txt").lines[0].hash + '", "text": "b"}}]}'))
            self.assertEqual(self.server.read_file("f.txt"), "a\nb\n")


if __name__ == "__main__":
    unittest.main()
