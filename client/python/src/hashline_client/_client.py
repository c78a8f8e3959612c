"""The client: a channel to one hashlined, with deadlines, retries and
request ids, over the generated stub."""

from __future__ import annotations

import os
import random
import re
import secrets
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Tuple, TypeVar, Union

import grpc

from ._errors import HashlineError, from_rpc_error
from ._gen.hashline.v1 import hashline_pb2, hashline_pb2_grpc

DEFAULT_TARGET = "127.0.0.1:7420"
"""Where hashlined listens unless told otherwise."""

DEFAULT_TIMEOUT = 30.0
"""The deadline, in seconds, of a call that sets none."""

LIST_ALL_PAGE = 100000
"""The page size list_all asks for when none is given: the most entries
the server gives in one page."""

AGENT_METADATA_KEY = "x-agent-id"
"""The request metadata that names the calling agent."""

WORKSPACE_METADATA_KEY = "x-hashline-workspace"
"""The request metadata that names the workspace a call is meant for."""

MAX_WORKSPACE_NAME = 63
"""The longest workspace name: a DNS label."""


def workspace_name_error(name: str) -> Optional[str]:
    """Why name is not a workspace name (a DNS label, as hashlined
    --workspace takes: 1 to 63 lowercase letters, digits and '-', starting
    and ending with a letter or digit), or None when it is one."""
    q = '"' + name[:MAX_WORKSPACE_NAME] + '"' + ("..." if len(name) > MAX_WORKSPACE_NAME else "")
    if not name:
        return "the workspace name is empty: name one, e.g. \"alpha\" (lowercase letters, digits and '-', at most 63)"
    if len(name) > MAX_WORKSPACE_NAME:
        return f"workspace name {q} is {len(name)} characters: at most 63 (a DNS label)"
    if "/" in name or "\\" in name or ".." in name:
        return f"workspace name {q} has path syntax: a workspace is named, not a directory; use its name alone, e.g. \"alpha\""
    if any(c in name for c in ".:@[]"):
        return f"workspace name {q} has host syntax: use the workspace's name alone (\"alpha\"), not a host, domain or port"
    if re.fullmatch(r"[A-Za-z0-9-]+", name) and name != name.lower():
        return f"workspace name {q} has upper case: workspace names are lowercase (\"{name.lower()}\")"
    if not re.fullmatch(r"[a-z0-9]([a-z0-9-]*[a-z0-9])?", name):
        return f"workspace name {q}: use only lowercase letters, digits and '-', starting and ending with a letter or digit"
    return None

T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    """How calls are retried when the server is UNAVAILABLE (not listening
    yet, restarting, or the connection broke). No other code is retried,
    except DEADLINE_EXCEEDED from the server for the calls that change
    files (edit, write, delete, move, apply) while the call's deadline
    still has time: every other error is an answer.

    read, list, status and grep (until its first file) are retried freely
    because they change nothing. A change cut off after it was sent may
    have been applied, so sending it again must not apply it twice: with
    retries on, every change carries a request_id (the caller's, or a
    random one, see new_request_id), the same in every attempt, and the
    server answers a retry with the first attempt's outcome instead of
    applying it again."""

    max_attempts: int = 4
    """Attempts, the first included; 0 or 1 means no retries."""
    initial_backoff: float = 0.1
    """Seconds before the first retry; later waits grow by multiplier up to
    max_backoff, each with up to 20% random jitter."""
    max_backoff: float = 2.0
    multiplier: float = 3.0

    def backoff(self, n: int) -> float:
        """The wait before retry n (1-based)."""
        d = self.initial_backoff * max(self.multiplier, 1.0) ** (n - 1)
        if self.max_backoff > 0:
            d = min(d, self.max_backoff)
        return d * (1 + 0.2 * random.random())


DEFAULT_RETRY = RetryPolicy()
"""Up to 4 attempts over about 1.5 s: rides out a server restart without
hiding a server that is down (the Go and TypeScript clients' policy)."""

NO_RETRY = RetryPolicy(max_attempts=1)
"""No retries, and so no request ids added to changes."""


