import { getOption } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  EditErrorSchema,
  ErrorInfoSchema,
  ErrorReason,
  ErrorReasonSchema,
  GrpcCode,
  grpc_code,
  LaterChangeSchema,
  StaleRefReason,
  StaleRefSchema,
  type EditError,
  type ErrorInfo,
  type LaterChange,
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
 * Returns the exact reason of a server error as sent ("STALE_REF",
 * "NOT_FOUND", "OUTSIDE_ROOT", ...), or undefined when the error carries
 * none. The reasons are the values of the ErrorReason enum, whose
 * documentation says what each means; a reason newer than this client is
 * returned as sent. hasReason compares with the enum.
 */
export function errorReason(err: unknown): string | undefined {
  return errorInfo(err)?.reason || undefined;
}

/**
 * Reports whether err is a server error with the reason r:
 * hasReason(err, ErrorReason.NOT_FOUND).
 */
export function hasReason(err: unknown, r: ErrorReason): boolean {
  return r !== ErrorReason.UNSPECIFIED && parseReason(errorReason(err) ?? "") === r;
}

/**
 * Returns the string the server sends for r ("STALE_REF" for
 * ErrorReason.STALE_REF), or "" for UNSPECIFIED and numbers the enum does
 * not have.
 */
export function reasonName(r: ErrorReason): string {
  return r === ErrorReason.UNSPECIFIED ? "" : (ErrorReason[r] ?? "");
}

/**
 * Returns the ErrorReason a reason string names, or UNSPECIFIED for one
 * this client does not know (a newer server's).
 */
export function parseReason(reason: string): ErrorReason {
  return enumValue(ErrorReason, reason) ?? ErrorReason.UNSPECIFIED;
}

/**
 * Returns the gRPC code the server always sends reason r with, as the
 * value's grpc_code option in errors.proto declares it (Code.Aborted for
 * ErrorReason.STALE_REF), or undefined for UNSPECIFIED and numbers the
 * enum does not have. Connect's Code numbers the codes as gRPC does.
 */
export function reasonCode(r: ErrorReason): Code | undefined {
  const value = ErrorReasonSchema.value[r];
  if (value === undefined) {
    return undefined;
  }
  const c = getOption(value, grpc_code);
  return c === GrpcCode.UNSPECIFIED ? undefined : (c as number as Code);
}

/**
 * Returns why a StaleRef is stale (StaleRefReason.CHANGED, DELETED or
 * CONFLICT), or UNSPECIFIED for a reason this client does not know.
 */
export function staleRefReason(ref: StaleRef): StaleRefReason {
  return enumValue(StaleRefReason, ref.reason) ?? StaleRefReason.UNSPECIFIED;
}

/**
 * Looks a wire name up in a generated enum. Own keys only: the enum object
 * also maps numbers back to names, and inherits Object's properties.
 */
function enumValue<E extends number>(e: Record<string, string | number>, name: string): E | undefined {
  if (name === "UNSPECIFIED" || !Object.prototype.hasOwnProperty.call(e, name)) {
    return undefined;
  }
  const v = e[name];
  return typeof v === "number" ? (v as E) : undefined;
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
  return err instanceof ConnectError && err.code === Code.Aborted && hasReason(err, ErrorReason.STALE_REF);
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

/**
 * Decodes the LaterChange details of a refused revert (REVERT_CONFLICT):
 * the later changes in its way, oldest first, each with its changeId,
 * agent and path.
 */
export function laterChanges(err: unknown): LaterChange[] {
  if (!(err instanceof ConnectError)) {
    return [];
  }
  return err.findDetails(LaterChangeSchema);
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
