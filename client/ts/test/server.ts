// Helpers that build and run the real hashlined for the tests.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { createInterface } from "node:readline";
import assert from "node:assert/strict";

// build-test/test -> the repository root.
export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "..");

let built: string | undefined;

/**
 * Returns the hashlined binary: $HASHLINED_BIN when the Makefile built it,
 * else one built now with go into a temp dir.
 */
export function hashlinedBinary(): string {
  if (process.env.HASHLINED_BIN) {
    return process.env.HASHLINED_BIN;
  }
  if (built === undefined) {
    const dir = mkdtempSync(join(tmpdir(), "hashlined-bin-"));
    built = join(dir, "hashlined");
    execFileSync("go", ["build", "-o", built, "./cmd/hashlined"], { cwd: repoRoot, stdio: "inherit" });
    process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
  }
  return built;
}

/** A running hashlined on a temp workspace. */
export interface Server {
  /** The workspace directory. */
  root: string;
  /** "127.0.0.1:PORT" or "unix:///path". */
  addr: string;
  /** What the server logged on stderr so far. */
  log(): string;
  stop(): Promise<void>;
}

/** Writes files (name -> content) under dir. */
export function writeFiles(dir: string, files: Record<string, string>): void {
  for (const [name, content] of Object.entries(files)) {
    const p = join(dir, name);
    mkdirSync(dirname(p), { recursive: true });
    writeFileSync(p, content);
  }
}

/**
 * Starts hashlined on a new temp root holding files, listening on a free
 * loopback port (or on listen), and waits for its "serving" line.
 */
export async function startServer(files: Record<string, string> = {}, ...args: string[]): Promise<Server> {
  const root = mkdtempSync(join(tmpdir(), "hashline-ts-"));
  writeFiles(root, files);
  const listen = args.includes("--listen") ? [] : ["--listen", "127.0.0.1:0"];
  const proc: ChildProcess = spawn(hashlinedBinary(), ["serve", "--root", root, ...listen, ...args], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  proc.stderr!.on("data", (b: Buffer) => (stderr += b.toString()));
  const exited = new Promise<void>((res) => proc.once("exit", () => res()));
  const addr = await new Promise<string>((res, rej) => {
    const timer = setTimeout(() => rej(new Error(`hashlined did not start: ${stderr}`)), 60_000);
    proc.once("exit", (code) => {
      clearTimeout(timer);
      rej(new Error(`hashlined exited with ${code}: ${stderr}`));
    });
    createInterface({ input: proc.stdout! }).on("line", (line) => {
      const m = /^hashlined: serving .* on (.*)$/.exec(line);
      if (m) {
        clearTimeout(timer);
        res(m[1]);
      }
    });
  });
  return {
    root,
    addr,
    log: () => stderr,
    async stop() {
      proc.kill("SIGTERM");
      await exited;
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** Runs fn and returns what it threw; fails if it did not throw. */
export async function rejection(fn: () => Promise<unknown>): Promise<unknown> {
  try {
    await fn();
  } catch (err) {
    return err;
  }
  assert.fail("the call succeeded, want an error");
}
