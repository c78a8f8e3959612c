// The workspace a client names: the x-hashline-workspace header, checked by
// a hashlined started with --workspace, and the host of workspaceDomain.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Code, createClient, errorCode, errorMessage, errorReason, hasReason, ErrorReason, workspaceNameError } from "../src/index.js";
import { rejection, startServer } from "./server.js";

test("a client names its workspace; a server serving another refuses, and writes nothing", async () => {
  const server = await startServer({ "f.txt": "one\n" }, "--workspace", "alpha");
  const right = createClient({ baseUrl: `http://${server.addr}`, agentId: "a", workspace: "alpha" });
  // The host alpha.hashline.test, while dialling the server's own address.
  const byHost = createClient({ baseUrl: `http://${server.addr}`, agentId: "a", workspace: "alpha", workspaceDomain: "hashline.test" });
  const wrong = createClient({ baseUrl: `http://${server.addr}`, agentId: "a", workspace: "beta", retry: false });
  try {
    assert.equal((await right.status()).workspace, "alpha");
    assert.equal((await byHost.read("f.txt")).lines[0].content, "one");
    const err = await rejection(() => wrong.write("f.txt", "two\n"));
    assert.equal(errorCode(err), Code.FailedPrecondition);
    assert.equal(errorReason(err), "WRONG_WORKSPACE");
    assert.equal(hasReason(err, ErrorReason.WRONG_WORKSPACE), true);
    assert.match(errorMessage(err), /serves workspace "alpha", not "beta"/);
    assert.equal(readFileSync(join(server.root, "f.txt"), "utf8"), "one\n");
  } finally {
    right.close();
    byHost.close();
    wrong.close();
    await server.stop();
  }
});

test("names with path or host syntax, oversized names and a domain without a workspace are refused", () => {
  for (const [name, want] of [
    ["../alpha", /path syntax/],
    ["alpha.hashline.test", /host syntax/],
    ["alpha:7420", /host syntax/],
    ["Alpha", /upper case/],
    ["x".repeat(64), /at most 63/],
    ["", /empty/],
    ["-a", /starting and ending/],
  ] as const) {
    assert.match(workspaceNameError(name) ?? "", want, name);
    assert.throws(() => createClient({ workspace: name }), want);
  }
  assert.equal(workspaceNameError("ws-1"), undefined);
  assert.throws(() => createClient({ workspaceDomain: "hashline.test" }), /needs workspace/);
  assert.throws(() => createClient({ workspace: "a", workspaceDomain: "hashline.test/x" }), /want a domain/);
});