@dataclass(frozen=True)
class TLS:
    """TLS for a server started with --tls-cert, as the hashline CLI's
    --tls-* flags: a private CA to trust (ca, PEM bytes, or ca_file), a
    client certificate and its key for mutual TLS (--tls-client-ca), and the
    name the server's certificate must hold when it is not the target's
    host. TLS() trusts the roots gRPC ships."""

    ca: Optional[bytes] = None
    ca_file: Optional[str] = None
    cert: Optional[bytes] = None
    cert_file: Optional[str] = None
    key: Optional[bytes] = None
    key_file: Optional[str] = None
    server_name: Optional[str] = None

    def credentials(self) -> grpc.ChannelCredentials:
        def pem(what: str, value: Optional[bytes], file: Optional[str]) -> Optional[bytes]:
            if value is not None and file is not None:
                raise ValueError(f"hashline: TLS {what} and {what}_file both given: give one")
            if file is None:
                return value.encode() if isinstance(value, str) else value
            try:
                with open(file, "rb") as f:
                    return f.read()
            except OSError as e:
                raise ValueError(f"hashline: TLS {what}_file {file}: {e.strerror}") from e

        ca = pem("ca", self.ca, self.ca_file)
        cert = pem("cert", self.cert, self.cert_file)
        key = pem("key", self.key, self.key_file)
        if (cert is None) != (key is None):
            raise ValueError("hashline: TLS cert and key go together (the client certificate and its private key): give both, or neither")
        return grpc.ssl_channel_credentials(root_certificates=ca, private_key=key, certificate_chain=cert)


def new_request_id() -> str:
    """A random request id, 32 hex digits. Pass it as request_id to a change
    you may send again yourself (after DEADLINE_EXCEEDED, say), the same in
    each: hashlined applies it once and answers every retry with the first
    outcome. The client makes one itself when retries are on and none is
    given."""
    return secrets.token_hex(16)


# A TLS handshake that failed on a named mismatch fails the same way every
# time, so it is not retried (as the Go client's DiagnoseTLS classes).
_TLS_MISMATCH = ("CERTIFICATE_VERIFY_FAILED", "is not in peer certificate", "certificate verify failed")


def _unavailable(err: grpc.RpcError) -> bool:
    if err.code() != grpc.StatusCode.UNAVAILABLE:
        return False
    details = err.details() or ""
    return not any(s in details for s in _TLS_MISMATCH)


def _keyed(err: grpc.RpcError) -> bool:
    return _unavailable(err) or err.code() == grpc.StatusCode.DEADLINE_EXCEEDED


def _split_target(target: str, tls: Optional[TLS]) -> Tuple[str, bool]:
    """The gRPC target of an address, and whether it uses TLS."""
    orig = target
    scheme = ""
    for s in ("https://", "http://"):
        if target.lower().startswith(s):
            scheme, target = s, target[len(s):]
    if scheme:
        if not target or any(c in target for c in "/?#"):
            raise ValueError(f"hashline: target {orig}: want {scheme}host:port")
        if scheme == "http://" and tls is not None:
            raise ValueError(f"hashline: target {orig}: http:// is plaintext but TLS was asked for: use https://")
        return target, scheme == "https://" or tls is not None
    if target.startswith("unix:"):
        if tls is not None:
            raise ValueError("hashline: TLS over a unix socket is not supported; a socket's file permissions guard it")
        return target, False
    return target, tls is not None


