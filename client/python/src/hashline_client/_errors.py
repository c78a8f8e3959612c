"""Errors of hashlined decoded from gRPC statuses, and the reason enum."""

from __future__ import annotations

import json
import re
from http import HTTPStatus
from typing import Dict, List, Optional, Tuple, Union

import grpc

from ._gen.hashline.v1 import errors_pb2

ErrorReason = errors_pb2.ErrorReason
StaleRefReason = errors_pb2.StaleRefReason

_REASON_PREFIX = "ERROR_REASON_"
_STALE_PREFIX = "STALE_REF_REASON_"

# StatusCode by number: grpc.StatusCode values are (number, name) pairs.
_CODES = {c.value[0]: c for c in grpc.StatusCode}


def reason_name(reason: int) -> str:
    """The string the server sends for an ErrorReason in ErrorInfo.reason
    and EditError.reason, and that HashlineError.reason holds: the value's
    name without its ERROR_REASON_ prefix ("STALE_REF"); "" for
    ERROR_REASON_UNSPECIFIED and numbers the enum does not have."""
    if reason == ErrorReason.Value("ERROR_REASON_UNSPECIFIED"):
        return ""
    try:
        return ErrorReason.Name(reason)[len(_REASON_PREFIX):]
    except ValueError:
        return ""


def parse_reason(name: str) -> int:
    """The ErrorReason a reason string names (the inverse of reason_name),
    or ERROR_REASON_UNSPECIFIED for one this client does not know, such as
    a newer server's."""
    if not name or name == "UNSPECIFIED":
        return ErrorReason.Value("ERROR_REASON_UNSPECIFIED")
    try:
        return ErrorReason.Value(_REASON_PREFIX + name)
    except ValueError:
        return ErrorReason.Value("ERROR_REASON_UNSPECIFIED")


def reason_code(reason: int) -> Optional[grpc.StatusCode]:
    """The gRPC code the server always sends an ErrorReason with, as its
    grpc_code option in errors.proto declares it (ABORTED for STALE_REF);
    None for ERROR_REASON_UNSPECIFIED and numbers the enum does not have."""
    value = ErrorReason.DESCRIPTOR.values_by_number.get(reason)
    if value is None:
        return None
    code = value.GetOptions().Extensions[errors_pb2.grpc_code]
    if code == errors_pb2.GrpcCode.Value("GRPC_CODE_UNSPECIFIED"):
        return None
    return _CODES.get(code)


def stale_ref_reason(ref: errors_pb2.StaleRef) -> int:
    """Why a StaleRef is stale (STALE_REF_REASON_CHANGED, DELETED, CONFLICT,
    NOT_SHOWN), or STALE_REF_REASON_UNSPECIFIED for a reason this client does
    not know."""
    try:
        return StaleRefReason.Value(_STALE_PREFIX + ref.reason) if ref.reason else 0
    except ValueError:
        return 0


