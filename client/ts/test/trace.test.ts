// The client carries the caller's OpenTelemetry trace context to the real
// hashlined, which continues the trace: its spans, received by a real OTLP
// receiver (internal/otlptest/otlpsink), are children of the caller's span.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";

import { context, propagation, trace, ROOT_CONTEXT, TraceFlags } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";

import { createClient, edits } from "../src/index.js";
import { repoRoot, startServer } from "./server.js";

/** A span as otlpsink prints it. */
interface Span {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  attributes: Record<string, unknown>;
}

/** otlpsink: $OTLPSINK_BIN when the Makefile built it, else built now. */
function sinkBinary(): string {
  if (process.env.OTLPSINK_BIN) {
    return process.env.OTLPSINK_BIN;
  }
  const dir = mkdtempSync(join(tmpdir(), "otlpsink-bin-"));
  process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
  const bin = join(dir, "otlpsink");
  execFileSync("go", ["build", "-o", bin, "./internal/otlptest/otlpsink"], { cwd: repoRoot, stdio: "inherit" });
  return bin;
}

let sink: ChildProcess;
let httpUrl = "";
const spans: Span[] = [];

before(async () => {
  sink = spawn(sinkBinary(), [], { stdio: ["pipe", "pipe", "inherit"] });
  httpUrl = await new Promise<string>((res, rej) => {
    const timer = setTimeout(() => rej(new Error("otlpsink did not start")), 60_000);
    createInterface({ input: sink.stdout! }).on("line", (line) => {
      const m = /^otlpsink: grpc \S+ http (\S+)$/.exec(line);
      if (m) {
        clearTimeout(timer);
        res(m[1]);
      } else {
        spans.push(JSON.parse(line) as Span);
      }
    });
  });
  // What a program that traces has set up (the SDK's NodeSDK does this).
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
});

after(() => {
  sink.stdin!.end();
});

test("calls carry the active span's trace context to hashlined", async () => {
  const srv = await startServer({ "a.txt": "alpha\n" }, "--otlp-endpoint", httpUrl);
  const c = createClient({ baseUrl: `http://${srv.addr}`, agentId: "ts-agent" });
  const parent = { traceId: "4bf92f3577b34da6a3ce929d0e0e4736", spanId: "00f067aa0ba902b7", traceFlags: TraceFlags.SAMPLED };
  try {
    await context.with(trace.setSpanContext(ROOT_CONTEXT, parent), async () => {
      const r = await c.read("a.txt");
      await c.edit("a.txt", [edits.append("beta")], { baseVersion: r.version });
    });
    // Outside any span: nothing to carry, and the server starts a trace.
    await c.status();
  } finally {
    c.close();
    await srv.stop(); // hashlined sends its last spans as it stops
  }
  // The spans arrive while the sink's output is read.
  for (let i = 0; i < 100 && !spans.some((s) => s.name.endsWith("/Status")); i++) {
    await new Promise((res) => setTimeout(res, 50));
  }
  const rpc = (name: string) => spans.filter((s) => s.name === `hashline.v1.FileService/${name}`);
  for (const name of ["Read", "Edit"]) {
    const [s, ...more] = rpc(name);
    assert.ok(s !== undefined && more.length === 0, `one ${name} span, got ${JSON.stringify(spans.map((x) => x.name))}`);
    assert.equal(s.traceId, parent.traceId, `${name}: the caller's trace`);
    assert.equal(s.parentSpanId, parent.spanId, `${name}: under the caller's span`);
    assert.equal(s.attributes["hashline.agent"], "ts-agent");
  }
  const edit = rpc("Edit")[0];
  assert.ok(spans.some((s) => s.name === "hashline.commit" && s.parentSpanId === edit.spanId), "the edit's commit span is under its call");
  const status = rpc("Status")[0];
  assert.ok(status !== undefined, "a Status span");
  assert.equal(status.parentSpanId, "", "a call under no span starts a trace");
  assert.notEqual(status.traceId, parent.traceId);
});
