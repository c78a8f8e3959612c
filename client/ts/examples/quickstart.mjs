// Two agents edit one file through hashlined: the second one's edit is
// refused as stale, with the fresh tags, and its retry from them succeeds.
//
//   hashlined serve &              (in any directory; it becomes the workspace)
//   node examples/quickstart.mjs   (after npm ci && npm run build here)
//
// HASHLINE_URL overrides the server address (default http://127.0.0.1:7420).
import { createClient, edits, isStaleRef, staleRefs, errorMessage, formatRead, formatEdit, ref } from "../dist/index.js";

const baseUrl = process.env.HASHLINE_URL ?? "http://127.0.0.1:7420";
const alice = createClient({ baseUrl, agentId: "alice" });
const bob = createClient({ baseUrl, agentId: "bob" });
try {
  await alice.write("quickstart.py", 'def greet(name):\n    return "hello " + name\n');
  const seen = await bob.read("quickstart.py");
  console.log(formatRead(await alice.read("quickstart.py")));

  // Alice changes line 2.
  await alice.edit("quickstart.py", [edits.replace("2:08", '    return f"hello {name}"')]);

  // Bob edits line 2 with the tag he read before Alice's change.
  try {
    await bob.edit("quickstart.py", [edits.replace(ref(seen.lines[1]), '    return "hi " + name')]);
  } catch (err) {
    if (!isStaleRef(err)) throw err;
    console.log("stale, nothing written:\n" + errorMessage(err) + "\n");
    const [stale] = staleRefs(err);
    const retried = await bob.edit("quickstart.py", [edits.replace(stale.currentLine, '    return f"hi {name}"')]);
    console.log(formatEdit(retried));
  }
} finally {
  alice.close();
  bob.close();
}
