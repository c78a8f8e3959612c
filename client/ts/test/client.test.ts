// Tests of @hashline/client against the real hashlined binary.
import { test, describe, before, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import {
  Code,
  ConnectError,
  createClient,
  editErrors,
  edits,
  errorCode,
  errorMessage,
  errorReason,
  ErrorReason,
  hasReason,
  StaleRefReason,
  staleRefReason,
  formatEdit,
  formatShifts,
  formatGrepFile,
  formatGrepSummary,
  formatRead,
  formatTagged,
  formatWrite,
  isStaleRef,
  laterChanges,
  newRequestId,
  ref,
  staleRefs,
  EditResponseSchema,
  EntryType,
  ChangeKind,
  GrepFileSchema,
  GrepStream,
  type HashlineClient,
} from "../src/index.js";
import { create } from "@bufbuild/protobuf";
import type { Interceptor } from "@connectrpc/connect";
import { rejection, startServer, type Server } from "./server.js";

const mainGo = 'package main\n\nfunc main() {\n\tprintln("hi")\n}\n';

describe("against a real hashlined", () => {
  let server: Server;
  let client: HashlineClient;

  before(async () => {
    server = await startServer({
      "main.go": mainGo,
      "greet.txt": "hello\nworld\n",
      "notes.txt": "keep\n",
      "undo.txt": "one\ntwo\nthree\nfour\nfive\nsix\n",
      "win.txt": "caf\u00e9\r\nna\u00efve \u2603\r\n\u65e5\u672c\u8a9e\r\n",
      "src/a.ts": "// TODO: one\nexport const a = 1;\n",
      "src/b.ts": "export const b = 2; // todo two\n\n\n// TODO three\n",
      "src/c.ts": "export const c = 3;\n",
      "big/lines.txt": Array.from({ length: 100_000 }, (_, i) => `line ${i}\n`).join(""),
    });
    client = createClient({ baseUrl: `http://${server.addr}`, agentId: "ts-agent" });
  });
  after(async () => {
    client.close();
    await server.stop();
  });

  test("read returns tagged lines, the text view and the version", async () => {
    const r = await client.read("main.go");
    assert.equal(r.text, '1:c9|package main\n2:05|\n3:76|func main() {\n4:16|\tprintln("hi")\n5:18|}');
    assert.equal(formatTagged(r.lines), r.text);
    assert.equal(r.totalLines, 5);
    assert.equal(r.truncated, false);
    assert.match(r.version, /^v2-[0-9a-f]+$/);
    assert.equal(ref(r.lines[3]), "4:16");
    assert.equal(formatRead(r), `File: main.go (5 lines, version ${r.version})\n${r.text}\n`);

    const page = await client.read("main.go", { offset: 2, limit: 2 });
    assert.deepEqual(page.lines.map(ref), ["2:05", "3:76"]);
    assert.equal(page.truncated, true);
    assert.equal(page.nextOffset, 4);
    assert.equal(formatRead(page).split("\n")[0], `File: main.go (5 lines, version ${r.version}) [showing lines 2-3; 2 more below, continue with offset 4]`);

    const textOnly = await client.read("main.go", { offset: 2, limit: 2, omitLines: true });
    assert.equal(textOnly.lines.length, 0);
    assert.equal(textOnly.text, formatTagged(page.lines));
    assert.equal(textOnly.version, r.version);
    assert.equal(textOnly.nextOffset, 4);
  });

  test("the agent id goes with every call", async () => {
    await client.read("notes.txt");
    assert.match(server.log(), /agent=ts-agent/);
  });

  test("status names the root the server serves, its version and settings", async () => {
    const st = await client.status();
    assert.equal(st.root, server.root);
    assert.notEqual(st.version, "");
    assert.equal(st.hashLen, 2);
    assert.equal(st.requireRead, true);
  });

  test("edit applies by reference and returns fresh tags", async () => {
    const r = await client.read("main.go");
    const resp = await client.edit("main.go", [
      edits.replace(ref(r.lines[3]), '\tprintln("hello")'),
      edits.insertAfter("5:18", "// end"),
    ]);
    assert.equal(resp.path, "main.go");
    assert.equal(resp.totalLines, 6);
    assert.match(resp.diff, /^-\tprintln\("hi"\)$/m);
    assert.match(resp.diff, /^\+\tprintln\("hello"\)$/m);
    assert.deepEqual(resp.replaced.map(ref), ["4:16"]);
    assert.equal(readFileSync(join(server.root, "main.go"), "utf8"), 'package main\n\nfunc main() {\n\tprintln("hello")\n}\n// end\n');
    const text = formatEdit(resp);
    assert.equal(
      text,
      `Updated main.go (6 lines, version ${resp.version}). Line numbers unchanged.\n` +
        ' 1:c9|package main\n 2:05|\n 3:76|func main() {\n-\tprintln("hi")\n+4:d4|\tprintln("hello")\n 5:18|}\n+6:06|// end\n',
    );
    assert.deepEqual(resp.shifts, []);

    const dry = await client.edit("main.go", [edits.delete("6:06")], { dryRun: true, context: 0 });
    assert.equal(dry.dryRun, true);
    assert.equal(readFileSync(join(server.root, "main.go"), "utf8").endsWith("// end\n"), true, "a dry run writes nothing");
    assert.match(formatEdit(dry), /^Dry run, nothing written: main.go \(5 lines/);
  });

  test("edit repairs a diff-marked text and lists the repair; strict writes the text as sent", async () => {
    await client.write("repair.go", "func f() {\n\treturn\n}\n");
    const r = await client.read("repair.go");
    const resp = await client.edit("repair.go", [edits.replace(ref(r.lines[1]), "+\tlog()\n+\treturn")]);
    assert.equal(readFileSync(join(server.root, "repair.go"), "utf8"), "func f() {\n\tlog()\n\treturn\n}\n");
    assert.deepEqual(resp.repairs.map((x) => [x.kind, x.editIndex, x.line]), [["DIFF_MARKERS_STRIPPED", 0, 2]]);
    assert.ok(resp.warnings.includes(`edit 0: ${resp.repairs[0].detail}`), resp.warnings.join("\n"));

    const r2 = await client.read("repair.go");
    const strict = await client.edit("repair.go", [edits.replace(ref(r2.lines[3]), "+}")], { strict: true });
    assert.equal(strict.repairs.length, 0);
    assert.equal(readFileSync(join(server.root, "repair.go"), "utf8"), "func f() {\n\tlog()\n\treturn\n+}\n");
  });

  test("a stale edit is refused with StaleRef details, and the retry from them succeeds", async () => {
    const r = await client.read("greet.txt");
    const world = ref(r.lines[1]);
    assert.equal(world, "2:b3");
    const other = createClient({ baseUrl: `http://${server.addr}`, agentId: "other-agent" });
    try {
      await other.read("greet.txt");
      await other.edit("greet.txt", [edits.replace(world, "there")]);
    } finally {
      other.close();
    }
    const before = readFileSync(join(server.root, "greet.txt"), "utf8");

    const err = await rejection(() => client.edit("greet.txt", [edits.replace(world, "world!")], { baseVersion: r.version }));
    assert.ok(err instanceof ConnectError);
    assert.equal(isStaleRef(err), true);
    assert.equal(errorCode(err), Code.Aborted);
    assert.equal(errorReason(err), "STALE_REF");
    assert.equal(hasReason(err, ErrorReason.STALE_REF), true);
    assert.equal(hasReason(err, ErrorReason.VERSION_MISMATCH), false);
    const stale = staleRefs(err);
    assert.equal(stale.length, 1);
    assert.equal(staleRefReason(stale[0]), StaleRefReason.CHANGED);
    assert.equal(stale[0].editIndex, 0);
    assert.equal(stale[0].ref, "2:b3");
    assert.equal(stale[0].line, 2);
    assert.equal(stale[0].expectedHash, "b3");
    assert.equal(stale[0].actualHash, "50");
    assert.equal(stale[0].currentLine, "2:50|there");
    assert.ok(stale[0].fresh.includes("1:f9|hello"), stale[0].fresh.join("\n"));
    assert.match(stale[0].currentVersion, /^v2-/);
    assert.match(errorMessage(err), /^1 line\(s\) changed since last read; use the updated refs below \(>>> marks changed lines\)\n/);
    assert.match(errorMessage(err), /^>>> 2:50\|there$/m);
    assert.equal(readFileSync(join(server.root, "greet.txt"), "utf8"), before, "nothing is written on a stale ref");

    // Retry from the fresh tag: a whole tagged line is a valid reference.
    const retry = await client.edit("greet.txt", [edits.replace(stale[0].currentLine, "world!")], { baseVersion: stale[0].currentVersion });
    assert.equal(readFileSync(join(server.root, "greet.txt"), "utf8"), "hello\nworld!\n");
    assert.equal(retry.windows[0].text, "1:f9|hello\n2:68|world!");
  });

  test("other errors carry their exact reason", async () => {
    const err = await rejection(() => client.edit("greet.txt", [edits.replace("2:zz", "x")]));
    assert.equal(isStaleRef(err), false);
    assert.equal(errorCode(err), Code.InvalidArgument);
    assert.equal(errorReason(err), "INVALID_REF");
    assert.equal(hasReason(err, ErrorReason.INVALID_REF), true);
    assert.equal(hasReason(err, ErrorReason.STALE_REF), false);
    assert.deepEqual(staleRefs(err), []);
    assert.equal(editErrors(err)[0]?.field, "start");

    const outside = await rejection(() => client.read("../etc/passwd"));
    assert.equal(errorReason(outside), "OUTSIDE_ROOT");
    assert.equal(hasReason(outside, ErrorReason.OUTSIDE_ROOT), true);
    assert.equal(errorCode(outside), Code.PermissionDenied);

    const hook = await rejection(() => client.write(".git/hooks/pre-commit", "#!/bin/sh\n"));
    assert.equal(errorReason(hook), "VCS_METADATA");
    assert.equal(errorCode(hook), Code.PermissionDenied);
    assert.equal(existsSync(join(server.root, ".git")), false, "nothing is created under .git");

    const nul = await rejection(() => client.edit("greet.txt", [edits.append("a\u0000b")]));
    assert.equal(errorReason(nul), "BINARY_CONTENT");
    assert.equal(editErrors(nul)[0]?.editIndex, 0);
  });

  test("write create-only refuses an existing file and leaves it alone", async () => {
    const err = await rejection(() => client.write("notes.txt", "clobbered\n", { mode: "create" }));
    assert.equal(errorCode(err), Code.AlreadyExists);
    assert.equal(errorReason(err), "ALREADY_EXISTS");
    assert.equal(readFileSync(join(server.root, "notes.txt"), "utf8"), "keep\n");

    const w = await client.write("new/dir/file.txt", "one\ntwo\n", { mode: "create" });
    assert.equal(w.created, true);
    assert.equal(w.totalLines, 2);
    assert.equal(formatWrite(w), `Created new/dir/file.txt (2 lines, version ${w.version})\n`);

    const mismatch = await rejection(() => client.write("new/dir/file.txt", "x\n", { expectedVersion: "v2-00" }));
    assert.equal(errorReason(mismatch), "VERSION_MISMATCH");
    const cas = await client.write("new/dir/file.txt", "three\n", { mode: "replace", expectedVersion: w.version });
    assert.equal(cas.created, false);
    assert.equal(readFileSync(join(server.root, "new/dir/file.txt"), "utf8"), "three\n");

    const missing = await rejection(() => client.write("absent.txt", "x", { mode: "replace" }));
    assert.equal(errorReason(missing), "NOT_FOUND");
    assert.equal(hasReason(missing, ErrorReason.NOT_FOUND), true);
  });

  test("grep streams one message per file in path order, then the summary", async () => {
    const g = client.grep("todo", { caseInsensitive: true, path: "src", after: 1 });
    const seen: string[] = [];
    for await (const f of g) {
      seen.push(f.path);
      assert.match(f.version, /^v2-/);
      assert.equal(g.summary, undefined, "the summary comes after the files");
    }
    assert.deepEqual(seen, ["src/a.ts", "src/b.ts"]);
    assert.equal(g.summary?.matches, 3);
    assert.equal(g.summary?.filesMatched, 2);
    assert.equal(g.summary?.filesScanned, 3);
    assert.equal(g.summary?.truncated, false);

    const { files, summary } = await client.grep("todo", { caseInsensitive: true, path: "src", after: 1 }).collect();
    const [l1, l2, l4] = files[1].lines;
    assert.deepEqual([l1.match, l2.match, l4.match], [true, false, true]);
    assert.equal(
      formatGrepFile(files[1]),
      `File: src/b.ts (version ${files[1].version})\n>>1:${l1.hash}|export const b = 2; // todo two\n  2:${l2.hash}|\n--\n>>4:${l4.hash}|// TODO three\n`,
    );
    assert.equal(formatGrepSummary(summary), "3 matches in 2 files (3 files searched).\n");

    const capped = await client.grep("TODO", { maxMatches: 1, literal: true }).collect();
    assert.equal(capped.summary.truncated, true);
    assert.equal(capped.summary.matches, 1);

    // Leaving the loop early cancels the stream without an error.
    for await (const f of client.grep("export", { path: "src" })) {
      assert.equal(f.path, "src/a.ts");
      break;
    }

    const none = await client.grep("no such text anywhere").collect();
    assert.deepEqual(none.files, []);
    assert.equal(formatGrepSummary(none.summary), `No matches found (${none.summary.filesScanned} files searched).\n`);

    const bad = await rejection(() => client.grep("(unclosed").collect());
    assert.equal(errorReason(bad), "INVALID_PATTERN");
  });

  test("list returns sorted pages of entries, and listAll walks every page once", async () => {
    const src = await client.list("src", { includeVersions: true });
    assert.deepEqual(src.entries.map((e) => e.path), ["src/a.ts", "src/b.ts", "src/c.ts"]);
    assert.equal(src.entries[2].type, EntryType.FILE);
    assert.equal(Number(src.entries[2].size), "export const c = 3;\n".length);
    assert.equal(src.entries[2].version, (await client.read("src/c.ts")).version);
    assert.equal(src.truncated, false);

    const first = await client.list("", { recursive: true, maxEntries: 2, glob: "*.ts" });
    assert.deepEqual(first.entries.map((e) => e.path), ["src/a.ts", "src/b.ts"]);
    assert.equal(first.truncated, true);
    const rest = await client.list("", { recursive: true, glob: ["*.ts"], pageToken: first.nextPageToken });
    assert.deepEqual(rest.entries.map((e) => e.path), ["src/c.ts"]);

    const all: string[] = [];
    for await (const e of client.listAll("", { recursive: true, maxEntries: 1 })) {
      all.push(e.type === EntryType.DIR ? e.path + "/" : e.path);
    }
    const whole = await client.list("", { recursive: true, maxEntries: 100_000 });
    assert.equal(whole.truncated, false);
    assert.deepEqual(all, whole.entries.map((e) => (e.type === EntryType.DIR ? e.path + "/" : e.path)));
    assert.deepEqual([...all].sort(), all); // "/" after a directory's path sorts it before its contents
    assert.ok(all.includes("big/") && all.includes("src/c.ts") && all.includes("main.go"));

    const missing = await rejection(() => client.list("no/such/dir"));
    assert.equal(errorReason(missing), "NOT_FOUND");
    const bad = await rejection(() => client.list("", { pageToken: "bogus!" }));
    assert.equal(errorReason(bad), "INVALID_ARGUMENT");
  });

  test("unicode and CRLF content round-trips byte for byte", async () => {
    const r = await client.read("win.txt");
    assert.equal(r.eol, "crlf");
    assert.deepEqual(
      r.lines.map((l) => l.content),
      ["caf\u00e9", "na\u00efve \u2603", "\u65e5\u672c\u8a9e"],
    );
    await client.edit("win.txt", [edits.replace(ref(r.lines[1]), "na\u00efve \u2744"), edits.append("\u00e9t\u00e9 \u{1F600}")]);
    assert.equal(
      readFileSync(join(server.root, "win.txt"), "utf8"),
      "caf\u00e9\r\nna\u00efve \u2744\r\n\u65e5\u672c\u8a9e\r\n\u00e9t\u00e9 \u{1F600}\r\n",
    );
    const again = await client.read("win.txt");
    assert.equal(again.lines[3].content, "\u00e9t\u00e9 \u{1F600}");
    const g = await client.grep("\u{1F600}").collect();
    assert.equal(g.files[0].lines[0].number, 4);
  });

  test("a call past its deadline fails with DEADLINE_EXCEEDED", async () => {
    // 100,000 matching lines cannot be streamed in 1 ms.
    const err = await rejection(() => client.grep("line", { path: "big", timeoutMs: 1 }).collect());
    assert.equal(errorCode(err), Code.DeadlineExceeded);
  });

  test("a fractional deadline is sent in whole milliseconds, rounded up", async () => {
    // gRPC's timeout header takes an integer; "0.001m" was refused as a
    // malformed request (INTERNAL, HTTP 400) whenever it reached the server
    // before the client's own timer fired.
    const sent: (string | null)[] = [];
    const capture: Interceptor = (next) => async (req) => {
      sent.push(req.header.get("grpc-timeout"));
      return next(req);
    };
    const c = createClient({ baseUrl: `http://${server.addr}`, agentId: "ts-agent", interceptors: [capture], timeoutMs: 2500.5 });
    try {
      await c.read("main.go");
      await c.read("main.go", { timeoutMs: 20_000.001 });
      await c.grep("TODO", { timeoutMs: 9_999.2 }).collect();
    } finally {
      c.close();
    }
    assert.deepEqual(sent, ["2501m", "20001m", "10000m"]);
  });

  test("history and blame show a change made outside the server, found by a read", async () => {
    const before = await client.read("notes.txt");
    writeFileSync(join(server.root, "notes.txt"), "keep\nadded outside\n");
    const after = await client.read("notes.txt");
    const h = await client.history("notes.txt", { includeDiff: true });
    assert.equal(h.entries.length, 1);
    const e = h.entries[0];
    assert.equal(e.agent, "(external)");
    assert.equal(e.kind, ChangeKind.EXTERNAL);
    assert.match(e.changeId, /^c[0-9]+-[0-9a-f]{8}$/);
    assert.equal(e.files[0].path, "notes.txt");
    assert.equal(e.files[0].oldVersion, before.version);
    assert.equal(e.files[0].newVersion, after.version);
    assert.equal(e.files[0].linesAdded, 1);
    assert.equal(e.files[0].diff, `@@ -1,0 +2,1 @@\n+${ref(after.lines[1])}|added outside\n`);
    assert.equal((await client.history("", { agent: "nobody" })).entries.length, 0);
    assert.equal((await client.history("", { since: new Date(Date.now() + 3_600_000) })).entries.length, 0);

    const b = await client.blame("notes.txt");
    assert.equal(b.version, after.version);
    assert.deepEqual(
      b.lines.map((l) => [l.line?.number, l.changeId, l.agent, l.beforeHistory]),
      [
        [1, "", "", true],
        [2, e.changeId, "(external)", false],
      ],
    );
    const page = await client.blame("notes.txt", { offset: 2, limit: 1 });
    assert.equal(page.lines.length, 1);
    assert.equal(page.lines[0].changeId, e.changeId);
  });

  test("revert undoes one agent's change, keeps another's, and refuses one a later change is in the way of", async () => {
    const other = createClient({ baseUrl: `http://${server.addr}`, agentId: "other-agent" });
    try {
      const mine = await client.read("undo.txt");
      await client.edit("undo.txt", [edits.replace(ref(mine.lines[1]), "TWO")]);
      const id = (await client.history("undo.txt", { maxEntries: 1 })).entries[0].changeId;
      const theirs = await other.read("undo.txt");
      await other.edit("undo.txt", [edits.replace(ref(theirs.lines[4]), "FIVE")]);
      const otherId = (await client.history("undo.txt", { maxEntries: 1 })).entries[0].changeId;

      const dry = await client.revert(id, { dryRun: true });
      assert.equal(dry.dryRun, true);
      assert.equal(dry.changeId, "");
      assert.match(dry.results[0].result.case === "edit" ? dry.results[0].result.value.taggedDiff : "", /\+2:[0-9a-f]+\|two/);
      assert.equal(readFileSync(join(server.root, "undo.txt"), "utf8"), "one\nTWO\nthree\nfour\nFIVE\nsix\n");

      const r = await client.revert(id);
      assert.equal(r.reverted, id);
      assert.equal(readFileSync(join(server.root, "undo.txt"), "utf8"), "one\ntwo\nthree\nfour\nFIVE\nsix\n");
      const h = (await client.history("undo.txt", { maxEntries: 1 })).entries[0];
      assert.deepEqual([h.changeId, h.kind, h.reverts, h.agent], [r.changeId, ChangeKind.REVERT, id, "ts-agent"]);

      // A later edit of line 5 is in the way of undoing the other agent's
      // change: refused, naming it, and nothing is written.
      const now = await client.read("undo.txt");
      await client.edit("undo.txt", [edits.replace(ref(now.lines[4]), "5")]);
      const latest = (await client.history("undo.txt", { maxEntries: 1 })).entries[0].changeId;
      const err = await rejection(() => other.revert(otherId));
      assert.ok(hasReason(err, ErrorReason.REVERT_CONFLICT), String(err));
      assert.deepEqual(
        laterChanges(err).map((l) => [l.changeId, l.agent, l.path]),
        [[latest, "ts-agent", "undo.txt"]],
      );
      assert.ok(staleRefs(err).some((s) => s.fresh.some((f) => f.endsWith("|5"))));
      assert.equal(readFileSync(join(server.root, "undo.txt"), "utf8"), "one\ntwo\nthree\nfour\n5\nsix\n");
    } finally {
      other.close();
    }
  });
});

test("a unix socket server is reached with socketPath", async () => {
  const dir = mkdtempSync(join(tmpdir(), "hashline-sock-"));
  const sock = join(dir, "h.sock");
  const server = await startServer({ "f.txt": "one\n" }, "--listen", `unix://${sock}`);
  const client = createClient({ socketPath: sock, agentId: "sock-agent" });
  try {
    const r = await client.read("f.txt");
    assert.equal(r.text, `1:${r.lines[0].hash}|one`);
    await client.edit("f.txt", [edits.append("two")]);
    assert.equal(readFileSync(join(server.root, "f.txt"), "utf8"), "one\ntwo\n");
  } finally {
    client.close();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a grep loop left early, or a stream that fails before its first message and is retried, closes what it opened", async () => {
  const file = { result: { case: "file" as const, value: create(GrepFileSchema, { path: "a.txt" }) } };
  let opened = 0;
  let closed = 0;
  async function* stream(failFirst: boolean) {
    opened++;
    try {
      if (failFirst && opened === 1) {
        throw new ConnectError("not yet", Code.Unavailable);
      }
      yield file;
      yield file;
    } finally {
      closed++;
    }
  }
  for await (const f of new GrepStream(() => stream(false))) {
    assert.equal(f.path, "a.txt");
    break;
  }
  assert.deepEqual([opened, closed], [1, 1]);

  opened = closed = 0;
  const retryOnce = async <T>(call: () => Promise<T>): Promise<T> => {
    try {
      return await call();
    } catch {
      return call();
    }
  };
  for await (const f of new GrepStream(() => stream(true), retryOnce)) {
    assert.equal(f.path, "a.txt");
    break;
  }
  assert.deepEqual([opened, closed], [2, 2]);
});

test("read, grep and edit are retried while the server is not up yet, the edit applied once; without retries nothing is", async () => {
  const dir = mkdtempSync(join(tmpdir(), "hashline-retry-"));
  const sock = join(dir, "h.sock");
  let attempts = 0;
  const counting: Interceptor = (next) => async (req) => {
    attempts++;
    return next(req);
  };
  const retry = { maxAttempts: 20, initialBackoffMs: 50, multiplier: 1.5, maxBackoffMs: 400 };
  const client = createClient({ socketPath: sock, interceptors: [counting], retry });
  const once = createClient({ socketPath: sock, interceptors: [counting], retry: false });
  let server: Server | undefined;
  try {
    // Nothing listens yet: without retries an edit fails at once, as UNAVAILABLE.
    let err = await rejection(() => once.edit("f.txt", [edits.append("two")]));
    assert.equal(errorCode(err), Code.Unavailable);
    assert.match(errorMessage(err), /no server listens on the unix socket/);
    assert.equal(attempts, 1);
    attempts = 0;
    err = await rejection(() => once.read("f.txt"));
    assert.equal(errorCode(err), Code.Unavailable);
    assert.equal(attempts, 1);

    attempts = 0;
    const reading = client.read("f.txt");
    const grepping = client.grep("one").collect();
    const editing = client.edit("f.txt", [edits.append("two")]);
    server = await startServer({ "f.txt": "one\n" }, "--listen", `unix://${sock}`);
    // The edit may land before or after the read: both see line 1.
    const r = await reading;
    assert.ok(r.text.startsWith(`1:${r.lines[0].hash}|one`), r.text);
    const g = await grepping;
    assert.equal(g.summary.matches, 1);
    await editing;
    assert.equal(readFileSync(join(server.root, "f.txt"), "utf8"), "one\ntwo\n");
    assert.ok(attempts > 3, `${attempts} attempts: the calls before the server listened were retried`);
  } finally {
    client.close();
    once.close();
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

describe("edit and write whose answer is lost", () => {
  let server: Server;
  before(async () => {
    server = await startServer({});
  });
  after(async () => {
    await server.stop();
  });

  /**
   * A client whose interceptor loses the answers of edit and write as plan
   * says: each entry is the code the next attempt's answer is replaced
   * with after the server applied it, or undefined to keep it. ids holds
   * each attempt's request id.
   */
  function lossy(plan: (Code | undefined)[], opts: { retry?: false } = {}) {
    const ids: string[] = [];
    const lose: Interceptor = (next) => async (req) => {
      const name = req.method.name;
      if (name !== "Edit" && name !== "Write") {
        return next(req);
      }
      ids.push((req.message as unknown as { requestId: string }).requestId);
      const res = await next(req);
      const code = plan.shift();
      if (code !== undefined) {
        throw new ConnectError("the answer was lost", code);
      }
      return res;
    };
    const retry = opts.retry === false ? false : { maxAttempts: 4, initialBackoffMs: 10, maxBackoffMs: 50, multiplier: 2 };
    const c = createClient({ baseUrl: `http://${server.addr}`, agentId: "lossy", interceptors: [lose], retry });
    return { c, ids };
  }
  let n = 0;
  function file(content: string): string {
    const name = `f${++n}.txt`;
    writeFileSync(join(server.root, name), content);
    return name;
  }

  for (const [what, plan] of [
    ["as UNAVAILABLE", [Code.Unavailable]],
    ["as DEADLINE_EXCEEDED", [Code.DeadlineExceeded]],
    ["twice in a row", [Code.Unavailable, Code.DeadlineExceeded]],
  ] as const) {
    test(`an edit whose answer is lost ${what} is retried under one request id and applied once`, async () => {
      const name = file("start\n");
      const { c, ids } = lossy([...plan]);
      try {
        const resp = await c.edit(name, [edits.append("one")]);
        assert.equal(readFileSync(join(server.root, name), "utf8"), "start\none\n");
        assert.equal(resp.totalLines, 2);
        assert.equal(ids.length, plan.length + 1);
        assert.match(ids[0], /^[0-9a-f]{32}$/);
        assert.ok(ids.every((id) => id === ids[0]), `the retries changed the request id: ${ids}`);
      } finally {
        c.close();
      }
    });
  }

  test("a create whose answer is lost is answered as created, not ALREADY_EXISTS", async () => {
    const { c, ids } = lossy([Code.Unavailable]);
    try {
      const resp = await c.write(`new${++n}.txt`, "x\n", { mode: "create" });
      assert.equal(resp.created, true);
      assert.equal(ids.length, 2);
    } finally {
      c.close();
    }
  });

  test("without retries a lost answer rejects although the edit landed, and no request id is sent", async () => {
    const name = file("start\n");
    const { c, ids } = lossy([Code.DeadlineExceeded], { retry: false });
    try {
      const err = await rejection(() => c.edit(name, [edits.append("one")]));
      assert.equal(errorCode(err), Code.DeadlineExceeded);
      assert.equal(readFileSync(join(server.root, name), "utf8"), "start\none\n");
      assert.deepEqual(ids, [""]);
    } finally {
      c.close();
    }
  });

  test("a caller that retries itself with its own requestId applies once and gets the first result", async () => {
    const name = file("start\n");
    const { c } = lossy([Code.DeadlineExceeded], { retry: false });
    try {
      const requestId = newRequestId();
      await rejection(() => c.edit(name, [edits.append("one")], { requestId }));
      const resp = await c.edit(name, [edits.append("one")], { requestId });
      assert.equal(readFileSync(join(server.root, name), "utf8"), "start\none\n");
      assert.equal(resp.totalLines, 2);
      const reused = await rejection(() => c.edit(name, [edits.append("two")], { requestId }));
      assert.equal(errorCode(reused), Code.InvalidArgument);
      assert.equal(errorReason(reused), "REQUEST_ID_REUSED");
    } finally {
      c.close();
    }
  });

  test("a dry run carries no request id", async () => {
    const name = file("start\n");
    const { c, ids } = lossy([]);
    try {
      await c.edit(name, [edits.append("one")], { dryRun: true });
      await c.edit(name, [edits.append("one")], { dryRun: true });
      assert.deepEqual(ids, ["", ""]);
      assert.equal(readFileSync(join(server.root, name), "utf8"), "start\n");
    } finally {
      c.close();
    }
  });
});

test("a bearer token authenticates, and its permission is enforced", async () => {
  const dir = mkdtempSync(join(tmpdir(), "hashline-tokens-"));
  const tokens = join(dir, "tokens.yaml");
  writeFileSync(
    tokens,
    "tokens:\n  - {token: reader-token-0123456789, agent: reader, permission: read}\n  - {token: writer-token-0123456789, agent: writer, permission: write}\n",
  );
  const server = await startServer({ "f.txt": "one\n" }, "--tokens", tokens);
  const base = `http://${server.addr}`;
  const anonymous = createClient({ baseUrl: base });
  const reader = createClient({ baseUrl: base, token: "reader-token-0123456789" });
  const writer = createClient({ baseUrl: base, token: "writer-token-0123456789" });
  try {
    assert.equal(errorCode(await rejection(() => anonymous.read("f.txt"))), Code.Unauthenticated);
    const r = await reader.read("f.txt");
    const denied = await rejection(() => reader.edit("f.txt", [edits.replace(ref(r.lines[0]), "uno")]));
    assert.equal(errorCode(denied), Code.PermissionDenied);
    assert.equal(errorReason(denied), "READ_ONLY");
    await writer.read("f.txt");
    await writer.edit("f.txt", [edits.replace(ref(r.lines[0]), "uno")]);
    assert.equal(readFileSync(join(server.root, "f.txt"), "utf8"), "uno\n");
  } finally {
    for (const c of [anonymous, reader, writer]) c.close();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("examples/quickstart.mjs, the README's Node walk-through, runs as shown", async () => {
  const { execFile } = await import("node:child_process");
  const { promisify } = await import("node:util");
  const { fileURLToPath } = await import("node:url");
  const server = await startServer();
  try {
    const script = fileURLToPath(new URL("../../examples/quickstart.mjs", import.meta.url));
    const { stdout } = await promisify(execFile)(process.execPath, [script], { env: { ...process.env, HASHLINE_URL: `http://${server.addr}` } });
    assert.match(stdout, /^File: quickstart\.py \(2 lines, version v2-[0-9a-f]+\)\n1:52\|def greet\(name\):\n2:08\|    return "hello " \+ name\n/);
    assert.match(stdout, /^stale, nothing written:\n1 line\(s\) changed since last read/m);
    assert.match(stdout, /^>>> 2:37\|    return f"hello \{name\}"$/m);
    assert.match(stdout, /^Updated quickstart\.py \(2 lines, version v2-[0-9a-f]+\)\. Line numbers unchanged\.\n 1:52\|def greet\(name\):\n-    return f"hello \{name\}"\n\+2:[0-9a-f]{2}\|    return f"hi \{name\}"\n/m);
    assert.equal(readFileSync(join(server.root, "quickstart.py"), "utf8"), 'def greet(name):\n    return f"hi {name}"\n');
  } finally {
    await server.stop();
  }
});

test("an https:// base URL speaks TLS, trusting the server's certificate through nodeOptions", async () => {
  const { execFileSync } = await import("node:child_process");
  const dir = mkdtempSync(join(tmpdir(), "hashline-tls-"));
  // Go ships a certificate generator; a self-signed cert for 127.0.0.1 is its own CA.
  const goroot = execFileSync("go", ["env", "GOROOT"], { encoding: "utf8" }).trim();
  execFileSync("go", ["run", join(goroot, "src", "crypto", "tls", "generate_cert.go"), "--host", "127.0.0.1", "--ecdsa-curve", "P256"], { cwd: dir, stdio: "ignore" });
  const cert = join(dir, "cert.pem");
  const server = await startServer({ "f.txt": "secure\n" }, "--tls-cert", cert, "--tls-key", join(dir, "key.pem"));
  const client = createClient({ baseUrl: `https://${server.addr}`, nodeOptions: { ca: readFileSync(cert) } });
  const plaintext = createClient({ baseUrl: `http://${server.addr}`, timeoutMs: 5_000 });
  try {
    const r = await client.read("f.txt");
    assert.equal(r.lines[0].content, "secure");
    assert.notEqual(await rejection(() => plaintext.read("f.txt")), undefined, "plaintext must not reach a TLS server");
  } finally {
    client.close();
    plaintext.close();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("formatShifts says how the other lines moved, as the Go client does", () => {
  const cases: [string, Array<{ from: number; to: number; by: number }>, number, string, boolean][] = [
    ["no shift", [], 10, "Line numbers unchanged.", false],
    ["the lines after an insertion", [{ from: 13, to: 40, by: 2 }], 42, "Lines after 12 moved down 2.", false],
    ["every line after a prepend", [{ from: 1, to: 5, by: 1 }], 6, "All lines moved down 1.", false],
    ["a run that lines were appended after", [{ from: 3, to: 4, by: -1 }], 4, "Lines 3-4 moved up 1.", false],
    ["one line between two changes", [{ from: 7, to: 7, by: -2 }, { from: 9, to: 20, by: 0 }], 20, "Line 7 moved up 2; lines after 8 kept their numbers.", false],
    ["one line back at its number", [{ from: 2, to: 3, by: 1 }, { from: 5, to: 5, by: 0 }], 6, "Lines 2-3 moved down 1; line 5 kept its number.", false],
    ["after a rebase, of this edit", [{ from: 13, to: 40, by: 2 }], 42, "Lines after 12 moved down 2 by this edit.", true],
  ];
  for (const [name, shifts, totalLines, want, rebased] of cases) {
    const r = create(EditResponseSchema, { shifts, totalLines, rebasedFrom: rebased ? "v2-1" : "" });
    assert.equal(formatShifts(r), want, name);
  }
  const old = create(EditResponseSchema, { path: "f", version: "v2-1", totalLines: 3, windows: [{ text: "1:aa|a\n2:bb|B" }, { text: "3:cc|c" }] });
  assert.equal(formatEdit(old), "Updated f (3 lines, version v2-1).\n1:aa|a\n2:bb|B\n...\n3:cc|c\n", "an older server's response");
});
