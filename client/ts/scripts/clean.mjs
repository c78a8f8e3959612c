// Removes the directories named on the command line (dist before a build,
// so that no file of a removed module is packed), without a shell.
import { rmSync } from "node:fs";

for (const dir of process.argv.slice(2)) {
  rmSync(dir, { recursive: true, force: true });
}
