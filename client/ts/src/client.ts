import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { STATUS_CODES } from "node:http";
import { connect as netConnect, isIP } from "node:net";
import { connect as tlsConnect } from "node:tls";
import type * as http2 from "node:http2";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient as createConnectClient, type Client, type Interceptor } from "@connectrpc/connect";
import { createGrpcTransport, Http2SessionManager } from "@connectrpc/connect-node";
import {
  ApplyRequestSchema,
  EditRequestSchema,
  FileService,
  WriteMode,
  type ApplyResponse,
  type DeleteResponse,
  type EditResponse,
  type GrepFile,
  type MoveResponse,
  type RevertResponse,
  GrepRequestSchema,
  type GrepSummary,
  type Entry,
  type BlameResponse,
  type HistoryResponse,
  type ListResponse,
  type ReadResponse,
  type StatusResponse,
  type WriteResponse,
} from "./gen/hashline/v1/hashline_pb.js";
import type { FileEditInit } from "./edits.js";
import { toChange, type ChangeInit } from "./changes.js";
import { traceContext } from "./trace.js";

/** Where hashlined listens unless told otherwise. */
export const DEFAULT_BASE_URL = "http://127.0.0.1:7420";

/** The deadline a call gets unless it sets its own: 30 seconds. */
export const DEFAULT_TIMEOUT_MS = 30_000;

/** How to reach the server, and who is calling. */
export interface ClientOptions {
  /**
   * "http://host:port" speaks gRPC over plaintext HTTP/2 (h2c), as
   * `hashlined serve` does by default; "https://host:port" uses TLS.
   * Default DEFAULT_BASE_URL. Ignored when socketPath is set.
   */
  baseUrl?: string;
  /**
   * A unix socket path, for a server started with
   * `--listen unix:///path.sock`.
   */
  socketPath?: string;
  /**
   * The agent name, sent as x-agent-id metadata. The server remembers what
   * each agent has read and checks its edits against that.
   */
  agentId?: string;
  /** A bearer token (sent as "authorization: Bearer TOKEN") for a server started with --tokens. */
  token?: string;
  /**
   * The workspace every call is meant for, sent as x-hashline-workspace
   * metadata: a router that routes by header finds the workspace's server
   * by it, and a server started with another --workspace refuses the call
   * (WRONG_WORKSPACE) rather than read or change the wrong tree. A DNS
   * label: lowercase letters, digits and "-", at most 63. A proxy's HTTP
   * error page in place of hashlined's answer (an Ingress controller's
   * default backend) then rejects naming the workspace: a 404 with
   * NotFound, a 502, 503 or 504 with Unavailable.
   */
  workspace?: string;
  /**
   * With workspace: send the host WORKSPACE.DOMAIN (as :authority and TLS
   * server name) while connecting to baseUrl's address, for a router that
   * routes by host but is reached at another address. Not with socketPath.
   */
  workspaceDomain?: string;
  /**
   * The deadline of every call that does not set its own, in milliseconds
   * (rounded up to a whole one); 0 means none. Default DEFAULT_TIMEOUT_MS.
   * For grep it covers the whole stream.
   */
  timeoutMs?: number;
  /**
   * TLS for a server started with --tls-cert: a private CA to trust, a
   * client certificate for mutual TLS (--tls-client-ca), a server name.
   * Turns TLS on for the default base URL; an "http://" baseUrl with tls
   * is an error. See TlsOptions.
   */
  tls?: TlsOptions;
  /** Options for node's http2.connect, for what tls does not cover; they win over it. */
  nodeOptions?: http2.SecureClientSessionOptions;
  /**
   * More Connect interceptors, run after the ones that add the headers
   * above and the caller's trace context (when the program traces with
   * @opentelemetry/api: see the README's "Tracing").
   */
  interceptors?: Interceptor[];
  /**
   * How calls are retried while the server is UNAVAILABLE (not listening
   * yet, restarting); edit and write also after DEADLINE_EXCEEDED, under a
   * request id (see RetryOptions). false turns retries off, and with them
   * the request ids edit and write otherwise add. Default DEFAULT_RETRY.
   */
  retry?: RetryOptions | false;
}

/**
 * TLS settings, as the hashline CLI's --tls-* flags. Each PEM may be given
 * as its contents or as a file path (caFile, certFile, keyFile), read when
 * the client is created.
 */
export interface TlsOptions {
  /** CA certificates (PEM) to trust instead of node's default roots: the CA that signed hashlined's --tls-cert. */
  ca?: string | Buffer;
  caFile?: string;
  /** The client certificate (PEM), for a server with --tls-client-ca (mutual TLS); goes with key. */
  cert?: string | Buffer;
  certFile?: string;
  /** The client certificate's private key (PEM). */
  key?: string | Buffer;
  keyFile?: string;
  /** The name the server's certificate must hold, when it is not the URL's host. */
  serverName?: string;
}

/**
 * Why name is not a workspace name (a DNS label, as hashlined --workspace
 * takes), or undefined when it is one.
 */