class GrepStream(Iterator[hashline_pb2.GrepFile]):
    """The matches of a grep, one GrepFile per file in path order. Once the
    loop has ended, summary holds the GrepSummary (files scanned, matches,
    whether the search stopped at max_matches)::

        g = client.grep("TODO", glob="*.py")
        for f in g:
            print(f.path, [l.number for l in f.lines if l.match])
        print(g.summary.matches)

    Opening the stream is retried while the server is UNAVAILABLE until
    the first message arrives; after that an error is final, since a retry
    would repeat files. Leaving the loop early: call cancel() (or use the
    stream as a context manager)."""

    summary: Optional[hashline_pb2.GrepSummary]

    def __init__(self, client: "Client", req: hashline_pb2.GrepRequest, timeout: Optional[float]):
        self.summary = None
        self._it = self._run(client, req, timeout)
        self._call = None
        self._lock = threading.Lock()
        self._cancelled = False

    def _open(self, client: "Client", req, deadline, md):
        with self._lock:
            if self._cancelled:
                raise HashlineError(grpc.StatusCode.CANCELLED, "the grep was cancelled")
            self._call = client.rpc.Grep(req, timeout=_remaining(deadline), metadata=md)
            call = self._call
        return call, next(call)

    def _run(self, client: "Client", req, timeout):
        deadline = _deadline(client._timeout if timeout is None else timeout)
        md = client._call_metadata()
        try:
            call, first = client._retrying(lambda: self._open(client, req, deadline, md), _unavailable, deadline)
        except StopIteration:
            raise HashlineError(grpc.StatusCode.INTERNAL, "hashline: grep stream ended without a summary") from None
        msg = first
        try:
            while True:
                which = msg.WhichOneof("result")
                if which == "file":
                    yield msg.file
                elif which == "summary":
                    self.summary = msg.summary
                    return
                msg = next(call)
        except StopIteration:
            raise HashlineError(grpc.StatusCode.INTERNAL, "hashline: grep stream ended without a summary") from None
        except grpc.RpcError as e:
            raise from_rpc_error(e, client._workspace) from e
        finally:
            if self.summary is None:
                call.cancel()

    def __iter__(self) -> "GrepStream":
        return self

    def __next__(self) -> hashline_pb2.GrepFile:
        return next(self._it)

    def collect(self) -> Tuple[List[hashline_pb2.GrepFile], hashline_pb2.GrepSummary]:
        """Reads the whole stream: every file, and the summary."""
        files = list(self)
        return files, self.summary  # type: ignore[return-value]

    def cancel(self) -> None:
        """Ends the search; the loop then stops with an error."""
        with self._lock:
            self._cancelled = True
            if self._call is not None:
                self._call.cancel()

    def __enter__(self) -> "GrepStream":
        return self

    def __exit__(self, *exc) -> None:
        self.cancel()


class WatchStream(Iterator[hashline_pb2.WatchResponse]):
    """The changes of the files under a path, one WatchResponse per event,
    until cancel() (the loop then ends quietly), the server ends it (an
    error: a server shutting down ends the stream with UNAVAILABLE, reason
    SHUTTING_DOWN) or the connection breaks. It has no default deadline and
    is not retried: an event with a non-zero dropped count, or an error,
    means changes were missed, so read the files you care about again
    before watching again. wait_ready() returns once the subscription is
    live."""

    def __init__(self, call, workspace: str = ""):
        self._call = call
        self._workspace = workspace
        self._cancelled = False

    def wait_ready(self) -> None:
        """Blocks until the server has subscribed (it sends the stream's
        headers then): changes from then on are delivered."""
        try:
            self._call.initial_metadata()
        except grpc.RpcError as e:
            raise from_rpc_error(e, self._workspace) from e

    def __iter__(self) -> "WatchStream":
        return self

    def __next__(self) -> hashline_pb2.WatchResponse:
        try:
            return next(self._call)
        except StopIteration:
            if self._cancelled:
                raise
            raise HashlineError(grpc.StatusCode.UNAVAILABLE, "the server ended the watch stream without an error; watch again") from None
        except grpc.RpcError as e:
            if self._cancelled and e.code() == grpc.StatusCode.CANCELLED:
                raise StopIteration from None
            raise from_rpc_error(e, self._workspace) from e

    def cancel(self) -> None:
        """Ends the subscription; a loop over the stream then ends."""
        self._cancelled = True
        self._call.cancel()

    def __enter__(self) -> "WatchStream":
        return self

    def __exit__(self, *exc) -> None:
        self.cancel()


def _deadline(timeout: Optional[float]) -> Optional[float]:
    return None if timeout is None or timeout <= 0 else time.monotonic() + timeout


def _remaining(deadline: Optional[float]) -> Optional[float]:
    if deadline is None:
        return None
    # A deadline already passed still goes out (gRPC then fails the call
    # with DEADLINE_EXCEEDED at once), never as "no deadline".
    return max(deadline - time.monotonic(), 0.001)


_WRITE_MODES = {
    "upsert": hashline_pb2.WRITE_MODE_UPSERT,
    "create": hashline_pb2.WRITE_MODE_CREATE,
    "replace": hashline_pb2.WRITE_MODE_REPLACE,
}

_CHANGE_TYPES = {
    "edit": hashline_pb2.EditRequest,
    "write": hashline_pb2.WriteRequest,
    "delete": hashline_pb2.DeleteRequest,
    "move": hashline_pb2.MoveRequest,
}

ChangeInit = Union[hashline_pb2.Change, Mapping[str, Any]]


