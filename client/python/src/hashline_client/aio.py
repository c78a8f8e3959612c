"""The asyncio client, over grpc.aio: Client's calls as coroutines, grep and
watch as async iterators::

    from hashline_client import edits
    from hashline_client.aio import AsyncClient

    async with AsyncClient("127.0.0.1:7420", agent="agent-1") as c:
        r = await c.read("main.go")
        await c.edit("main.go", [edits.replace(r.lines[3], '\\tprintln("hello")')])
        async for f in c.grep("TODO"):
            print(f.path)

Everything but the I/O is the sync client's: the same arguments, request
building, deadlines, retry policy and request ids (retries wait with
asyncio.sleep), metadata, and errors (HashlineError, StaleRefError).
"""

from __future__ import annotations

import asyncio
import functools
from typing import TYPE_CHECKING, Any, AsyncGenerator, AsyncIterator, Awaitable, Callable, Coroutine, List, Optional, Tuple, Type, TypeVar

import grpc
import grpc.aio

from ._client import Client
from ._common import _NO_SUMMARY, _Attempts, _Base, _GrepStreamBase, _list_all_options, _next_page, _WatchStreamBase
from ._errors import HashlineError, from_rpc_error
from ._gen.hashline.v1 import hashline_pb2

if TYPE_CHECKING:
    from typing_extensions import Concatenate, ParamSpec

    P = ParamSpec("P")

T = TypeVar("T")
S = TypeVar("S")


def _task_cancelling() -> bool:
    """Whether the running task is being cancelled. grpc.aio ends a read of
    a call cancelled by the stream's cancel() with CancelledError too; only
    Python 3.11 and later tell that one from the task's own (before, a task
    cancelled while its stream was cancelled as well ends its loop)."""
    task = asyncio.current_task()
    cancelling = getattr(task, "cancelling", None)
    return bool(cancelling and cancelling())


class AsyncGrepStream(_GrepStreamBase, AsyncIterator[hashline_pb2.GrepFile]):
    """GrepStream's async twin: one GrepFile per file in path order, then
    summary::

        g = client.grep("TODO", glob="*.py")
        async for f in g:
            print(f.path, [l.number for l in f.lines if l.match])
        print(g.summary.matches)

    Opening it is retried while the server is UNAVAILABLE until the first
    message arrives. Leaving the loop early: cancel() (or async with)."""

    def __init__(self, client: "AsyncClient", req: hashline_pb2.GrepRequest, timeout: Optional[float]):
        super().__init__(client, req, timeout)
        self._it = self._run()

    async def _open(self, attempts: _Attempts) -> Any:
        return await self._start(attempts).read()

    async def _run(self) -> AsyncGenerator[hashline_pb2.GrepFile, None]:
        try:
            msg = await self._client._retrying(self._open, self._attempts)
            while msg is not grpc.aio.EOF:
                f = self._take(msg)
                if self.summary is not None:
                    return
                if f is not None:
                    yield f
                msg = await self._call.read()
            raise HashlineError(grpc.StatusCode.INTERNAL, _NO_SUMMARY)
        except grpc.RpcError as e:
            raise from_rpc_error(e, self._client._workspace) from e
        except asyncio.CancelledError:
            if self._cancelled and not _task_cancelling():
                raise HashlineError(grpc.StatusCode.CANCELLED, "the grep was cancelled") from None
            raise
        finally:
            self._unfinished()

    def __aiter__(self) -> "AsyncGrepStream":
        return self

    def __anext__(self) -> Awaitable[hashline_pb2.GrepFile]:
        return self._it.__anext__()

    async def collect(self) -> Tuple[List[hashline_pb2.GrepFile], hashline_pb2.GrepSummary]:
        """Reads the whole stream: every file, and the summary."""
        files = [f async for f in self]
        return files, self.summary  # type: ignore[return-value]

    async def __aenter__(self) -> "AsyncGrepStream":
        return self

    async def __aexit__(self, *exc) -> None:
        self.cancel()
        await self._it.aclose()