export function workspaceNameError(name: string): string | undefined {
  const q = JSON.stringify(name.length > 63 ? name.slice(0, 63) : name) + (name.length > 63 ? "..." : "");
  if (name === "") {
    return 'the workspace name is empty: name one, e.g. "alpha" (lowercase letters, digits and \'-\', at most 63)';
  }
  if (name.length > 63) {
    return `workspace name ${q} is ${name.length} characters: at most 63 (a DNS label)`;
  }
  if (/[/\\]/.test(name) || name.includes("..")) {
    return `workspace name ${q} has path syntax: a workspace is named, not a directory; use its name alone, e.g. "alpha"`;
  }
  if (/[.:@[\]]/.test(name)) {
    return `workspace name ${q} has host syntax: use the workspace's name alone ("alpha"), not a host, domain or port`;
  }
  if (/[A-Z]/.test(name) && /^[A-Za-z0-9-]+$/.test(name)) {
    return `workspace name ${q} has upper case: workspace names are lowercase (${JSON.stringify(name.toLowerCase())})`;
  }
  if (!/^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/.test(name)) {
    return `workspace name ${q}: use only lowercase letters, digits and '-', starting and ending with a letter or digit`;
  }
  return undefined;
}

/** The http2.connect options of tls, after checking them. */
function tlsNodeOptions(tls: TlsOptions): http2.SecureClientSessionOptions {
  const pem = (what: string, value: string | Buffer | undefined, file: string | undefined): string | Buffer | undefined => {
    if (value !== undefined && file !== undefined) {
      throw new Error(`hashline: tls.${what} and tls.${what}File both given: give one`);
    }
    if (file === undefined) {
      return value;
    }
    try {
      return readFileSync(file);
    } catch (err) {
      throw new Error(`hashline: tls.${what}File ${file}: ${(err as Error).message}`);
    }
  };
  const ca = pem("ca", tls.ca, tls.caFile);
  const cert = pem("cert", tls.cert, tls.certFile);
  const key = pem("key", tls.key, tls.keyFile);
  if ((cert === undefined) !== (key === undefined)) {
    throw new Error("hashline: tls.cert and tls.key go together (the client certificate and its private key): give both, or neither");
  }
  const out: http2.SecureClientSessionOptions = {};
  if (ca !== undefined) out.ca = ca;
  if (cert !== undefined) out.cert = cert;
  if (key !== undefined) out.key = key;
  if (tls.serverName !== undefined) out.servername = tls.serverName;
  return out;
}

/**
 * What a TLS failure means, by node's error code (or OpenSSL's, for an
 * alert from the server), in terms of ClientOptions.
 */
const TLS_HINTS: [RegExp, string][] = [
  [/^ERR_SSL_WRONG_VERSION_NUMBER$|^ERR_SSL_PACKET_LENGTH_TOO_LONG$|^ERR_SSL_HTTP_REQUEST$|^EPROTO$/, "the server does not speak TLS: use an http:// baseUrl, without tls"],
  [/^(UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT|UNABLE_TO_GET_ISSUER_CERT_LOCALLY|SELF_SIGNED_CERT_IN_CHAIN|DEPTH_ZERO_SELF_SIGNED_CERT|CERT_SIGNATURE_FAILURE)$/, "the server's certificate is signed by an unknown authority: give its CA as tls.ca or tls.caFile"],
  [/^(CERT_HAS_EXPIRED|CERT_NOT_YET_VALID)$/, "the server's certificate has expired or is not valid yet: hashlined needs a new --tls-cert (or this machine's clock is wrong)"],
  [/^ERR_TLS_CERT_ALTNAME_INVALID$/, "the server's certificate is not valid for the host in baseUrl: use a name or address it holds, or give tls.serverName"],
  [/CERTIFICATE_REQUIRED|HANDSHAKE_FAILURE/, "the server asks for a client certificate (mutual TLS): give tls.cert and tls.key (or tls.certFile and tls.keyFile)"],
  [/ALERT_UNKNOWN_CA|ALERT_BAD_CERTIFICATE|ALERT_CERTIFICATE_EXPIRED|ALERT_UNSUPPORTED_CERTIFICATE|ALERT_DECRYPT_ERROR/, "the server refused the client certificate: tls.cert must be signed by a CA in hashlined's --tls-client-ca, valid now, and made for client authentication"],
];

/**
 * The HTTP status of a call answered by something that does not speak
 * gRPC, from the message Connect gives it ("HTTP 404"), or undefined. Only
 * something in front of hashlined sends such a page (a proxy, an Ingress
 * controller's default backend): hashlined answers every call, an unknown
 * RPC included, with a gRPC status. Connect gives it the code of the HTTP
 * status (404 Unimplemented, 502, 503 and 504 Unavailable), so the
 * message, not the code, tells a proxy's 404 from an older hashlined's
 * Unimplemented.
 */
function httpStatus(err: ConnectError): number | undefined {
  const m = /^HTTP (\d{3})$/.exec(err.rawMessage);
  return m ? Number(m[1]) : undefined;
}

