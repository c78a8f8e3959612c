import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { ConnectError } from "@connectrpc/connect";
import {
  ChangeSchema,
  DeleteRequestSchema,
  EditRequestSchema,
  MoveRequestSchema,
  WriteRequestSchema,
  type ApplyResponse,
  type Change,
  type DeleteResponse,
  type MoveResponse,
} from "./gen/hashline/v1/hashline_pb.js";
import { ChangeErrorSchema, type ChangeError } from "./gen/hashline/v1/errors_pb.js";
import { formatEdit, formatWrite, plural, syntaxLine } from "./format.js";

/**
 * One change of a change set (HashlineClient.apply), in the shape of the
 * API's JSON and of `hashline apply`'s: exactly one of edit, write, delete
 * and move, each with the fields of the single call.
 *
 *     { edit: { path: "main.go", edits: [edits.replace("4:16", "x")] } }
 *     { write: { path: "util.go", content: "package main\n" } }
 *     { delete: { path: "old.go" } }
 *     { move: { from: "a.go", to: "pkg/a.go" } }
 */
export type ChangeInit =
  | { edit: MessageInitShape<typeof EditRequestSchema> }
  | { write: MessageInitShape<typeof WriteRequestSchema> }
  | { delete: MessageInitShape<typeof DeleteRequestSchema> }
  | { move: MessageInitShape<typeof MoveRequestSchema> };

const changeSchemas = {
  edit: EditRequestSchema,
  write: WriteRequestSchema,
  delete: DeleteRequestSchema,
  move: MoveRequestSchema,
} as const;

/**
 * Converts a ChangeInit (change index of its set) to the API's Change (its
 * oneof). A field the message does not have would be dropped without a
 * word (an expected_version, so the change would not be compare-and-swap;
 * a write's text, so the file would be emptied): it throws instead, naming
 * the field to use.
 */
export function toChange(c: ChangeInit, index = 0): Change {
  const body = c as Record<string, unknown>;
  const kinds = Object.keys(body).filter((k) => body[k] !== undefined);
  if (kinds.length !== 1) {
    throw new Error(`hashline: change ${index} holds exactly one of edit, write, delete or move, got ${kinds.length === 0 ? "none" : kinds.join(" and ")}`);
  }
  const kind = kinds[0];
  if (!Object.hasOwn(changeSchemas, kind)) {
    throw new Error(`hashline: change ${index}: unknown change ${kind}: a change is one of edit, write, delete or move`);
  }
  const schema = changeSchemas[kind as keyof typeof changeSchemas];
  const value = body[kind];
  if (typeof value !== "object" || value === null) {
    throw new Error(`hashline: change ${index} (${kind}) must be an object of its fields, not ${value === null ? "null" : typeof value}`);
  }
  const names = schema.fields.map((f) => f.localName);
  for (const key of Object.keys(value)) {
    if (names.includes(key)) continue;
    const near = schema.fields.find((f) => f.name === key || f.localName.toLowerCase() === key.toLowerCase());
    const hint = near !== undefined ? `did you mean ${near.localName}?` : `a ${kind} has ${names.filter((n) => n !== "requestId").join(", ")}`;
    throw new Error(`hashline: change ${index} (${kind}): unknown field ${key}; ${hint}`);
  }
  if (kind === "write" && (value as { content?: unknown }).content === undefined) {
    throw new Error(`hashline: change ${index} (write): the write has no content (give "" for an empty file)`);
  }
  return create(ChangeSchema, { change: { case: kind, value } } as MessageInitShape<typeof ChangeSchema>);
}

/**
 * Decodes the ChangeError details of a refused change set: one per failing
 * change (changeIndex, path, reason, message), in order. The StaleRef and
 * EditError details (staleRefs, editErrors) carry their changeIndex too.
 * Empty for any other error.
 */
export function changeErrors(err: unknown): ChangeError[] {
  if (!(err instanceof ConnectError)) {
    return [];
  }
  return err.findDetails(ChangeErrorSchema);
}

function deleteLine(r: DeleteResponse, dryRun: boolean): string {
  const verb = dryRun ? "Would delete" : "Deleted";
  return r.directory ? `${verb} directory ${r.path}` : `${verb} ${r.path} (was version ${r.version})`;
}

function moveLine(r: MoveResponse, dryRun: boolean): string {
  let s = `${dryRun ? "Would move" : "Moved"} ${r.from} to ${r.to} (version ${r.version})`;
  if (r.replacedVersion !== "") {
    s += `, replacing the file there (version ${r.replacedVersion})`;
  }
  return s;
}

/** Renders a Delete response in one line: "Deleted old.txt (was version v2-…)". */
export function formatDelete(r: DeleteResponse): string {
  return deleteLine(r, false) + "\n";
}

/** Renders a Move response in one line: "Moved a.txt to b/a.txt (version v2-…)". */
export function formatMove(r: MoveResponse): string {
  return moveLine(r, false) + "\n";
}

/**
 * Renders an applied (or dry-run) change set: one line per change, an
 * edit's as formatEdit renders it (its tagged diff holds the fresh refs),
 * then a closing line.
 */
export function formatApply(r: ApplyResponse, diff = false): string {
  let out = "";
  for (const c of r.results) {
    switch (c.result.case) {
      case "edit":
        out += formatEdit(r.dryRun ? { ...c.result.value, dryRun: true } : c.result.value, diff);
        break;
      case "write": {
        const w = c.result.value;
        out += r.dryRun
          ? `${w.created ? "Would create" : "Would overwrite"} ${w.path} (${plural(w.totalLines, "line")}, version ${w.version})\n` + syntaxLine("write", true, w)
          : formatWrite(w);
        break;
      }
      case "delete":
        out += deleteLine(c.result.value, r.dryRun) + "\n";
        break;
      case "move":
        out += moveLine(c.result.value, r.dryRun) + "\n";
        break;
    }
  }
  const n = plural(r.results.length, "change");
  return out + (r.dryRun ? `Dry run, nothing written: the ${n} can be applied together.\n` : `Applied ${n} together.\n`);
}