class AsyncWatchStream(_WatchStreamBase, AsyncIterator[hashline_pb2.WatchResponse]):
    """WatchStream's async twin: one WatchResponse per event until cancel()
    (the loop then ends quietly), the server ends it (an error) or the
    connection breaks; no deadline, no retries. Cancelling the task that
    reads it ends the subscription as cancel() does (that task gets its
    CancelledError; a loop over the stream after it ends at once)."""

    async def wait_ready(self) -> None:
        """Returns once the server has subscribed (it sends the stream's
        headers then): changes from then on are delivered."""
        try:
            await self._call.initial_metadata()
        except grpc.RpcError as e:
            raise from_rpc_error(e, self._workspace) from e

    def __aiter__(self) -> "AsyncWatchStream":
        return self

    async def __anext__(self) -> hashline_pb2.WatchResponse:
        try:
            msg = await self._call.read()
        except grpc.RpcError as e:
            raise self._failed(e, StopAsyncIteration()) from e
        except asyncio.CancelledError:
            if self._cancelled and not _task_cancelling():
                raise StopAsyncIteration from None
            self.cancel()  # the task's cancellation ended the call: the stream is over
            raise
        if msg is grpc.aio.EOF:
            raise self._ended(StopAsyncIteration())
        return msg

    async def __aenter__(self) -> "AsyncWatchStream":
        return self

    async def __aexit__(self, *exc) -> None:
        self.cancel()


def _awaited(call: "Callable[Concatenate[Any, P], T]") -> "Callable[Concatenate[Any, P], Coroutine[Any, Any, T]]":
    """Client's call as a coroutine function: the call builds its request
    and returns what _unary gives, here a coroutine, which this awaits."""

    @functools.wraps(call)
    async def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        return await call(self, *args, **kwargs)  # type: ignore[misc]

    run.__qualname__ = "AsyncClient." + call.__name__
    return run


def _streaming(call: "Callable[Concatenate[Any, P], Any]", stream: Type[S]) -> "Callable[Concatenate[Any, P], S]":
    """Client's call as it is, returning stream (the client's _GrepStream
    or _WatchStream) instead of the sync class; for type checkers."""
    return call


class AsyncClient(_Base):
    """A client of one hashlined server for asyncio, over grpc.aio: the
    arguments and calls of Client, each call a coroutine (grep and watch
    return async iterators), under the same deadlines, retries, request
    ids and errors. interceptors are grpc.aio client interceptors. Make it
    inside the event loop that uses it (grpc.aio ties a channel to its
    loop), and close it when done (await close(), or async with)::

        async with AsyncClient("127.0.0.1:7420", agent="agent-1") as c:
            r = await c.read("main.go")

    Coroutines of one loop can share it: calls in flight at once go over
    one channel."""

    _GrepStream = AsyncGrepStream
    _WatchStream = AsyncWatchStream

    def _open_channel(self, addr, creds, options, interceptors):
        if creds is not None:
            channel = grpc.aio.secure_channel(addr, creds, options=options, interceptors=interceptors or None)
        else:
            channel = grpc.aio.insecure_channel(addr, options=options, interceptors=interceptors or None)
        return channel, channel

    async def _retrying(self, attempt: Callable[[_Attempts], Awaitable[T]], attempts: _Attempts) -> T:
        while True:
            try:
                return await attempt(attempts)
            except grpc.RpcError as e:
                await asyncio.sleep(attempts.after(e))

    async def close(self) -> None:
        """Closes the channel; calls in flight fail."""
        await self._channel.close()

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()

    # Calls: Client's, each building its request and handing it to _unary,
    # which here is a coroutine.

    read = _awaited(Client.read)
    edit = _awaited(Client.edit)
    write = _awaited(Client.write)
    delete = _awaited(Client.delete)
    move = _awaited(Client.move)
    apply = _awaited(Client.apply)
    revert = _awaited(Client.revert)
    history = _awaited(Client.history)
    blame = _awaited(Client.blame)
    list = _awaited(Client.list)
    status = _awaited(Client.status)
    grep = _streaming(Client.grep, AsyncGrepStream)
    watch = _streaming(Client.watch, AsyncWatchStream)

    async def list_all(self, path: str = "", **opts: Any) -> AsyncIterator[hashline_pb2.Entry]:
        """Client.list_all as an async iterator: every entry under a
        directory, page after page."""
        opts = _list_all_options(opts)
        while True:
            page = await self.list(path, **opts)
            for entry in page.entries:
                yield entry
            if not _next_page(page, opts):
                return