/**
 * Says what a proxy's HTTP error page means for the client's workspace,
 * as the repository's router (deploy/nginx) answers it itself: a 404 is a
 * workspace the proxy routes nowhere (NotFound), a 502, 503 or 504 one
 * whose hashlined is down, restarting or not answering (Unavailable, and
 * retried as such). The message ends with Connect's words; any other
 * status is left as it is.
 */
function proxyAnswers(workspace: string): Interceptor {
  return (next) => async (req) => {
    try {
      return await next(req);
    } catch (err) {
      const status = err instanceof ConnectError ? httpStatus(err) : undefined;
      if (!(err instanceof ConnectError) || status === undefined) {
        throw err;
      }
      const q = JSON.stringify(workspace);
      const answered = `the proxy answered HTTP ${status} ${STATUS_CODES[status] ?? ""}, not a hashlined`;
      if (status === 404) {
        throw new ConnectError(
          `no workspace ${q} behind this router (${answered}); nothing was done. Check the workspace name, and that its hashlined is deployed and routed. The proxy's answer: ${err.rawMessage}`,
          Code.NotFound,
          err.metadata,
          undefined,
          err,
        );
      }
      if (status === 502 || status === 503 || status === 504) {
        throw new ConnectError(
          `workspace ${q}'s hashlined is down, restarting or not answering (${answered}). Retry in a few seconds; if it persists, check that it is deployed and running. The proxy's answer: ${err.rawMessage}`,
          Code.Unavailable,
          err.metadata,
          undefined,
          err,
        );
      }
      throw err;
    }
  };
}

/** Errors of a failed TLS handshake: the same every time, so not retried. */
const tlsFailures = new WeakSet<object>();

/**
 * Reports a TLS set-up that does not match the server's as UNAVAILABLE
 * with what to change, instead of the transport's words alone. A
 * plaintext client against a TLS server sees only a closed stream or
 * connection; then a TLS handshake of its own (probeTls) tells whether
 * the server speaks TLS.
 */
function tlsHints(baseUrl: string, usesTls: boolean): Interceptor {
  return (next) => async (req) => {
    try {
      return await next(req);
    } catch (err) {
      // An HTTP answer, even a proxy's error page, proves the
      // connection's set-up right.
      if (!(err instanceof ConnectError) || req.signal.aborted || httpStatus(err) !== undefined) {
        throw err;
      }
      const codes = causes(err).map((c) => String(c.code ?? ""));
      let hint: string | undefined;
      if (usesTls) {
        hint = TLS_HINTS.find(([re]) => codes.some((c) => re.test(c)))?.[1];
      } else if ((err.code === Code.Unavailable || err.code === Code.Canceled || err.code === Code.Internal) && (await probeTls(baseUrl))) {
        hint = "the server speaks TLS: use an https:// baseUrl (and tls.ca or tls.caFile for a private CA)";
      }
      if (hint === undefined) {
        throw err;
      }
      const e = new ConnectError(`${hint} (${err.rawMessage})`, Code.Unavailable, undefined, undefined, err);
      tlsFailures.add(e);
      throw e;
    }
  };
}

/** Whether the server at an http:// baseUrl completes a TLS handshake; false when unsure. */
function probeTls(baseUrl: string): Promise<boolean> {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    return Promise.resolve(false);
  }
  return new Promise((res) => {
    // Only "does it speak TLS at all" is asked: nothing is sent or trusted.
    const sock = tlsConnect({ host: url.hostname, port: Number(url.port || 80), rejectUnauthorized: false, ALPNProtocols: ["h2"], servername: isIP(url.hostname) ? undefined : url.hostname });
    const done = (ok: boolean) => {
      clearTimeout(timer);
      sock.destroy();
      res(ok);
    };
    const timer = setTimeout(() => done(false), 3_000);
    sock.once("secureConnect", () => done(true));
    sock.once("error", () => done(false));
  });
}

/**
 * Retries. read, and grep until its first file arrives, are retried after
 * UNAVAILABLE: they change nothing. An edit or write cut off after it was
 * sent may have been applied, so sending it again must not apply it twice:
 * each one carries a request id (requestId, or a random one, the same in
 * every attempt), and the server answers a retry with the first attempt's
 * outcome instead of applying it again. They are retried after UNAVAILABLE
 * and after DEADLINE_EXCEEDED (each attempt has its own timeoutMs), since
 * a deadline error does not mean nothing was written. Every other error is
 * an answer. This needs a hashlined that knows request ids; an older one
 * ignores them, so use retry: false against it.
 */
export interface RetryOptions {
  /** Attempts, the first included; 1 means no retries. */
  maxAttempts?: number;
  /** The wait before the first retry; later waits grow by multiplier up to maxBackoffMs, each with up to 20% jitter. */
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  multiplier?: number;
}

/** Up to 4 attempts over about 1.5 s: rides out a server restart without hiding a server that is down. */
export const DEFAULT_RETRY: Required<RetryOptions> = { maxAttempts: 4, initialBackoffMs: 100, maxBackoffMs: 2000, multiplier: 3 };

