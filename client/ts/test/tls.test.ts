// TLS and mutual TLS against the real hashlined, with certificates made by
// the repository's internal/testpki for this run.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { ConnectError, Code, createClient, type ClientOptions } from "../src/index.js";
import { repoRoot, startServer, type Server } from "./server.js";

interface PKI {
  CA: string;
  OtherCA: string;
  ServerCert: string;
  ServerKey: string;
  ExpiredCert: string;
  ExpiredKey: string;
  ClientCert: string;
  ClientKey: string;
  StrangerCert: string;
  StrangerKey: string;
}

let dir: string;
let pki: PKI;
let plain: Server, tls: Server, mtls: Server, expired: Server;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), "hashline-ts-pki-"));
  pki = JSON.parse(execFileSync("go", ["run", "./internal/testpki/cmd/testpki", dir], { cwd: repoRoot, encoding: "utf8" }));
  const files = { "f.txt": "secure\n" };
  [plain, tls, mtls, expired] = await Promise.all([
    startServer(files),
    startServer(files, "--tls-cert", pki.ServerCert, "--tls-key", pki.ServerKey),
    startServer(files, "--tls-cert", pki.ServerCert, "--tls-key", pki.ServerKey, "--tls-client-ca", pki.CA),
    startServer(files, "--tls-cert", pki.ExpiredCert, "--tls-key", pki.ExpiredKey),
  ]);
});

after(async () => {
  await Promise.all([plain, tls, mtls, expired].filter((s) => s !== undefined).map((s) => s.stop()));
  rmSync(dir, { recursive: true, force: true });
});

/** Reads f.txt once with opts and returns its first line, or the error. */
async function readOnce(opts: ClientOptions): Promise<string | ConnectError> {
  const c = createClient({ timeoutMs: 10_000, retry: false, ...opts });
  try {
    const r = await c.read("f.txt");
    return r.lines[0].content;
  } catch (err) {
    assert.ok(err instanceof ConnectError, `not a ConnectError: ${err}`);
    return err;
  } finally {
    c.close();
  }
}

test("tls.caFile trusts a private CA over https://", async () => {
  assert.equal(await readOnce({ baseUrl: `https://${tls.addr}`, tls: { caFile: pki.CA } }), "secure");
});

test("tls.ca takes the PEM itself, and tls.serverName a name the certificate holds", async () => {
  assert.equal(await readOnce({ baseUrl: `https://${tls.addr}`, tls: { ca: readFileSync(pki.CA), serverName: "localhost" } }), "secure");
});

test("mutual TLS with tls.certFile and tls.keyFile reads", async () => {
  assert.equal(await readOnce({ baseUrl: `https://${mtls.addr}`, tls: { caFile: pki.CA, certFile: pki.ClientCert, keyFile: pki.ClientKey } }), "secure");
});

test("mutual TLS with the PEMs as strings reads", async () => {
  const tlsOpts = { ca: readFileSync(pki.CA, "utf8"), cert: readFileSync(pki.ClientCert, "utf8"), key: readFileSync(pki.ClientKey, "utf8") };
  assert.equal(await readOnce({ baseUrl: `https://${mtls.addr}`, tls: tlsOpts }), "secure");
});

const bad: [string, () => ClientOptions, RegExp][] = [
  ["no CA for a private one says to give tls.ca", () => ({ baseUrl: `https://${tls.addr}` }), /unknown authority: give its CA as tls\.ca/],
  ["the wrong CA says to give tls.ca", () => ({ baseUrl: `https://${tls.addr}`, tls: { caFile: pki.OtherCA } }), /unknown authority: give its CA as tls\.ca/],
  ["an expired server certificate says so", () => ({ baseUrl: `https://${expired.addr}`, tls: { caFile: pki.CA } }), /has expired or is not valid yet/],
  ["a server name the certificate lacks says to give tls.serverName", () => ({ baseUrl: `https://${tls.addr}`, tls: { caFile: pki.CA, serverName: "hashlined.example" } }), /tls\.serverName/],
  ["mutual TLS without a certificate says to give tls.cert and tls.key", () => ({ baseUrl: `https://${mtls.addr}`, tls: { caFile: pki.CA } }), /asks for a client certificate \(mutual TLS\): give tls\.cert and tls\.key/],
  ["mutual TLS with a certificate of another CA says it was refused", () => ({ baseUrl: `https://${mtls.addr}`, tls: { caFile: pki.CA, certFile: pki.StrangerCert, keyFile: pki.StrangerKey } }), /refused the client certificate|asks for a client certificate/],
  ["https:// against a plaintext server says it does not speak TLS", () => ({ baseUrl: `https://${plain.addr}`, tls: { caFile: pki.CA } }), /does not speak TLS: use an http:\/\/ baseUrl/],
  ["http:// against a TLS server suggests https://", () => ({ baseUrl: `http://${tls.addr}` }), /use an https:\/\/ baseUrl/],
];

for (const [name, opts, want] of bad) {
  test(name, async () => {
    const err = await readOnce(opts());
    assert.ok(err instanceof ConnectError, `the read succeeded: ${err}`);
    assert.equal(err.code, Code.Unavailable, err.message);
    assert.match(err.message, want);
  });
}

test("settings that cannot work are refused when the client is made", () => {
  assert.throws(() => createClient({ baseUrl: `http://${tls.addr}`, tls: { caFile: pki.CA } }), /need an https:\/\/ baseUrl/);
  assert.throws(() => createClient({ baseUrl: `https://${tls.addr}`, tls: { certFile: pki.ClientCert } }), /tls\.cert and tls\.key go together/);
  assert.throws(() => createClient({ baseUrl: `https://${tls.addr}`, tls: { caFile: join(dir, "nope.pem") } }), /tls\.caFile .*nope\.pem/);
  assert.throws(() => createClient({ socketPath: join(dir, "h.sock"), tls: {} }), /unix socket/);
});
