// Checks the package a stranger installs: npm pack, install the tarball into
// a fresh project, then load it from an ES module (import) and from CommonJS
// (require), and type-check a TypeScript consumer of each. The install is
// offline (--prefer-offline, --offline when npm's cache already holds the
// dependencies, as it does after npm ci), so it needs no registry.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const pkg = dirname(dirname(fileURLToPath(import.meta.url)));
const tmp = mkdtempSync(join(tmpdir(), "hashline-pack-"));
const npm = process.platform === "win32" ? "npm.cmd" : "npm";
const run = (cmd, args, cwd) => execFileSync(cmd, args, { cwd, stdio: ["ignore", "pipe", "inherit"], shell: process.platform === "win32" }).toString();

function fail(msg) {
  console.error(`test:pack: ${msg}`);
  process.exitCode = 1;
}

try {
  // prepack builds dist, so the tarball never holds a stale or missing build.
  const packed = JSON.parse(run(npm, ["pack", "--json", "--pack-destination", tmp], pkg));
  const files = new Set(packed[0].files.map((f) => f.path));
  for (const want of ["package.json", "LICENSE", "README.md", "dist/index.js", "dist/index.d.ts", "dist/index.js.map", "dist/index.d.ts.map",
    "dist/cjs/index.js", "dist/cjs/index.d.ts", "dist/cjs/package.json", "dist/gen/hashline/v1/hashline_pb.js", "src/index.ts"]) {
    if (!files.has(want)) fail(`the tarball lacks ${want}`);
  }
  for (const f of files) {
    if (f.startsWith("test/") || f.startsWith("build-test/") || f.startsWith("node_modules/")) fail(`the tarball holds ${f}`);
  }
  const tarball = join(tmp, packed[0].filename);

  const app = join(tmp, "app");
  run("node", ["-e", `require("fs").mkdirSync(${JSON.stringify(app)})`], tmp);
  writeFileSync(join(app, "package.json"), JSON.stringify({ name: "pack-test", version: "0.0.0", private: true }));
  run(npm, ["install", tarball, "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error"], app);

  const check = (client, status) => `
    if (typeof createClient !== "function") throw new Error("createClient is " + typeof createClient);
    const c = createClient({ baseUrl: "http://127.0.0.1:1" });
    if (typeof c.status !== "function" || typeof c.read !== "function") throw new Error("the client lacks status or read");
    c.close();
    if (typeof ${status} !== "object") throw new Error("the generated schemas are missing");
    console.log("${client} ok");`;
  writeFileSync(join(app, "esm.mjs"), `import { createClient, StatusResponseSchema } from "@hashline/client";\n` + check("import", "StatusResponseSchema"));
  writeFileSync(join(app, "cjs.cjs"), `const { createClient, StatusResponseSchema } = require("@hashline/client");\n` + check("require", "StatusResponseSchema"));
  for (const [file, want] of [["esm.mjs", "import ok"], ["cjs.cjs", "require ok"]]) {
    const out = run("node", [file], app);
    if (!out.includes(want)) fail(`${file} printed ${JSON.stringify(out)}`);
  }
  // The CommonJS entry must be the CommonJS build, not the ES one.
  const resolved = run("node", ["-e", `console.log(require.resolve("@hashline/client"))`], app).trim();
  if (!resolved.endsWith(join("dist", "cjs", "index.js"))) fail(`require resolves to ${resolved}`);

  // Types through both conditions, with this package's own tsc and
  // without skipLibCheck: the dependencies' declarations must compile too.
  const tsc = join(pkg, "node_modules", "typescript", "bin", "tsc");
  writeFileSync(join(app, "esm.mts"), `import { createClient, type StatusResponse } from "@hashline/client";\nconst s: Promise<StatusResponse> = createClient().status();\nvoid s;\n`);
  writeFileSync(join(app, "cjs.cts"), `import { createClient, type StatusResponse } from "@hashline/client";\nconst s: Promise<StatusResponse> = createClient().status();\nvoid s;\n`);
  run("node", [tsc, "--noEmit", "--strict", "--module", "nodenext", "--moduleResolution", "nodenext", "--lib", "es2022,dom", "--types", "node",
    "--typeRoots", join(pkg, "node_modules", "@types"), "esm.mts", "cjs.cts"], app);
  const version = JSON.parse(readFileSync(join(app, "node_modules", "@hashline", "client", "package.json"), "utf8")).version;
  if (process.exitCode !== 1) console.log(`test:pack: ${packed[0].filename} (${version}) installs and loads through import and require, with types`);
} catch (err) {
  fail(String(err?.message ?? err));
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