/**
 * Reports a unix socket nobody listens on (not created yet, or removed by a
 * server that stopped) as UNAVAILABLE, as gRPC does and as a refused TCP
 * connection is, instead of Connect's INTERNAL for ENOENT.
 */
function missingSocket(path: string): Interceptor {
  return (next) => async (req) => {
    try {
      return await next(req);
    } catch (err) {
      if (err instanceof ConnectError && err.code === Code.Internal && causes(err).some((c) => c.code === "ENOENT" || c.code === "ECONNREFUSED")) {
        throw new ConnectError(`no server listens on the unix socket ${path}; start hashlined with --listen unix://${path}`, Code.Unavailable, undefined, undefined, err);
      }
      throw err;
    }
  };
}

function causes(err: unknown): { code?: unknown }[] {
  const out: { code?: unknown }[] = [];
  for (let e: unknown = err; typeof e === "object" && e !== null && out.length < 10; e = (e as { cause?: unknown }).cause) {
    out.push(e as { code?: unknown });
  }
  return out;
}

/** The codes read and grep are retried on. */
const UNAVAILABLE: readonly Code[] = [Code.Unavailable];
/** The codes an edit or write with a request id is retried on. */
const KEYED: readonly Code[] = [Code.Unavailable, Code.DeadlineExceeded];

/**
 * A random request id, 32 hex digits. Pass it as requestId to an edit or
 * write you may send again yourself (after DEADLINE_EXCEEDED, say), the
 * same in each: hashlined applies it once and answers every retry with
 * the first outcome. edit and write make one themselves when retries are
 * on and none is given.
 */
export function newRequestId(): string {
  return randomBytes(16).toString("hex");
}

/** Runs call, and again while it fails with one of codes and attempts remain. */
async function retrying<T>(policy: Required<RetryOptions>, signal: AbortSignal | undefined, call: () => Promise<T>, codes: readonly Code[] = UNAVAILABLE): Promise<T> {
  let wait = policy.initialBackoffMs;
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (err) {
      if (attempt >= policy.maxAttempts || !(err instanceof ConnectError) || !codes.includes(err.code) || tlsFailures.has(err) || signal?.aborted) {
        throw err;
      }
    }
    const ms = Math.min(wait, policy.maxBackoffMs) * (1 + 0.2 * Math.random());
    await new Promise<void>((res) => {
      const t = setTimeout(done, ms);
      function done() {
        clearTimeout(t);
        signal?.removeEventListener("abort", done);
        res();
      }
      signal?.addEventListener("abort", done, { once: true });
    });
    wait *= Math.max(policy.multiplier, 1);
  }
}

/**
 * call with its deadline rounded up to whole milliseconds: gRPC's timeout
 * header takes an integer, and Connect would send a fraction as it is
 * ("0.5m"), which the server refuses as a malformed request.
 */
function wholeMs<T extends CallOptions>(call: T): T {
  const t = call.timeoutMs;
  return t === undefined || Number.isInteger(t) ? call : { ...call, timeoutMs: Math.ceil(t) };
}

/** Per-call options. */
export interface CallOptions {
  /** This call's deadline in milliseconds (rounded up to a whole one), instead of the client's default. */
  timeoutMs?: number;
  /** Cancels the call. */
  signal?: AbortSignal;
}

/** Options of read. */
export interface ReadOptions extends CallOptions {
  /** The first line, 1-based (default 1). */
  offset?: number;
  /** The most lines (default the server's, 2000). */
  limit?: number;
  /**
   * Return the page only as text, with lines left empty: much cheaper for
   * large files, for callers that show or parse the text anyway.
   */
  omitLines?: boolean;
}

/** Options of edit. */
export interface EditOptions extends CallOptions {
  /** The version the references were read from (ReadResponse.version). */
  baseVersion?: string;
  /** Check and compute everything, write nothing. */
  dryRun?: boolean;
  /** Lines of context around each change (default 3). */
  context?: number;
  /** Return the whole new file in lines. */
  full?: boolean;
  /**
   * Write every text exactly as sent. Without it the server repairs the
   * usual slips of a model's text (EditResponse.repairs lists each) and
   * refuses an edit where a repair would be a guess (INVALID_EDIT).
   */
  strict?: boolean;
  /**
   * The idempotency key (at most 128 bytes): a second edit with the same
   * key and the same request, within 10 minutes, returns the first one's
   * result instead of applying again. Default: a random one when retries
   * are on (not for a dry run), so the client's own retries are safe.
   */
  requestId?: string;
}

/** "upsert" creates or overwrites, "create" fails if the file exists, "replace" fails if it does not. */
export type WriteModeName = "upsert" | "create" | "replace";

/** Options of write. */
export interface WriteOptions extends CallOptions {
  /** Default "upsert". */
  mode?: WriteModeName | WriteMode;
  /** Write only if the file is still at this version (compare-and-swap). */
  expectedVersion?: string;
  /** The idempotency key, as EditOptions.requestId. */
  requestId?: string;
}

