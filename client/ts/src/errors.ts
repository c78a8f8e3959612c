import { Code, ConnectError } from "@connectrpc/connect";
import {
  EditErrorSchema,
  ErrorInfoSchema,
  StaleRefSchema,
  type EditError,
  type ErrorInfo,
  type StaleRef,
} from "./gen/hashline/v1/errors_pb.js";

/**
 * Returns the server's ErrorInfo detail of an error, or undefined for
 * errors that carry none (a refused connection, a local bug).
 */
export function errorInfo(err: unknown): ErrorInfo | undefined {
  if (!(err instanceof ConnectError)) {
    return undefined;
  }
  return err.findDetails(ErrorInfoSchema)[0];
}

/**
 * Returns the exact reason of a server error ("STALE_REF", "NOT_FOUND",
 * "OUTSIDE_ROOT", "VCS_METADATA" for a path in .git or another
 * version-control system's metadata, "BINARY_CONTENT" for text with a NUL
 * byte, ...; the list is in the server's README), or undefined when the
 * error carries none.
 */
export function errorReason(err: unknown): string | undefined {
  return errorInfo(err)?.reason || undefined;
}

/** Returns the gRPC code of an error, or undefined if it is not an RPC error. */
export function errorCode(err: unknown): Code | undefined {
  return err instanceof ConnectError ? err.code : undefined;
}

/**
 * Reports whether err is an Edit refused because references no longer match
 * the file (reason STALE_REF). staleRefs(err) then gives the fresh tags to
 * retry from.
 */
export function isStaleRef(err: unknown): err is ConnectError {
  return err instanceof ConnectError && err.code === Code.Aborted && errorReason(err) === "STALE_REF";
}

/**
 * Decodes the StaleRef details of an error: one per failing reference, each
 * with the current line (currentLine, tagged, "" if gone) and the fresh
 * tagged lines around it. Empty for any other error. The details are kept
 * even when another reason (say INVALID_REF in the same batch) decided the
 * error's code.
 */
export function staleRefs(err: unknown): StaleRef[] {
  if (!(err instanceof ConnectError)) {
    return [];
  }
  return err.findDetails(StaleRefSchema);
}

/** Decodes the EditError details: one per bad edit of a refused batch. */
export function editErrors(err: unknown): EditError[] {
  if (!(err instanceof ConnectError)) {
    return [];
  }
  return err.findDetails(EditErrorSchema);
}

/**
 * Returns the server's message of an error without Connect's "[code]"
 * prefix: for a stale reference, the view of the current lines with ">>>"
 * on the changed ones, ready for a model to read.
 */
export function errorMessage(err: unknown): string {
  if (err instanceof ConnectError) {
    return err.rawMessage;
  }
  return err instanceof Error ? err.message : String(err);
}
