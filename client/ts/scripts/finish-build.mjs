// Runs after both tsc builds:
//   - marks dist/cjs as CommonJS: the package is "type": "module", so
//     without this Node would load the .js files tsc wrote there with
//     module commonjs as ES modules. require("@hashline/client") resolves
//     to dist/cjs (the "require" condition of package.json "exports"), as
//     Node 20 cannot require() an ES module;
//   - copies the repository's LICENSE into the package, so that npm pack
//     ships it (it is gitignored here; the root copy is the one source).
import { copyFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const pkg = dirname(dirname(fileURLToPath(import.meta.url)));
writeFileSync(join(pkg, "dist", "cjs", "package.json"), JSON.stringify({ type: "commonjs" }, null, 2) + "\n");
copyFileSync(join(pkg, "..", "..", "LICENSE"), join(pkg, "LICENSE"));
