"""The sync client: a channel to one hashlined, with deadlines, retries
and request ids, over the generated stub. Its calls are defined once, here:
aio.AsyncClient runs the same ones through coroutines."""

from __future__ import annotations

import time
from typing import Any, Callable, Iterable, Iterator, List, Optional, Sequence, Tuple, TypeVar, Union

import grpc

from ._common import (
    ChangeInit,
    _Attempts,
    _Base,
    _globs,
    _GrepStreamBase,
    _list_all_options,
    _next_page,
    _NO_SUMMARY,
    _to_change,
    _WatchStreamBase,
    _WRITE_MODES,
)
from ._errors import HashlineError, from_rpc_error
from ._gen.hashline.v1 import hashline_pb2

T = TypeVar("T")


class GrepStream(_GrepStreamBase, Iterator[hashline_pb2.GrepFile]):
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

    def __init__(self, client: "Client", req: hashline_pb2.GrepRequest, timeout: Optional[float]):
        super().__init__(client, req, timeout)
        self._it = self._run()

    def _open(self, attempts: _Attempts) -> hashline_pb2.GrepResponse:
        return next(self._start(attempts))

    def _run(self) -> Iterator[hashline_pb2.GrepFile]:
        try:
            msg = self._client._retrying(self._open, self._attempts)
            while True:
                f = self._take(msg)
                if self.summary is not None:
                    return
                if f is not None:
                    yield f
                msg = next(self._call)
        except StopIteration:
            raise HashlineError(grpc.StatusCode.INTERNAL, _NO_SUMMARY) from None
        except grpc.RpcError as e:
            raise from_rpc_error(e, self._client._workspace) from e
        finally:
            self._unfinished()

    def __iter__(self) -> "GrepStream":
        return self

    def __next__(self) -> hashline_pb2.GrepFile:
        return next(self._it)

    def collect(self) -> Tuple[List[hashline_pb2.GrepFile], hashline_pb2.GrepSummary]:
        """Reads the whole stream: every file, and the summary."""
        files = list(self)
        return files, self.summary  # type: ignore[return-value]

    def __enter__(self) -> "GrepStream":
        return self

    def __exit__(self, *exc) -> None:
        self.cancel()


class WatchStream(_WatchStreamBase, Iterator[hashline_pb2.WatchResponse]):
    """The changes of the files under a path, one WatchResponse per event,
    until cancel() (the loop then ends quietly), the server ends it (an
    error: a server shutting down ends the stream with UNAVAILABLE, reason
    SHUTTING_DOWN) or the connection breaks. It has no default deadline and
    is not retried: an event with a non-zero dropped count, or an error,
    means changes were missed, so read the files you care about again
    before watching again. wait_ready() returns once the subscription is
    live."""

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
            raise self._ended(StopIteration()) from None
        except grpc.RpcError as e:
            raise self._failed(e, StopIteration()) from e

    def __enter__(self) -> "WatchStream":
        return self

    def __exit__(self, *exc) -> None:
        self.cancel()


class Client(_Base):
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

    _GrepStream = GrepStream
    _WatchStream = WatchStream

    def _open_channel(self, addr, creds, options, interceptors):
        if creds is not None:
            channel = grpc.secure_channel(addr, creds, options=options)
        else:
            channel = grpc.insecure_channel(addr, options=options)
        return channel, grpc.intercept_channel(channel, *interceptors) if interceptors else channel

    def _retrying(self, attempt: Callable[[_Attempts], T], attempts: _Attempts) -> T:
        while True:
            try:
                return attempt(attempts)
            except grpc.RpcError as e:
                time.sleep(attempts.after(e))

    def close(self) -> None:
        """Closes the channel; calls in flight fail."""
        self._channel.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

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

    def blame(self, path: str, *, offset: int = 0, limit: int = 0,
              timeout: Optional[float] = None) -> hashline_pb2.BlameResponse:
        """Says, for each line of a page of a file as it is now, which
        change last wrote it: lines, each with line (tagged as read shows
        it), change_id (what revert takes), agent and time, or
        before_history for a line older than the history the server holds.
        Paged as read. Retried like read."""
        req = hashline_pb2.BlameRequest(path=path, offset=offset, limit=limit)
        return self._unary(self._stub.Blame, req, timeout)

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
        return self._GrepStream(self, req, timeout)

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
        opts = _list_all_options(opts)
        while True:
            page = self.list(path, **opts)
            yield from page.entries
            if not _next_page(page, opts):
                return

    def watch(self, path: str = "") -> WatchStream:
        """Subscribes to the changes of the files under path ("" for the
        whole workspace); iterate the WatchStream for the events. No
        deadline, no retries (see WatchStream)."""
        return self._WatchStream(self._stub.Watch(hashline_pb2.WatchRequest(path=path), metadata=self._call_metadata()), self._workspace)

    def status(self, *, timeout: Optional[float] = None) -> hashline_pb2.StatusResponse:
        """Describes the server: the absolute workspace root it serves
        (every path is relative to it), its build version, its hash length
        and whether edits need a prior read. Retried like read."""
        return self._unary(self._stub.Status, hashline_pb2.StatusRequest(), timeout)