def _to_change(c: ChangeInit, index: int) -> hashline_pb2.Change:
    """A Change from a Change or a dict in the shape of the API's JSON:
    {"edit": {"path": ..., "edits": [...]}}, {"write": {...}},
    {"delete": {...}}, {"move": {"from": ..., "to": ...}}."""
    if isinstance(c, hashline_pb2.Change):
        return c
    kinds = [k for k, v in c.items() if v is not None]
    if len(kinds) != 1:
        raise ValueError(f"hashline: change {index} holds exactly one of edit, write, delete or move, got {' and '.join(kinds) or 'none'}")
    kind = kinds[0]
    cls = _CHANGE_TYPES.get(kind)
    if cls is None:
        raise ValueError(f"hashline: change {index}: unknown change {kind}: a change is one of edit, write, delete or move")
    value = c[kind]
    if not isinstance(value, cls):
        if not isinstance(value, Mapping):
            raise ValueError(f"hashline: change {index} ({kind}) must be a dict of its fields, not {type(value).__name__}")
        names = set(cls.DESCRIPTOR.fields_by_name)
        for key in value:
            if key not in names:
                raise ValueError(f"hashline: change {index} ({kind}): unknown field {key}; a {kind} has {', '.join(sorted(names - {'request_id'}))}")
        if kind == "write" and "content" not in value:
            raise ValueError(f"hashline: change {index} (write): the write has no content (give \"\" for an empty file)")
        value = dict(value)
        if kind == "write" and isinstance(value.get("mode"), str):
            value["mode"] = _WRITE_MODES[value["mode"]]
        value = cls(**value)
    return hashline_pb2.Change(**{kind: value})


def _globs(v: Union[str, Sequence[str], None]) -> List[str]:
    if v is None:
        return []
    return [v] if isinstance(v, str) else list(v)


