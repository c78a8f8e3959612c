// The reason helpers against the generated enums; no server needed.
import { test } from "node:test";
import assert from "node:assert/strict";

import { Code, ConnectError } from "@connectrpc/connect";
import { create } from "@bufbuild/protobuf";

import {
  ErrorInfoSchema,
  ErrorReason,
  StaleRefReason,
  StaleRefSchema,
  hasReason,
  isStaleRef,
  parseReason,
  reasonCode,
  reasonName,
  staleRefReason,
} from "../src/index.js";

/** A ConnectError carrying an ErrorInfo with the reason string as sent. */
function withReason(reason: string, code = Code.Aborted): ConnectError {
  return new ConnectError("m", code, undefined, [{ desc: ErrorInfoSchema, value: { reason, domain: "hashline.v1" } }]);
}

const reasons = Object.values(ErrorReason).filter((v): v is ErrorReason => typeof v === "number" && v !== ErrorReason.UNSPECIFIED);

test("every ErrorReason's name is the string the server sends, and parses back", () => {
  assert.ok(reasons.length >= 37, `${reasons.length} reasons`);
  for (const r of reasons) {
    const name = reasonName(r);
    assert.match(name, /^[A-Z_]+$/);
    assert.equal(name.startsWith("ERROR_REASON"), false, name);
    assert.equal(parseReason(name), r);
    assert.equal(hasReason(withReason(name), r), true, name);
  }
  assert.equal(reasonName(ErrorReason.STALE_REF), "STALE_REF");
  assert.equal(reasonName(ErrorReason.IO_ERROR), "IO_ERROR");
});

test("strings that are no reason parse as UNSPECIFIED and match nothing", () => {
  for (const s of ["", "UNSPECIFIED", "ERROR_REASON_STALE_REF", "stale_ref", "SOMETHING_NEWER", "0", "1", "constructor", "__proto__", "toString"]) {
    assert.equal(parseReason(s), ErrorReason.UNSPECIFIED, s);
    const err = withReason(s);
    assert.equal(reasons.some((r) => hasReason(err, r)), false, s);
  }
  assert.equal(reasonName(ErrorReason.UNSPECIFIED), "");
  assert.equal(reasonName(9999 as ErrorReason), "");
  assert.equal(hasReason(new Error("STALE_REF"), ErrorReason.STALE_REF), false);
  assert.equal(hasReason(withReason(""), ErrorReason.UNSPECIFIED), false);
});

test("isStaleRef needs both the ABORTED code and the STALE_REF reason", () => {
  assert.equal(isStaleRef(withReason("STALE_REF")), true);
  assert.equal(isStaleRef(withReason("STALE_REF", Code.InvalidArgument)), false);
  assert.equal(isStaleRef(withReason("VERSION_MISMATCH")), false);
});

test("reasonCode gives every ErrorReason the code its grpc_code option declares", () => {
  for (const r of reasons) {
    const c = reasonCode(r);
    assert.ok(c !== undefined && Code[c] !== undefined, `${reasonName(r)}: ${c}`);
  }
  // The codes clients already switch on, as the Go client's test has them.
  assert.equal(reasonCode(ErrorReason.STALE_REF), Code.Aborted);
  assert.equal(reasonCode(ErrorReason.NOT_FOUND), Code.NotFound);
  assert.equal(reasonCode(ErrorReason.IO_ERROR), Code.Internal);
  assert.equal(reasonCode(ErrorReason.CANCELED), Code.Canceled);
  assert.equal(reasonCode(ErrorReason.UNAUTHENTICATED), Code.Unauthenticated);
  assert.equal(reasonCode(ErrorReason.WATCH_UNAVAILABLE), Code.Unavailable);
  assert.equal(reasonCode(ErrorReason.UNSPECIFIED), undefined);
  assert.equal(reasonCode(9999 as ErrorReason), undefined);
});

test("staleRefReason reads StaleRef.reason through the enum", () => {
  const ref = (reason: string) => create(StaleRefSchema, { reason });
  assert.equal(staleRefReason(ref("CHANGED")), StaleRefReason.CHANGED);
  assert.equal(staleRefReason(ref("DELETED")), StaleRefReason.DELETED);
  assert.equal(staleRefReason(ref("CONFLICT")), StaleRefReason.CONFLICT);
  for (const s of ["", "UNSPECIFIED", "STALE_REF", "changed", "1"]) {
    assert.equal(staleRefReason(ref(s)), StaleRefReason.UNSPECIFIED, s);
  }
});
