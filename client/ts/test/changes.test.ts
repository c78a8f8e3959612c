// Tests of delete, move and apply against the real hashlined binary.
import { test, describe, before, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

import {
  ConnectError,
  changeErrors,
  createClient,
  edits,
  ErrorReason,
  formatApply,
  formatDelete,
  formatMove,
  hasReason,
  isStaleRef,
  ref,
  staleRefs,
  type HashlineClient,
} from "../src/index.js";
import { rejection, startServer, type Server } from "./server.js";

describe("delete, move and apply against a real hashlined", () => {
  let server: Server;
  let client: HashlineClient;
  const disk = (rel: string): string => readFileSync(join(server.root, rel), "utf8");
  const there = (rel: string): boolean => existsSync(join(server.root, rel));

  before(async () => {
    server = await startServer({
      "a.txt": "a\n",
      "dir/keep.txt": "keep\n",
      "m.txt": "one\ntwo\n",
      "x.txt": "x1\nx2\n",
      "y.txt": "y1\ny2\n",
    });
    mkdirSync(join(server.root, "empty"));
    client = createClient({ baseUrl: `http://${server.addr}`, agentId: "ts-changes" });
  });
  after(async () => {
    client.close();
    await server.stop();
  });

  test("delete removes a file or an empty directory, and refuses a directory with entries", async () => {
    const d = await client.delete("a.txt");
    assert.equal(d.path, "a.txt");
    assert.match(d.version, /^v2-/);
    assert.equal(formatDelete(d), `Deleted a.txt (was version ${d.version})\n`);
    assert.equal(there("a.txt"), false);
    assert.equal(formatDelete(await client.delete("empty")), "Deleted directory empty\n");

    const err = await rejection(() => client.delete("dir"));
    assert.ok(hasReason(err, ErrorReason.DIRECTORY_NOT_EMPTY), String(err));
    assert.equal(disk("dir/keep.txt"), "keep\n");
    const cas = await rejection(() => client.delete("dir/keep.txt", { expectedVersion: "v2-00000000000000000000000000000000" }));
    assert.ok(hasReason(cas, ErrorReason.VERSION_MISMATCH), String(cas));
    assert.equal(disk("dir/keep.txt"), "keep\n");
  });

  test("move renames a file and its refs hold at the new path; an existing target needs overwrite", async () => {
    const r = await client.read("m.txt");
    const refused = await rejection(() => client.move("m.txt", "dir/keep.txt"));
    assert.ok(hasReason(refused, ErrorReason.ALREADY_EXISTS), String(refused));
    assert.equal(disk("m.txt"), "one\ntwo\n");
    assert.equal(disk("dir/keep.txt"), "keep\n");

    const mv = await client.move("m.txt", "sub/m.txt");
    assert.equal(formatMove(mv), `Moved m.txt to sub/m.txt (version ${r.version})\n`);
    assert.equal(there("m.txt"), false);
    await client.edit("sub/m.txt", [edits.replace(ref(r.lines[1]), "TWO")]);
    assert.equal(disk("sub/m.txt"), "one\nTWO\n");

    const over = await client.move("sub/m.txt", "dir/keep.txt", { overwrite: true });
    assert.notEqual(over.replacedVersion, "");
    assert.equal(disk("dir/keep.txt"), "one\nTWO\n");
  });

  test("apply makes a change set all or nothing, and a refusal lists every failing change", async () => {
    const x = await client.read("x.txt");
    const y = await client.read("y.txt");
    // y.txt changes behind the agent's back: its ref is stale.
    writeFileSync(join(server.root, "y.txt"), "y1\nY2!\n");
    const err = await rejection(() =>
      client.apply([
        { edit: { path: "x.txt", edits: [edits.replace(ref(x.lines[0]), "X1")] } },
        { edit: { path: "y.txt", edits: [edits.replace(ref(y.lines[1]), "YY")] } },
        { write: { path: "new.txt", content: "new\n" } },
        { delete: { path: "dir" } },
      ]),
    );
    assert.ok(err instanceof ConnectError);
    assert.ok(isStaleRef(err), String(err));
    assert.deepEqual(
      changeErrors(err).map((c) => [c.changeIndex, c.path, c.reason]),
      [
        [1, "y.txt", "STALE_REF"],
        [3, "dir", "DIRECTORY_NOT_EMPTY"],
      ],
    );
    assert.equal(staleRefs(err)[0].changeIndex, 1);
    assert.match(staleRefs(err)[0].currentLine, /^2:\w+\|Y2!$/);
    assert.equal(disk("x.txt"), "x1\nx2\n");
    assert.equal(there("new.txt"), false);

    const fresh = staleRefs(err)[0].currentLine;
    const set = [
      { edit: { path: "x.txt", edits: [edits.replace(ref(x.lines[0]), "X1")] } },
      { edit: { path: "y.txt", edits: [edits.replace(fresh, "YY")] } },
      { write: { path: "new.txt", content: "new\n" } },
      { move: { from: "dir/keep.txt", to: "kept.txt" } },
    ];
    const dry = await client.apply(set, { dryRun: true });
    assert.equal(dry.dryRun, true);
    assert.equal(there("new.txt"), false, "a dry run writes nothing");
    assert.match(formatApply(dry), /Dry run, nothing written: the 4 changes can be applied together\.\n$/);

    const resp = await client.apply(set);
    assert.notEqual(resp.changeSet, "");
    assert.equal(resp.results.length, 4);
    assert.equal(disk("x.txt"), "X1\nx2\n");
    assert.equal(disk("y.txt"), "y1\nYY\n");
    assert.equal(disk("new.txt"), "new\n");
    assert.equal(disk("kept.txt"), "one\nTWO\n");
    const text = formatApply(resp);
    assert.match(text, /^Updated x\.txt \(2 lines, version v2-\w+\)\. Line numbers unchanged\.\n/);
    assert.match(text, /\nCreated new\.txt \(1 line, version v2-\w+\)\nMoved dir\/keep\.txt to kept\.txt \(version v2-\w+\)\nApplied 4 changes together\.\n$/);
  });

  test("apply refuses a set that touches one path twice, and a change that is not one kind", async () => {
    const err = await rejection(() => client.apply([{ write: { path: "t.txt", content: "1\n" } }, { delete: { path: "t.txt" } }]));
    assert.ok(hasReason(err, ErrorReason.CONFLICTING_CHANGES), String(err));
    assert.equal(changeErrors(err).length, 2);
    assert.equal(there("t.txt"), false);
    await assert.rejects(
      () => client.apply([{ write: { path: "t.txt", content: "" }, delete: { path: "t.txt" } } as never]),
      /exactly one of edit, write, delete or move/,
    );
  });

  test("apply refuses a change whose fields it would drop, naming the field to use, and writes nothing", async () => {
    writeFileSync(join(server.root, "cas.txt"), "keep me\n");
    for (const [change, want] of [
      // A snake_case compare-and-swap version, dropped, would delete or
      // move whatever version is there.
      [{ delete: { path: "cas.txt", expected_version: "v2-00000000000000000000000000000000" } }, /change 0 \(delete\): unknown field expected_version; did you mean expectedVersion\?/],
      [{ move: { from: "cas.txt", to: "cas2.txt", expected_version: "v2-00000000000000000000000000000000" } }, /unknown field expected_version; did you mean expectedVersion\?/],
      // A write without content would empty the file.
      [{ write: { path: "cas.txt", text: "new\n" } }, /change 0 \(write\): unknown field text; .*content/],
      [{ write: { path: "cas.txt" } }, /the write has no content/],
      [{ edit: { path: "cas.txt", edits: [], base_version: "v2-0" } }, /unknown field base_version; did you mean baseVersion\?/],
    ] as const) {
      const err = await rejection(() => client.apply([change as never]));
      assert.match(String(err), want);
      assert.equal(disk("cas.txt"), "keep me\n");
      assert.equal(there("cas2.txt"), false);
    }
    // A kind left undefined is no kind: the one given is the change.
    await client.apply([{ edit: undefined, write: { path: "cas.txt", content: "written\n" } } as never]);
    assert.equal(disk("cas.txt"), "written\n");
  });

  test("delete, move and apply carry one request id across retries", async () => {
    writeFileSync(join(server.root, "r.txt"), "r\n");
    const first = await client.move("r.txt", "r2.txt", { requestId: "ts-move-1" });
    const again = await client.move("r.txt", "r2.txt", { requestId: "ts-move-1" });
    assert.deepEqual(again, first);
    const set = [{ write: { path: "s1.txt", content: "1\n" } }, { write: { path: "s2.txt", content: "2\n" } }];
    const a1 = await client.apply(set, { requestId: "ts-set-1" });
    writeFileSync(join(server.root, "s1.txt"), "changed\n");
    const a2 = await client.apply(set, { requestId: "ts-set-1" });
    assert.equal(a2.changeSet, a1.changeSet);
    assert.equal(disk("s1.txt"), "changed\n", "the retry did not apply the set again");
  });
});