/** Options of delete. */
export interface DeleteOptions extends CallOptions {
  /** Delete only if the file is still at this version (compare-and-swap). */
  expectedVersion?: string;
  /** The idempotency key, as EditOptions.requestId. */
  requestId?: string;
}

/** Options of move. */
export interface MoveOptions extends CallOptions {
  /** Move only if the file is still at this version (compare-and-swap). */
  expectedVersion?: string;
  /** Replace the file at to if there is one (else ALREADY_EXISTS). */
  overwrite?: boolean;
  /** The idempotency key, as EditOptions.requestId. */
  requestId?: string;
}

/** Options of apply. */
export interface ApplyOptions extends CallOptions {
  /** Check and compute everything, write nothing. */
  dryRun?: boolean;
  /** The idempotency key, as EditOptions.requestId. */
  requestId?: string;
}

/** Options of grep. */
export interface GrepOptions extends CallOptions {
  /** A file or directory to search (default the whole workspace). */
  path?: string;
  /** Only files matching these globs ("*.go", "src/**\/*.ts"). */
  glob?: string | string[];
  /** Skip files matching these globs. */
  excludeGlob?: string | string[];
  /** Only files of these types ("go", "ts", ...). */
  type?: string | string[];
  caseInsensitive?: boolean;
  /** The pattern is a plain string, not an RE2 expression. */
  literal?: boolean;
  /** Lines of context before / after each match; context sets both. */
  before?: number;
  after?: number;
  context?: number;
  /** Stop after this many matching lines (default 100). */
  maxMatches?: number;
  /** Also search hidden files and directories. */
  hidden?: boolean;
  /** Do not honour .gitignore files. */
  noIgnore?: boolean;
}

/** Options of list. */
export interface ListOptions extends CallOptions {
  /** List the whole tree under the path, not only its entries. */
  recursive?: boolean;
  /** Only entries matching these globs ("*.go", "src/**\/*.ts"); directories are still walked. */
  glob?: string | string[];
  /** The most entries of one page (default 1000, at most 100000). */
  maxEntries?: number;
  /** Also list hidden files and directories. */
  hidden?: boolean;
  /** Do not honour .gitignore files. */
  noIgnore?: boolean;
  /** Fill each file's version (reads every file listed). */
  includeVersions?: boolean;
  /** The nextPageToken of the previous page: continue after it. */
  pageToken?: string;
}

/** Options of history. */
export interface HistoryOptions extends CallOptions {
  /** Only the changes of this agent ("(external)" for those made outside the server). */
  agent?: string;
  /** Only changes made at or after this time. */
  since?: Date;
  /** Only changes made before this time. */
  until?: Date;
  /** The most entries of one page (default 100, at most 1000). */
  maxEntries?: number;
  /** The nextPageToken of the previous page: continue after it. */
  pageToken?: string;
  /** Return each file's change as a diff of tagged lines (HistoryFile.diff). */
  includeDiff?: boolean;
}

/** Options of revert. */
export interface RevertOptions extends CallOptions {
  /** Plan the revert and return its results; write nothing. */
  dryRun?: boolean;
  /** The idempotency key, as EditOptions.requestId. */
  requestId?: string;
}

/** Options of blame. */
export interface BlameOptions extends CallOptions {
  /** The first line, 1-based (default 1). */
  offset?: number;
  /** The most lines (default the server's, 2000). */
  limit?: number;
}

function globs(v: string | string[] | undefined): string[] {
  return v === undefined ? [] : Array.isArray(v) ? v : [v];
}

function writeMode(m: WriteModeName | WriteMode | undefined): WriteMode {
  switch (m) {
    case undefined:
    case "upsert":
      return WriteMode.UPSERT;
    case "create":
      return WriteMode.CREATE;
    case "replace":
      return WriteMode.REPLACE;
    default:
      return m;
  }
}

type GrepMessage = { result: { case: "file"; value: GrepFile } | { case: "summary"; value: GrepSummary } | { case: undefined; value?: undefined } };

/**
 * The matches of a grep, one GrepFile per file in path order, as an async
 * iterable. Once the loop has ended, summary holds the GrepSummary (files
 * scanned, matches, whether the search stopped at maxMatches).
 *
 *     const g = client.grep("TODO", { glob: "*.ts" });
 *     for await (const file of g) console.log(formatGrepFile(file));
 *     console.log(g.summary?.matches);
 */
/** The page size listAll asks for when none is given (the server's most). */
export const LIST_ALL_PAGE = 100000;

export class GrepStream implements AsyncIterable<GrepFile> {
  /** The summary, set when the stream has ended. */
  summary: GrepSummary | undefined;
  private started = false;

  constructor(
    private readonly open: () => AsyncIterable<GrepMessage>,
    private readonly retry: <T>(call: () => Promise<T>) => Promise<T> = (call) => call(),
  ) {}

