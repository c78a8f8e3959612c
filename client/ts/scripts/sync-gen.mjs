// Copies the committed generated stubs (gen/ts at the repository root) into
// src/gen, so that tsc compiles them with the package and dist/ is
// self-contained. gen/ts stays the one source of truth: src/gen is
// gitignored and rewritten before every build.
import { cpSync, rmSync, existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const pkg = dirname(dirname(fileURLToPath(import.meta.url)));
const from = join(pkg, "..", "..", "gen", "ts");
const to = join(pkg, "src", "gen");
if (!existsSync(join(from, "hashline", "v1", "hashline_pb.ts"))) {
  console.error(`sync-gen: ${from} has no generated stubs; run "make generate" at the repository root`);
  process.exit(1);
}
rmSync(to, { recursive: true, force: true });
cpSync(from, to, { recursive: true, filter: (p) => !p.endsWith(".d.ts") });
