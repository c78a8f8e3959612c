import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { FileEditSchema, type FileEdit } from "./gen/hashline/v1/hashline_pb.js";

/**
 * Builders for the edits of a batch. References are "LINE:HASH" strings as
 * Read and Grep return them ("12:3f"); a whole tagged line ("12:3f|...")
 * is accepted too.
 *
 *     await client.edit("main.go", [
 *       edits.replace("4:16", '\tprintln("hello")'),
 *       edits.insertAfter("5:18", "// end"),
 *     ]);
 */
export type FileEditInit = MessageInitShape<typeof FileEditSchema>;

/** Replaces lines start..end (end defaults to start) with text; "" deletes them. */
export function replace(start: string, text: string, end = ""): FileEdit {
  return create(FileEditSchema, { op: { case: "replace", value: { start, end, text } } });
}

/** Inserts text after the anchor line. */
export function insertAfter(anchor: string, text: string): FileEdit {
  return create(FileEditSchema, { op: { case: "insertAfter", value: { anchor, text } } });
}

/** Inserts text before the anchor line. */
export function insertBefore(anchor: string, text: string): FileEdit {
  return create(FileEditSchema, { op: { case: "insertBefore", value: { anchor, text } } });
}

/** Deletes lines start..end (end defaults to start). */
function deleteLines(start: string, end = ""): FileEdit {
  return create(FileEditSchema, { op: { case: "delete", value: { start, end } } });
}
export { deleteLines as delete };

/** Adds text at the end of the file; needs no reference (works on empty files). */
export function append(text: string): FileEdit {
  return create(FileEditSchema, { op: { case: "append", value: { text } } });
}

/** Adds text at the start of the file; needs no reference. */
export function prepend(text: string): FileEdit {
  return create(FileEditSchema, { op: { case: "prepend", value: { text } } });
}

/**
 * The tag-free fallback: replaces the exact oldText (which must occur once,
 * unless all) by newText.
 */
export function replaceText(oldText: string, newText: string, all = false): FileEdit {
  return create(FileEditSchema, { op: { case: "replaceText", value: { oldText, newText, all } } });
}