  async *[Symbol.asyncIterator](): AsyncIterator<GrepFile> {
    if (this.started) {
      throw new Error("hashline: a grep stream can be iterated once; call grep again");
    }
    this.started = true;
    // Opening the stream and its first message are retried (retrying);
    // once a message has arrived, an error is final.
    let it: AsyncIterator<GrepMessage> | undefined;
    const first = await this.retry(() => {
      it = this.open()[Symbol.asyncIterator]();
      return it.next();
    });
    let done = first.done;
    try {
      for (let r = first; !r.done; r = await it!.next()) {
        const msg = r.value;
        if (msg.result.case === "file") {
          yield msg.result.value;
        } else if (msg.result.case === "summary") {
          this.summary = msg.result.value;
        }
      }
      done = true;
    } finally {
      // A loop left early (break, throw) cancels the call, as for await does.
      if (!done) {
        await it!.return?.();
      }
    }
    if (this.summary === undefined) {
      throw new Error("hashline: grep stream ended without a summary");
    }
  }

  /** Reads the whole stream: every file and the summary. */
  async collect(): Promise<{ files: GrepFile[]; summary: GrepSummary }> {
    const files: GrepFile[] = [];
    for await (const f of this) {
      files.push(f);
    }
    return { files, summary: this.summary as GrepSummary };
  }
}

/**
 * A client of one hashlined server. Create it with createClient and close it
 * when done (it holds an HTTP/2 connection open).
 */
export class HashlineClient {
  /** The generated Connect client, for calls this class does not wrap. */
  readonly rpc: Client<typeof FileService>;
  private readonly sessions: Http2SessionManager;
  private readonly retry: Required<RetryOptions>;

