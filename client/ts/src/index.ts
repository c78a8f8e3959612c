/**
 * @hashline/client — the TypeScript client of hashlined, the one
 * authoritative file editor for a workspace shared by LLM agents.
 *
 * Read files as hashline-tagged lines ("4:16|\tprintln(\"hi\")"), edit them
 * by reference, and when another agent got there first, recover from the
 * StaleRef details the server attaches:
 *
 *     import { createClient, edits, isStaleRef, staleRefs } from "@hashline/client";
 *     const c = createClient({ agentId: "agent-1" });
 *     const file = await c.read("main.go");
 *     try {
 *       await c.edit("main.go", [edits.replace("4:16", '\tprintln("hello")')]);
 *     } catch (err) {
 *       if (!isStaleRef(err)) throw err;
 *       const fresh = staleRefs(err)[0].currentLine; // retry with this ref
 *     }
 *     c.close();
 */
export {
  createClient,
  newRequestId,
  workspaceNameError,
  HashlineClient,
  GrepStream,
  DEFAULT_BASE_URL,
  DEFAULT_TIMEOUT_MS,
  DEFAULT_RETRY,
  type ClientOptions,
  type RetryOptions,
  type TlsOptions,
  type CallOptions,
  type ReadOptions,
  type EditOptions,
  type WriteOptions,
  type WriteModeName,
  type GrepOptions,
  type ListOptions,
  type HistoryOptions,
  type BlameOptions,
  type RevertOptions,
  type DeleteOptions,
  type MoveOptions,
  type ApplyOptions,
} from "./client.js";
export { changeErrors, formatDelete, formatMove, formatApply, type ChangeInit } from "./changes.js";
export * as edits from "./edits.js";
export type { FileEditInit } from "./edits.js";
export {
  isStaleRef,
  staleRefs,
  laterChanges,
  staleRefReason,
  errorReason,
  hasReason,
  reasonName,
  reasonCode,
  parseReason,
  errorInfo,
  errorCode,
  editErrors,
  errorMessage,
} from "./errors.js";
export {
  formatTag,
  formatTagged,
  formatRead,
  formatEdit,
  formatShifts,
  formatWrite,
  formatSyntax,
  formatGrepFile,
  formatGrepSummary,
  pageBounds,
  ref,
  type TaggedLine,
} from "./format.js";
export * from "./gen/hashline/v1/hashline_pb.js";
export * from "./gen/hashline/v1/errors_pb.js";
export { Code, ConnectError } from "@connectrpc/connect";
