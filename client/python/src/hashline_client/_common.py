"""What the sync Client and the asyncio AsyncClient share: the options, the
channel's settings and metadata, request ids, each call's deadline and
retry decisions, the parts of requests (changes, globs, write modes), and
the reading of the grep and watch streams' messages. Nothing here calls
the server or waits: each client runs these pieces over its own channel
(grpc or grpc.aio) with its own sleep."""

from __future__ import annotations

import random
import re
import secrets
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

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



def _never(err: grpc.RpcError) -> bool:
    return False


class _Attempts:
    """One call's deadline, metadata and attempt count, the same in every
    attempt of it; after(err) decides whether there is another."""

    def __init__(self, policy: RetryPolicy, may_retry: Callable[[grpc.RpcError], bool], timeout: Optional[float],
                 metadata: Tuple[Tuple[str, str], ...], workspace: str = ""):
        self._policy = policy
        self._workspace = workspace
        self._may_retry = may_retry
        self._deadline = _deadline(timeout)
        self._n = 1
        self.metadata = metadata

    def timeout(self) -> Optional[float]:
        """What is left of the deadline, for the next attempt."""
        return _remaining(self._deadline)

    def after(self, err: grpc.RpcError) -> float:
        """The seconds to wait before the next attempt, after err; raises
        err as a HashlineError when there is no next attempt."""
        if self._n >= self._policy.max_attempts or not self._may_retry(err):
            raise from_rpc_error(err, self._workspace) from err
        wait = self._policy.backoff(self._n)
        if self._deadline is not None and self._deadline - time.monotonic() < wait:
            raise from_rpc_error(err, self._workspace) from err
        self._n += 1
        return wait


class _Base:
    """The state of a client and what both faces do alike: the channel's
    settings, the metadata of every call, request ids, and a call's
    attempts. The calls themselves are Client's (each builds its request
    and hands it to _unary); aio.AsyncClient runs the same functions
    through coroutines. A subclass gives _open_channel (its channel, and
    the one calls go through), _retrying (the attempts of one call, with
    its own sleep), and the stream classes _GrepStream and _WatchStream."""

    _GrepStream: Callable[..., Any]
    _WatchStream: Callable[..., Any]

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
        creds = (tls or TLS()).credentials() if secure else None
        self._channel, channel = self._open_channel(addr, creds, opts, list(interceptors))
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

    def _open_channel(self, addr: str, creds: Optional[grpc.ChannelCredentials], options: List[Tuple[str, Any]],
                      interceptors: List[Any]) -> Tuple[Any, Any]:
        """The channel to close, and the one calls go through (the same,
        or it behind the interceptors)."""
        raise NotImplementedError

    def _retrying(self, attempt: Callable[[_Attempts], Any], attempts: _Attempts) -> Any:
        """attempt(attempts) until it returns, or attempts.after raises."""
        raise NotImplementedError

    @property
    def rpc(self) -> hashline_pb2_grpc.FileServiceStub:
        """The generated stub, for calls this class does not wrap."""
        return self._stub

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

    def _attempts(self, timeout: Optional[float], may_retry: Callable[[grpc.RpcError], bool]) -> _Attempts:
        return _Attempts(self._retry, may_retry, self._timeout if timeout is None else timeout, self._call_metadata(),
                         self._workspace)

    def _unary(self, method, req, timeout: Optional[float], may_retry=_unavailable):
        return self._retrying(lambda a: method(req, timeout=a.timeout(), metadata=a.metadata),
                              self._attempts(timeout, may_retry))

    def _request_id(self, given: Optional[str], dry_run: bool = False) -> str:
        if given is not None:
            return given
        return new_request_id() if self._retry.max_attempts > 1 and not dry_run else ""

    def _change(self, method, req, timeout: Optional[float]):
        """A call that changes files: retried only under a request id."""
        return self._unary(method, req, timeout, _keyed if req.request_id else _never)


def _list_all_options(opts: Dict[str, Any]) -> Dict[str, Any]:
    """list's options for list_all's first page: pages of max_entries, or
    LIST_ALL_PAGE without it."""
    opts = dict(opts)
    opts["max_entries"] = opts.get("max_entries") or LIST_ALL_PAGE
    return opts


def _next_page(page: hashline_pb2.ListResponse, opts: Dict[str, Any]) -> bool:
    """Whether list_all goes on after page; opts then ask for the next."""
    if not page.truncated or not page.next_page_token:
        return False
    opts["page_token"] = page.next_page_token
    return True


_NO_SUMMARY = "hashline: grep stream ended without a summary"
_WATCH_ENDED = "the server ended the watch stream without an error; watch again"


class _GrepStreamBase:
    """The state of a grep stream and the reading of its messages, for
    GrepStream and aio.AsyncGrepStream. Opening it (the call and its first
    message) is retried while the server is UNAVAILABLE; after that an
    error is final, since a retry would repeat files."""

    summary: Optional[hashline_pb2.GrepSummary]
    """The GrepSummary (files scanned, matches, whether the search stopped
    at max_matches), once the stream has ended."""

    def __init__(self, client: _Base, req: hashline_pb2.GrepRequest, timeout: Optional[float]):
        self.summary = None
        self._client = client
        self._req = req
        self._attempts = client._attempts(timeout, _unavailable)
        self._call: Any = None
        self._lock = threading.Lock()
        self._cancelled = False

    def _start(self, attempts: _Attempts) -> Any:
        """One attempt's call, unless the stream was cancelled."""
        with self._lock:
            if self._cancelled:
                raise HashlineError(grpc.StatusCode.CANCELLED, "the grep was cancelled")
            self._call = self._client.rpc.Grep(self._req, timeout=attempts.timeout(), metadata=attempts.metadata)
            return self._call

    def _take(self, msg: hashline_pb2.GrepResponse) -> Optional[hashline_pb2.GrepFile]:
        """The file a message carries, if any; the summary it carries is
        kept in summary, which ends the stream."""
        which = msg.WhichOneof("result")
        if which == "summary":
            self.summary = msg.summary
        return msg.file if which == "file" else None

    def _unfinished(self) -> None:
        """Cancels the call of a stream left before its summary."""
        if self.summary is None and self._call is not None:
            self._call.cancel()

    def cancel(self) -> None:
        """Ends the search; the loop then stops with an error."""
        with self._lock:
            self._cancelled = True
            if self._call is not None:
                self._call.cancel()


class _WatchStreamBase:
    """A watch's call and how its end reads, for WatchStream and
    aio.AsyncWatchStream: quietly after cancel(), else as an error."""

    def __init__(self, call: Any, workspace: str = ""):
        self._call = call
        self._workspace = workspace
        self._cancelled = False

    def _failed(self, err: grpc.RpcError, stop: Exception) -> Exception:
        """What the loop raises for err: stop when it is the cancel's."""
        if self._cancelled and err.code() == grpc.StatusCode.CANCELLED:
            return stop
        return from_rpc_error(err, self._workspace)

    def _ended(self, stop: Exception) -> Exception:
        """What the loop raises when the stream ended without an error."""
        if self._cancelled:
            return stop
        return HashlineError(grpc.StatusCode.UNAVAILABLE, _WATCH_ENDED)

    def cancel(self) -> None:
        """Ends the subscription; a loop over the stream then ends."""
        self._cancelled = True
        self._call.cancel()