  constructor(opts: ClientOptions = {}) {
    let baseUrl = opts.baseUrl ?? (opts.tls ? DEFAULT_BASE_URL.replace(/^http:/, "https:") : DEFAULT_BASE_URL);
    let nodeOptions: http2.SecureClientSessionOptions | undefined = opts.nodeOptions;
    if (opts.tls !== undefined) {
      if (opts.socketPath !== undefined) {
        throw new Error("hashline: tls and socketPath: TLS over a unix socket is not supported; a socket's file permissions guard it");
      }
      if (!/^https:\/\//i.test(baseUrl)) {
        throw new Error(`hashline: tls options need an https:// baseUrl, not ${baseUrl}`);
      }
      nodeOptions = { ...tlsNodeOptions(opts.tls), ...nodeOptions };
    }
    const usesTls = opts.socketPath === undefined && /^https:\/\//i.test(baseUrl);
    if (opts.workspace !== undefined) {
      const why = workspaceNameError(opts.workspace);
      if (why) {
        throw new Error(`hashline: workspace: ${why}`);
      }
    }
    if (opts.workspaceDomain !== undefined) {
      if (!opts.workspace) {
        throw new Error(`hashline: workspaceDomain ${JSON.stringify(opts.workspaceDomain)} needs workspace to name the workspace`);
      }
      if (opts.socketPath !== undefined) {
        throw new Error("hashline: workspaceDomain and socketPath: a unix socket reaches one server, not a router");
      }
      if (/[/?#@\s]/.test(opts.workspaceDomain) || opts.workspaceDomain.startsWith(".")) {
        throw new Error(`hashline: workspaceDomain ${JSON.stringify(opts.workspaceDomain)}: want a domain such as "hashline.example.com" (a port may follow)`);
      }
      // node's http2 sends the URL's host as :authority and dials it: the
      // URL names the workspace's host, and createConnection dials the
      // router's address instead.
      const real = new URL(baseUrl);
      const host = real.hostname.replace(/^\[(.*)\]$/, "$1");
      const port = Number(real.port || (usesTls ? 443 : 80));
      const authority = `${opts.workspace}.${opts.workspaceDomain}`;
      const servername = authority.replace(/:\d+$/, "");
      const secure = nodeOptions;
      baseUrl = `${real.protocol}//${authority}`;
      nodeOptions = {
        ...nodeOptions,
        createConnection: usesTls
          ? () => tlsConnect({ ...(secure as object), host, port, servername, ALPNProtocols: ["h2"] })
          : () => netConnect(port, host),
      };
    }
    if (opts.socketPath !== undefined) {
      // node's http2 dials TCP from the URL; over a unix socket the URL
      // only names the :authority, and createConnection makes the stream.
      const path = opts.socketPath;
      baseUrl = "http://localhost";
      nodeOptions = { ...nodeOptions, createConnection: () => netConnect(path) };
    }
    this.sessions = new Http2SessionManager(baseUrl, undefined, nodeOptions);
    const headers: Interceptor = (next) => async (req) => {
      if (opts.agentId) {
        req.header.set("x-agent-id", opts.agentId);
      }
      if (opts.token) {
        req.header.set("authorization", `Bearer ${opts.token}`);
      }
      if (opts.workspace) {
        req.header.set("x-hashline-workspace", opts.workspace);
      }
      return next(req);
    };
    const interceptors = [headers, traceContext, ...(opts.interceptors ?? [])];
    if (opts.workspace) {
      interceptors.push(proxyAnswers(opts.workspace));
    }
    if (opts.socketPath === undefined) {
      interceptors.push(tlsHints(baseUrl, usesTls));
    }
    if (opts.socketPath !== undefined) {
      interceptors.push(missingSocket(opts.socketPath));
    }
    const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const transport = createGrpcTransport({
      baseUrl,
      sessionManager: this.sessions,
      interceptors,
      defaultTimeoutMs: timeoutMs > 0 ? Math.ceil(timeoutMs) : undefined,
    });
    this.rpc = createConnectClient(FileService, transport);
    this.retry = opts.retry === false ? { ...DEFAULT_RETRY, maxAttempts: 1 } : { ...DEFAULT_RETRY, ...opts.retry };
  }

  /** Reads a page of a file as tagged lines (text, lines, version, truncated, nextOffset); retried while UNAVAILABLE (ClientOptions.retry). */
  read(path: string, opts: ReadOptions = {}): Promise<ReadResponse> {
    const { offset = 0, limit = 0, omitLines = false, ...call } = opts;
    return retrying(this.retry, call.signal, () => this.rpc.read({ path, offset, limit, omitLines }, wholeMs(call)));
  }

  /**
   * Applies a batch of edits, all or nothing. A reference that no longer
   * matches the file rejects with a ConnectError for which isStaleRef(err)
   * holds; staleRefs(err) has the fresh tags to retry from. Retried under
   * one request id (RetryOptions): a rejection with DEADLINE_EXCEEDED or
   * UNAVAILABLE does not mean nothing was written; to try again yourself,
   * pass the same requestId.
   */
  edit(path: string, edits: FileEditInit[], opts: EditOptions = {}): Promise<EditResponse> {
    const { baseVersion = "", dryRun = false, context, full = false, strict = false, requestId, ...call } = opts;
    const req = create(EditRequestSchema, { path, edits, baseVersion, dryRun, full, strict, requestId: requestId ?? this.requestId(dryRun) });
    if (context !== undefined) {
      req.context = context;
    }
    return this.keyed(req.requestId, call.signal, () => this.rpc.edit(req, wholeMs(call)));
  }

  /** Creates or overwrites a whole file with content, written byte for byte; retried like edit. */
  write(path: string, content: string, opts: WriteOptions = {}): Promise<WriteResponse> {
    const { mode, expectedVersion = "", requestId, ...call } = opts;
    const req = { path, content, mode: writeMode(mode), expectedVersion, requestId: requestId ?? this.requestId(false) };
    return this.keyed(req.requestId, call.signal, () => this.rpc.write(req, wholeMs(call)));
  }

  /**
   * Deletes a file, or an empty directory (else DIRECTORY_NOT_EMPTY);
   * retried like edit.
   */
  delete(path: string, opts: DeleteOptions = {}): Promise<DeleteResponse> {
    const { expectedVersion = "", requestId, ...call } = opts;
    const req = { path, expectedVersion, requestId: requestId ?? this.requestId(false) };
    return this.keyed(req.requestId, call.signal, () => this.rpc.delete(req, wholeMs(call)));
  }

  /**
   * Moves (renames) a file inside the workspace, creating to's parent
   * directories; the versions agents read move with it, so their refs hold
   * at to. An existing to is ALREADY_EXISTS unless overwrite. Retried like
   * edit.
   */
  move(from: string, to: string, opts: MoveOptions = {}): Promise<MoveResponse> {
    const { expectedVersion = "", overwrite = false, requestId, ...call } = opts;
    const req = { from, to, expectedVersion, overwrite, requestId: requestId ?? this.requestId(false) };
    return this.keyed(req.requestId, call.signal, () => this.rpc.move(req, wholeMs(call)));
  }

  /**
   * Applies a change set (edits, writes, deletes and moves of several
   * files) all or nothing: if any change fails, nothing is written and the
   * rejection's changeErrors(err) lists every failing change (staleRefs and
   * editErrors carry their changeIndex). Retried like edit, under one
   * request id.
   *
   *     await client.apply([
   *       { edit: { path: "main.go", edits: [edits.replace("4:16", "x")] } },
   *       { move: { from: "old.go", to: "new.go" } },
   *     ]);
   */
  apply(changes: ChangeInit[], opts: ApplyOptions = {}): Promise<ApplyResponse> {
    const { dryRun = false, requestId, ...call } = opts;
    let req;
    try {
      req = create(ApplyRequestSchema, { changes: changes.map(toChange), dryRun, requestId: requestId ?? this.requestId(dryRun) });
    } catch (err) {
      // A malformed change rejects, as a refused one does.
      return Promise.reject(err);
    }
    return this.keyed(req.requestId, call.signal, () => this.rpc.apply(req, wholeMs(call)));
  }

  /**
   * Describes the server: the absolute workspace root it serves (every path
   * is relative to it), its build version, its hash length and whether
   * edits need a prior read. Retried like read.
   */
  status(opts: CallOptions = {}): Promise<StatusResponse> {
    return retrying(this.retry, opts.signal, () => this.rpc.status({}, wholeMs(opts)));
  }

  /** A new request id for an edit or write, when retries are on and it writes. */
  private requestId(dryRun: boolean): string {
    return this.retry.maxAttempts > 1 && !dryRun ? newRequestId() : "";
  }

  /** Runs an edit or write: retried only under a request id. */
  private keyed<T>(requestId: string, signal: AbortSignal | undefined, call: () => Promise<T>): Promise<T> {
    return requestId === "" ? call() : retrying(this.retry, signal, call, KEYED);
  }

  /** Searches files with an RE2 pattern; iterate the result for the files, then read its summary. */
  grep(pattern: string, opts: GrepOptions = {}): GrepStream {
    const { path = "", glob, excludeGlob, type, caseInsensitive = false, literal = false, context, before, after, maxMatches = 0, hidden = false, noIgnore = false, ...call } = opts;
    const req: MessageInitShape<typeof GrepRequestSchema> = {
      pattern,
      path,
      glob: globs(glob),
      excludeGlob: globs(excludeGlob),
      type: globs(type),
      caseInsensitive,
      literal,
      before: before ?? context ?? 0,
      after: after ?? context ?? 0,
      maxMatches,
      hidden,
      noIgnore,
    };
    return new GrepStream(() => this.rpc.grep(req, wholeMs(call)), (fn) => retrying(this.retry, call.signal, fn));
  }

  /**
   * Lists one page of the entries under a directory ("" for the workspace
   * root), sorted by path with a directory right before its contents; when
   * truncated, pass nextPageToken as pageToken for the next page. Retried
   * like read.
   */
  list(path: string, opts: ListOptions = {}): Promise<ListResponse> {
    const { recursive = false, glob, maxEntries = 0, hidden = false, noIgnore = false, includeVersions = false, pageToken = "", ...call } = opts;
    const req = { path, recursive, glob: globs(glob), maxEntries, hidden, noIgnore, includeVersions, pageToken };
    return retrying(this.retry, call.signal, () => this.rpc.list(req, wholeMs(call)));
  }

  /**
   * Lists a page of the change history of a file (followed back through
   * its moves), a directory or ("") the whole workspace, newest first:
   * each change's changeId, agent, time, kind and files; when
   * nextPageToken is set, pass it as pageToken for the next page. Retried
   * like read.
   */
  history(path: string, opts: HistoryOptions = {}): Promise<HistoryResponse> {
    const { agent = "", since, until, maxEntries = 0, pageToken = "", includeDiff = false, ...call } = opts;
    const req = { path, agent, since: since && timestampFromDate(since), until: until && timestampFromDate(until), maxEntries, pageToken, includeDiff };
    return retrying(this.retry, call.signal, () => this.rpc.history(req, wholeMs(call)));
  }

  /**
   * Reads a page of a file as read does, each line with the change that
   * last wrote it (changeId, agent, time) or beforeHistory. Retried like
   * read.
   */
  blame(path: string, opts: BlameOptions = {}): Promise<BlameResponse> {
    const { offset = 0, limit = 0, ...call } = opts;
    return retrying(this.retry, call.signal, () => this.rpc.blame({ path, offset, limit }, wholeMs(call)));
  }

  /**
   * Undoes the change (or change set) changeId names, as history, blame and
   * Watch events give it, rebased over every change since: the lines it
   * wrote go back to what they were wherever they are now, and later
   * changes stay. A later change to the same lines or paths rejects with
   * REVERT_CONFLICT (hasReason(err, ErrorReason.REVERT_CONFLICT)):
   * laterChanges(err) names the changes, staleRefs(err) shows the lines
   * with fresh tags, and nothing was written. The revert is a change of
   * its own (response.changeId), which can be reverted in turn. Retried
   * like edit, under one request id.
   */
  revert(changeId: string, opts: RevertOptions = {}): Promise<RevertResponse> {
    const { dryRun = false, requestId, ...call } = opts;
    const req = { changeId, dryRun, requestId: requestId ?? this.requestId(dryRun) };
    return this.keyed(req.requestId, call.signal, () => this.rpc.revert(req, wholeMs(call)));
  }

  /**
   * Yields every entry under a directory, calling list page after page.
   * Pages are of opts.maxEntries, or without it the most entries the server
   * gives in one page (it also ends a page before its byte limit): fewer
   * calls list a whole tree faster.
   */
  async *listAll(path: string, opts: ListOptions = {}): AsyncGenerator<Entry> {
    let pageToken = opts.pageToken ?? "";
    const maxEntries = opts.maxEntries || LIST_ALL_PAGE;
    for (;;) {
      const page = await this.list(path, { ...opts, maxEntries, pageToken });
      for (const e of page.entries) {
        yield e;
      }
      if (!page.truncated || page.nextPageToken === "") {
        return;
      }
      pageToken = page.nextPageToken;
    }
  }

  /** Closes the connection; calls in flight fail. */
  close(): void {
    this.sessions.abort();
  }
}

/**
 * Creates a client.
 *
 *     const client = createClient({ baseUrl: "http://127.0.0.1:7420", agentId: "agent-1" });
 *     const file = await client.read("main.go");
 *     console.log(file.text); // "1:c9|package main\n..."
 */
export function createClient(opts: ClientOptions = {}): HashlineClient {
  return new HashlineClient(opts);
}