class HashlineError(Exception):
    """A call that failed: the server's answer decoded from its status, or a
    status the transport made (a server that cannot be reached is
    UNAVAILABLE with no reason). StaleRefError is the subclass for
    STALE_REF."""

    code: grpc.StatusCode
    """The gRPC status code."""
    reason: str
    """The server's exact reason ("NOT_FOUND", "STALE_REF"; see ErrorReason),
    kept as sent when it is newer than this client; "" when there is none."""
    message: str
    """The server's message, written for a model to act on."""
    metadata: Dict[str, str]
    """Extra facts, such as "currentVersion"."""
    edits: List[errors_pb2.EditError]
    """The bad edits of a refused batch."""
    stale: List[errors_pb2.StaleRef]
    """Stale references, even when another reason decided the code."""
    changes: List[errors_pb2.ChangeError]
    """Every failing change of a refused change set (apply), in order."""
    later: List[errors_pb2.LaterChange]
    """The later changes a refused revert met (REVERT_CONFLICT), oldest
    first: change_id, agent and path; stale then shows the lines as they
    are now, with fresh tags."""
    retry_delay: float
    """Seconds to wait before trying again, when the server said
    (RATE_LIMITED); 0 otherwise."""
    http_status: int
    """The HTTP status of an answer that was not gRPC's: an error page from
    a proxy in front of hashlined (an Ingress controller's default backend,
    a load balancer), which hashlined never sends; 0 otherwise. For a
    Client given a workspace, a 404 is NOT_FOUND and a 502, 503 or 504
    UNAVAILABLE, with a message that names the workspace, says what to do
    and ends with gRPC's words; without one, code and message are gRPC's
    (404: UNIMPLEMENTED)."""

    def __init__(self, code: grpc.StatusCode, message: str, reason: str = "", metadata: Optional[Dict[str, str]] = None,
                 edits=(), stale=(), changes=(), retry_delay: float = 0.0, later=(), http_status: int = 0):
        self.code = code
        self.message = message
        self.reason = reason
        self.metadata = dict(metadata or {})
        self.edits = list(edits)
        self.stale = list(stale)
        self.changes = list(changes)
        self.later = list(later)
        self.retry_delay = retry_delay
        self.http_status = http_status
        super().__init__(str(self))

    def __str__(self) -> str:
        if self.reason:
            return f"hashline: {self.reason} ({self.code.name}): {self.message}"
        return f"hashline: {self.code.name}: {self.message}"

    @property
    def reason_value(self) -> int:
        """The reason as an ErrorReason value (ERROR_REASON_UNSPECIFIED for
        none, or one newer than this client)."""
        return parse_reason(self.reason)

    def has_reason(self, reason: Union[int, str]) -> bool:
        """Whether the error's reason is reason, an ErrorReason value or its
        name ("NOT_FOUND")."""
        name = reason if isinstance(reason, str) else reason_name(reason)
        return bool(name) and name == self.reason


class StaleRefError(HashlineError):
    """An edit refused because references no longer match the file
    (reason STALE_REF, code ABORTED): nothing was written. refs has one
    StaleRef per failing reference, with current_line and fresh, the tagged
    lines to retry from; message is the same as a view a model can read
    (">>>" on the changed lines)."""

    @property
    def refs(self) -> List[errors_pb2.StaleRef]:
        return self.stale

    @property
    def current_version(self) -> str:
        """The version the fresh lines come from."""
        return self.metadata.get("currentVersion", "")


_DETAILS_KEY = "grpc-status-details-bin"
_TYPE_PREFIX = "type.googleapis.com/"


def _varint(buf: bytes, i: int) -> Tuple[int, int]:
    shift = result = 0
    while True:
        if i >= len(buf):
            raise ValueError("truncated varint")
        b = buf[i]
        i += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, i
        shift += 7