class Client:
    """A client of one hashlined server; safe for use from several threads.
    Close it when done (or use it as a context manager)::

        with Client("127.0.0.1:7420", agent="agent-1") as c:
            r = c.read("main.go")
            c.edit("main.go", [edits.replace(r.lines[3], '\\tprintln("hello")')])

    target is "host:port" or "http://host:port" (plaintext HTTP/2, what
    `hashlined serve` speaks by default), "https://host:port" (TLS, with
    the roots gRPC ships unless tls says otherwise), or "unix:///path.sock".
    tls (a TLS) makes a "host:port" target TLS too. agent names the calling
    agent (the server keeps per-agent state under it); token is sent as
    "authorization: Bearer TOKEN" for a server started with --tokens.
    workspace names the workspace every call is meant for, sent as
    x-hashline-workspace: a router that routes by header finds the
    workspace's server by it, and a server started with another
    --workspace refuses the call (WRONG_WORKSPACE) rather than read or
    change the wrong tree. workspace_domain (with workspace) sends the
    host WORKSPACE.DOMAIN (:authority, and the TLS server name) while
    connecting to target, for a router that routes by host but is reached
    at another address. A name that is not a DNS label raises ValueError.
    timeout is the deadline in seconds of every call that sets none (0 or
    None: none); for grep it covers the whole stream. retry says how calls
    are retried (RetryPolicy; NO_RETRY turns retries off, and with them
    the request ids changes otherwise carry). interceptors are gRPC client
    interceptors, run inside the client's retries; options are more gRPC
    channel options. trace_context, when set, is called at each call for
    the caller's trace context as request metadata (a mapping such as
    {"traceparent": "00-...-...-01"}), which hashlined continues when it
    traces (--otlp-endpoint): see "Tracing" in the package's README for
    OpenTelemetry."""

    def __init__(self, target: str = DEFAULT_TARGET, *, agent: str = "", token: str = "",
                 workspace: str = "", workspace_domain: str = "",
                 timeout: Optional[float] = DEFAULT_TIMEOUT, retry: RetryPolicy = DEFAULT_RETRY,
                 tls: Optional[TLS] = None, interceptors: Sequence[Any] = (),
                 options: Sequence[Tuple[str, Any]] = (),
                 trace_context: Optional[Callable[[], Optional[Mapping[str, str]]]] = None):
        target = target or DEFAULT_TARGET
        addr, secure = _split_target(target, tls)
        opts: List[Tuple[str, Any]] = [
            # Reconnect soon after a refused connection (gRPC's default
            # waits 1 s, then longer), so the retries meet a restarted
            # server, as the Go client's connect parameters do.
            ("grpc.initial_reconnect_backoff_ms", 100),
            ("grpc.min_reconnect_backoff_ms", 100),
            ("grpc.max_reconnect_backoff_ms", 5000),
        ]
        if workspace:
            why = workspace_name_error(workspace)
            if why:
                raise ValueError("hashline: workspace: " + why)
        if workspace_domain:
            if not workspace:
                raise ValueError(f"hashline: workspace_domain {workspace_domain!r} needs workspace to name the workspace")
            if re.search(r"[/?#@\s]", workspace_domain) or workspace_domain.startswith("."):
                raise ValueError(f"hashline: workspace_domain {workspace_domain!r}: want a domain such as "
                                 "\"hashline.example.com\" (a port may follow)")
            authority = workspace + "." + workspace_domain
            opts.append(("grpc.default_authority", authority))
            if secure and not (tls is not None and tls.server_name):
                opts.append(("grpc.ssl_target_name_override", authority.rsplit(":", 1)[0] if re.search(r":\d+$", authority) else authority))
        if tls is not None and tls.server_name:
            opts.append(("grpc.ssl_target_name_override", tls.server_name))
        opts.extend(options)
        if secure:
            self._channel = grpc.secure_channel(addr, (tls or TLS()).credentials(), options=opts)
        else:
            self._channel = grpc.insecure_channel(addr, options=opts)
        channel = grpc.intercept_channel(self._channel, *interceptors) if interceptors else self._channel
        self._stub = hashline_pb2_grpc.FileServiceStub(channel)
        md: List[Tuple[str, str]] = []
        if agent:
            md.append((AGENT_METADATA_KEY, agent))
        if token:
            md.append(("authorization", "Bearer " + token))
        if workspace:
            md.append((WORKSPACE_METADATA_KEY, workspace))
        self._metadata = tuple(md)
        self._workspace = workspace
        self._trace_context = trace_context
        self._timeout = timeout
        self._retry = retry

    @property
    def rpc(self) -> hashline_pb2_grpc.FileServiceStub:
        """The generated stub, for calls this class does not wrap."""
        return self._stub

    def close(self) -> None:
        """Closes the channel; calls in flight fail."""
        self._channel.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # Retries.

    def _retrying(self, call: Callable[[], T], may_retry: Callable[[grpc.RpcError], bool], deadline: Optional[float]) -> T:
        attempt = 1
        while True:
            try:
                return call()
            except grpc.RpcError as e:
                if attempt >= self._retry.max_attempts or not may_retry(e):
                    raise from_rpc_error(e, self._workspace) from e
                wait = self._retry.backoff(attempt)
                if deadline is not None and deadline - time.monotonic() < wait:
                    raise from_rpc_error(e, self._workspace) from e
                time.sleep(wait)
                attempt += 1

    def _call_metadata(self) -> Tuple[Tuple[str, str], ...]:
        """The metadata of one call (every attempt of it): the client's,
        and the caller's trace context when trace_context gives one."""
        if self._trace_context is None:
            return self._metadata
        extra = self._trace_context()
        if not extra:
            return self._metadata
        # gRPC metadata keys are lower case.
        return self._metadata + tuple((k.lower(), v) for k, v in extra.items())

    def _unary(self, method, req, timeout: Optional[float], may_retry=_unavailable):
        deadline = _deadline(self._timeout if timeout is None else timeout)
        md = self._call_metadata()
        return self._retrying(lambda: method(req, timeout=_remaining(deadline), metadata=md), may_retry, deadline)

    def _request_id(self, given: Optional[str], dry_run: bool = False) -> str:
        if given is not None:
            return given
        return new_request_id() if self._retry.max_attempts > 1 and not dry_run else ""

    def _change(self, method, req, timeout: Optional[float]):
        """A call that changes files: retried only under a request id."""
        if not req.request_id:
            return self._unary(method, req, timeout, lambda e: False)
        return self._unary(method, req, timeout, _keyed)

    # Calls.

    def read(self, path: str, *, offset: int = 0, limit: int = 0, omit_lines: bool = False,
             timeout: Optional[float] = None) -> hashline_pb2.ReadResponse:
        """Reads a page of a file as tagged lines: version, lines (number,
        hash, content), text ("1:c9|package main\\n..."), total_lines,
        truncated and next_offset. offset is the first line (1-based,
        default 1), limit the most lines (default the server's). Retried
        while the server is UNAVAILABLE."""
        req = hashline_pb2.ReadRequest(path=path, offset=offset, limit=limit, omit_lines=omit_lines)
        return self._unary(self._stub.Read, req, timeout)

    def edit(self, path: str, edits: Iterable[hashline_pb2.FileEdit], *, base_version: str = "",
             dry_run: bool = False, context: Optional[int] = None, full: bool = False, strict: bool = False,
             request_id: Optional[str] = None, timeout: Optional[float] = None) -> hashline_pb2.EditResponse:
        """Applies a batch of edits (see the edits module), all or nothing.
        A reference that no longer matches the file raises StaleRefError,
        whose refs have the fresh tags to retry from; nothing was written.
        base_version is the version the references were read from; strict
        writes every text exactly as sent (no repairs). Retried under one
        request id (RetryPolicy): an error with DEADLINE_EXCEEDED or
        UNAVAILABLE does not mean nothing was written; to try again
        yourself, pass the same request_id."""
        req = hashline_pb2.EditRequest(path=path, edits=list(edits), base_version=base_version, dry_run=dry_run,
                                       full=full, strict=strict, request_id=self._request_id(request_id, dry_run))
        if context is not None:
            req.context = context
        return self._change(self._stub.Edit, req, timeout)

    def write(self, path: str, content: str, *, mode: Union[str, int] = "upsert", expected_version: str = "",
              request_id: Optional[str] = None, timeout: Optional[float] = None) -> hashline_pb2.WriteResponse:
        """Creates or overwrites a whole file with content, byte for byte.
        mode: "upsert" (default), "create" (fails if the file exists),
        "replace" (fails if it does not), or a WriteMode value;
        expected_version writes only if the file is still at that version.
        Retried like edit."""
        m = _WRITE_MODES[mode] if isinstance(mode, str) else mode
        req = hashline_pb2.WriteRequest(path=path, content=content, mode=m, expected_version=expected_version,
                                        request_id=self._request_id(request_id))
        return self._change(self._stub.Write, req, timeout)

    def delete(self, path: str, *, expected_version: str = "", request_id: Optional[str] = None,
               timeout: Optional[float] = None) -> hashline_pb2.DeleteResponse:
        """Deletes a file, or an empty directory (else DIRECTORY_NOT_EMPTY);
        with expected_version only that version of the file. Retried like
        edit, so a retry never deletes a file created again since."""
        req = hashline_pb2.DeleteRequest(path=path, expected_version=expected_version,
                                         request_id=self._request_id(request_id))
        return self._change(self._stub.Delete, req, timeout)

    def move(self, from_path: str, to_path: str, *, expected_version: str = "", overwrite: bool = False,
             request_id: Optional[str] = None, timeout: Optional[float] = None) -> hashline_pb2.MoveResponse:
        """Moves (renames) a file inside the workspace, creating the
        destination's parent directories; the versions agents read move
        with it, so their references hold at the new path. An existing
        destination is ALREADY_EXISTS unless overwrite. Retried like edit."""
        req = hashline_pb2.MoveRequest(**{"from": from_path}, to=to_path, expected_version=expected_version,
                                       overwrite=overwrite, request_id=self._request_id(request_id))
        return self._change(self._stub.Move, req, timeout)

    def apply(self, changes: Iterable[ChangeInit], *, dry_run: bool = False, request_id: Optional[str] = None,
              timeout: Optional[float] = None) -> hashline_pb2.ApplyResponse:
        """Applies a change set (edits, writes, deletes and moves of several
        files) all or nothing: if any change fails, nothing is written and
        the error's changes list every failing change (its stale and edits
        carry their change_index). A change is a Change or a dict::

            client.apply([
                {"edit": {"path": "main.go", "edits": [edits.replace("4:16", "x")]}},
                {"move": {"from": "old.go", "to": "new.go"}},
            ])

        Retried like edit, under one request id."""
        req = hashline_pb2.ApplyRequest(changes=[_to_change(c, i) for i, c in enumerate(changes)], dry_run=dry_run,
                                        request_id=self._request_id(request_id, dry_run))
        return self._change(self._stub.Apply, req, timeout)

    def revert(self, change_id: str, *, dry_run: bool = False, request_id: Optional[str] = None,
               timeout: Optional[float] = None) -> hashline_pb2.RevertResponse:
        """Undoes the change (or change set) change_id names, as history,
        Blame and Watch events give it, rebased over every change since: the
        lines it wrote go back to what they were wherever they are now, and
        later changes stay. A later change to the same lines or paths
        raises a HashlineError with reason REVERT_CONFLICT, whose later
        names the changes and stale shows the lines with fresh tags; nothing
        was written. The revert is a change of its own (change_id of the
        response), which can be reverted in turn. Retried like edit."""
        req = hashline_pb2.RevertRequest(change_id=change_id, dry_run=dry_run,
                                         request_id=self._request_id(request_id, dry_run))
        return self._change(self._stub.Revert, req, timeout)

    def history(self, path: str = "", *, agent: str = "", max_entries: int = 0, page_token: str = "",
                include_diff: bool = False, timeout: Optional[float] = None) -> hashline_pb2.HistoryResponse:
        """Lists a page of the change history of a file (followed back
        through its moves), a directory or ("") the whole workspace, newest
        first: each entry's change_id (what revert takes), agent, time, kind
        and files; with include_diff each file's lines as a tagged diff.
        When next_page_token is set, pass it as page_token. Retried like
        read."""
        req = hashline_pb2.HistoryRequest(path=path, agent=agent, max_entries=max_entries, page_token=page_token,
                                          include_diff=include_diff)
        return self._unary(self._stub.History, req, timeout)

    def grep(self, pattern: str, *, path: str = "", glob: Union[str, Sequence[str], None] = None,
             exclude_glob: Union[str, Sequence[str], None] = None, type: Union[str, Sequence[str], None] = None,  # noqa: A002
             case_insensitive: bool = False, literal: bool = False, before: Optional[int] = None,
             after: Optional[int] = None, context: int = 0, max_matches: int = 0, hidden: bool = False,
             no_ignore: bool = False, timeout: Optional[float] = None) -> GrepStream:
        """Searches files with an RE2 pattern (or a plain string, literal);
        iterate the result for one GrepFile per file with matches, in path
        order, then read its summary. context sets before and after."""
        req = hashline_pb2.GrepRequest(
            pattern=pattern, path=path, glob=_globs(glob), exclude_glob=_globs(exclude_glob), type=_globs(type),
            case_insensitive=case_insensitive, literal=literal,
            before=context if before is None else before, after=context if after is None else after,
            max_matches=max_matches, hidden=hidden, no_ignore=no_ignore)
        return GrepStream(self, req, timeout)

    def list(self, path: str = "", *, recursive: bool = False, glob: Union[str, Sequence[str], None] = None,
             max_entries: int = 0, hidden: bool = False, no_ignore: bool = False, include_versions: bool = False,
             page_token: str = "", timeout: Optional[float] = None) -> hashline_pb2.ListResponse:
        """Lists one page of the entries under a directory ("" for the
        workspace root), sorted by path with a directory right before its
        contents; when truncated, pass next_page_token as page_token for
        the next page (or use list_all). Retried like read."""
        req = hashline_pb2.ListRequest(path=path, recursive=recursive, glob=_globs(glob), max_entries=max_entries,
                                       hidden=hidden, no_ignore=no_ignore, include_versions=include_versions,
                                       page_token=page_token)
        return self._unary(self._stub.List, req, timeout)

    def list_all(self, path: str = "", **opts: Any) -> Iterator[hashline_pb2.Entry]:
        """Yields every entry under a directory, calling list page after
        page (each its own call, with its own deadline); opts are list's.
        Pages are of max_entries, or LIST_ALL_PAGE without it."""
        opts = dict(opts)
        opts["max_entries"] = opts.get("max_entries") or LIST_ALL_PAGE
        while True:
            page = self.list(path, **opts)
            yield from page.entries
            if not page.truncated or not page.next_page_token:
                return
            opts["page_token"] = page.next_page_token

    def watch(self, path: str = "") -> WatchStream:
        """Subscribes to the changes of the files under path ("" for the
        whole workspace); iterate the WatchStream for the events. No
        deadline, no retries (see WatchStream)."""
        return WatchStream(self._stub.Watch(hashline_pb2.WatchRequest(path=path), metadata=self._call_metadata()), self._workspace)

    def status(self, *, timeout: Optional[float] = None) -> hashline_pb2.StatusResponse:
        """Describes the server: the absolute workspace root it serves
        (every path is relative to it), its build version, its hash length
        and whether edits need a prior read. Retried like read."""
        return self._unary(self._stub.Status, hashline_pb2.StatusRequest(), timeout)
