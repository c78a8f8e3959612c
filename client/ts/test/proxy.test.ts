// A proxy's HTTP error page in place of hashlined's answer (an Ingress
// controller's default backend): a client given a workspace names it.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer, type Http2Server, type IncomingHttpHeaders, type ServerHttp2Stream } from "node:http2";
import type { AddressInfo } from "node:net";
import { STATUS_CODES } from "node:http";
import { Code, createClient, errorCode, errorMessage, type HashlineClient } from "../src/index.js";
import { rejection } from "./server.js";

/**
 * A plaintext HTTP/2 server (h2c, as a gRPC client speaks to a proxy
 * without TLS) whose every answer is answer's; it counts the requests.
 */
async function serve(answer: (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => void): Promise<{ addr: string; hits: () => number; close: () => Promise<void> }> {
  let hits = 0;
  const server: Http2Server = createServer();
  server.on("stream", (stream, headers) => {
    hits++;
    answer(stream, headers);
  });
  await new Promise<void>((res) => server.listen(0, "127.0.0.1", res));
  const { port } = server.address() as AddressInfo;
  return {
    addr: `127.0.0.1:${port}`,
    hits: () => hits,
    close: () => new Promise<void>((res) => server.close(() => res())),
  };
}

/** Answers as a stock proxy does: an HTTP error page, not gRPC. */
function page(status: number) {
  return (stream: ServerHttp2Stream) => {
    stream.respond({ ":status": status, "content-type": "text/plain" });
    stream.end(`default backend - ${STATUS_CODES[status]}`);
  };
}

const calls: [string, (c: HashlineClient) => Promise<unknown>][] = [
  ["read", (c) => c.read("f.txt")],
  ["write", (c) => c.write("f.txt", "x\n")],
  ["grep", (c) => c.grep("x").collect()],
  ["status", (c) => c.status()],
  [
    "rpc.watch",
    async (c) => {
      for await (const _ of c.rpc.watch({})) {
        // A proxy's page has no events.
      }
    },
  ],
];

for (const tt of [
  { name: "an unknown workspace is NotFound naming it", status: 404, workspace: "zeta", code: Code.NotFound, says: [/^no workspace "zeta" behind this router \(the proxy answered HTTP 404 Not Found, not a hashlined\); nothing was done\. Check the workspace name/], attempts: 1 },
  { name: "a backend down is Unavailable naming its workspace", status: 503, workspace: "zeta", code: Code.Unavailable, says: [/^workspace "zeta"'s hashlined is down, restarting or not answering \(the proxy answered HTTP 503 Service Unavailable, not a hashlined\)\. Retry in a few seconds/], attempts: 2 },
  { name: "a bad gateway is Unavailable naming the workspace", status: 502, workspace: "zeta", code: Code.Unavailable, says: [/^workspace "zeta"'s hashlined/, /HTTP 502 Bad Gateway/], attempts: 2 },
  { name: "a gateway timeout is Unavailable naming the workspace", status: 504, workspace: "zeta", code: Code.Unavailable, says: [/^workspace "zeta"'s hashlined/, /HTTP 504 Gateway Timeout/], attempts: 2 },
  { name: "without a workspace a 404 stays Connect's", status: 404, workspace: undefined, code: Code.Unimplemented, says: [/^HTTP 404$/], attempts: 1 },
  { name: "a status that says nothing of the workspace stays Connect's", status: 403, workspace: "zeta", code: Code.PermissionDenied, says: [/^HTTP 403$/], attempts: 1 },
]) {
  test(`a proxy's HTTP ${tt.status}: ${tt.name}`, async () => {
    const proxy = await serve(page(tt.status));
    const client = createClient({ baseUrl: `http://${proxy.addr}`, workspace: tt.workspace, retry: { maxAttempts: 2, initialBackoffMs: 1 } });
    try {
      for (const [name, call] of calls) {
        const before = proxy.hits();
        const err = await rejection(() => call(client));
        assert.equal(errorCode(err), tt.code, `${name}: ${String(err)}`);
        for (const re of tt.says) {
          assert.match(errorMessage(err), re, name);
        }
        // Connect's words are kept at the end.
        assert.match(errorMessage(err), new RegExp(`HTTP ${tt.status}$`), name);
        // UNAVAILABLE is retried by the client's calls, not by the stub.
        const attempts = name.startsWith("rpc.") ? 1 : tt.attempts;
        assert.equal(proxy.hits() - before, attempts, `${name}: attempts that reached the proxy`);
      }
    } finally {
      client.close();
      await proxy.close();
    }
  });
}

test("a server's own Unimplemented (an older hashlined lacking an RPC) is not a proxy's 404", async () => {
  // What a gRPC server answers for a method it does not have: HTTP 200
  // with the status in a trailers-only response.
  const server = await serve((stream, headers) => {
    stream.respond({ ":status": 200, "content-type": "application/grpc", "grpc-status": String(Code.Unimplemented), "grpc-message": `unknown method for ${headers[":path"]}` }, { endStream: true });
  });
  const client = createClient({ baseUrl: `http://${server.addr}`, workspace: "alpha", retry: false });
  try {
    const err = await rejection(() => client.read("f.txt"));
    assert.equal(errorCode(err), Code.Unimplemented);
    assert.equal(errorMessage(err), "unknown method for /hashline.v1.FileService/Read");
  } finally {
    client.close();
    await server.close();
  }
});