def _fields(buf: bytes):
    """The (number, value) of each varint or length-delimited field of a
    message's wire form; other wire types are skipped."""
    i = 0
    while i < len(buf):
        key, i = _varint(buf, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = _varint(buf, i)
        elif wt == 2:
            n, i = _varint(buf, i)
            v, i = buf[i:i + n], i + n
        elif wt == 1:
            v, i = None, i + 8
        elif wt == 5:
            v, i = None, i + 4
        else:
            raise ValueError(f"wire type {wt}")
        yield num, v


def _status_details(trailing) -> List[Tuple[str, bytes]]:
    """The (type URL, value) of each detail of the google.rpc.Status in the
    trailers. Decoded by hand (field 3, repeated google.protobuf.Any): the
    message is three fields, and its generated class would need one more
    dependency (googleapis-common-protos) for nothing else."""
    raw = None
    for key, value in trailing or ():
        if key == _DETAILS_KEY:
            raw = value
    if not raw:
        return []
    out = []
    try:
        for num, v in _fields(raw):
            if num != 3 or not isinstance(v, bytes):
                continue
            url, value = "", b""
            for anum, av in _fields(v):
                if anum == 1:
                    url = av.decode("utf-8")
                elif anum == 2:
                    value = av
            out.append((url, value))
    except (ValueError, UnicodeDecodeError):
        return out
    return out


_DETAIL_TYPES = {
    "hashline.v1.ErrorInfo": errors_pb2.ErrorInfo,
    "hashline.v1.EditError": errors_pb2.EditError,
    "hashline.v1.StaleRef": errors_pb2.StaleRef,
    "hashline.v1.ChangeError": errors_pb2.ChangeError,
    "hashline.v1.RetryInfo": errors_pb2.RetryInfo,
    "hashline.v1.LaterChange": errors_pb2.LaterChange,
}


# How gRPC's C core reports an answer that was not gRPC's: an HTTP error
# page, which only something in front of hashlined sends (a proxy, an
# Ingress controller's default backend), since hashlined answers every
# call, an unknown RPC included, with a gRPC status. The core gives it the
# code of the HTTP status (404 UNIMPLEMENTED, 502, 503 and 504
# UNAVAILABLE), so the message, not the code, tells a proxy's 404 from an
# older hashlined's UNIMPLEMENTED.
_HTTP_STATUS = re.compile(r"^Received http2 header with status: (\d{3})\b")


def _proxy_answer(workspace: str, status: int, message: str) -> Optional[Tuple[grpc.StatusCode, str]]:
    """What a proxy's HTTP error page means for the client's workspace, as
    the repository's router (deploy/nginx) answers it itself: a 404 is a
    workspace the proxy routes nowhere, a 502, 503 or 504 one whose
    hashlined is down, restarting or not answering. The message ends with
    gRPC's words; None for any other status."""
    q = json.dumps(workspace)
    answered = f"the proxy answered HTTP {status} {_http_phrase(status)}, not a hashlined"
    if status == 404:
        return grpc.StatusCode.NOT_FOUND, (
            f"no workspace {q} behind this router ({answered}); nothing was done. Check the workspace name, "
            f"and that its hashlined is deployed and routed. The proxy's answer: {message}")
    if status in (502, 503, 504):
        return grpc.StatusCode.UNAVAILABLE, (
            f"workspace {q}'s hashlined is down, restarting or not answering ({answered}). Retry in a few seconds; "
            f"if it persists, check that it is deployed and running. The proxy's answer: {message}")
    return None


def _http_phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ""


def from_rpc_error(err: grpc.RpcError, workspace: str = "") -> HashlineError:
    """Decodes a grpc.RpcError (as the generated stubs raise it) into a
    HashlineError, or a StaleRefError for STALE_REF. With workspace, the
    one the call was meant for, a proxy's HTTP 404, 502, 503 or 504 in
    place of hashlined's answer is said in its words (see http_status)."""
    code = err.code() if hasattr(err, "code") else grpc.StatusCode.UNKNOWN
    message = (err.details() if hasattr(err, "details") else str(err)) or ""
    trailing = err.trailing_metadata() if hasattr(err, "trailing_metadata") else None
    reason, metadata, edits, stale, changes, later, delay = "", {}, [], [], [], [], 0.0
    for url, value in _status_details(trailing):
        cls = _DETAIL_TYPES.get(url[len(_TYPE_PREFIX):] if url.startswith(_TYPE_PREFIX) else url)
        if cls is None:
            continue
        try:
            d = cls.FromString(value)
        except Exception:  # a detail this client cannot decode is left out
            continue
        if cls is errors_pb2.ErrorInfo:
            reason, metadata = d.reason, dict(d.metadata)
        elif cls is errors_pb2.EditError:
            edits.append(d)
        elif cls is errors_pb2.StaleRef:
            stale.append(d)
        elif cls is errors_pb2.ChangeError:
            changes.append(d)
        elif cls is errors_pb2.LaterChange:
            later.append(d)
        else:
            delay = d.retry_delay.seconds + d.retry_delay.nanos / 1e9
    http_status = 0
    m = _HTTP_STATUS.match(message) if not reason else None
    if m:
        http_status = int(m.group(1))
        translated = _proxy_answer(workspace, http_status, message) if workspace else None
        if translated:
            code, message = translated
    cls = StaleRefError if reason == "STALE_REF" else HashlineError
    return cls(code or grpc.StatusCode.UNKNOWN, message, reason, metadata, edits, stale, changes, delay, later, http_status)
