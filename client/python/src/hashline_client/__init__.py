"""hashline_client: the Python client of hashlined, the one authoritative
file editor for a workspace shared by LLM agents.

Read files as hashline-tagged lines ("4:16|\\tprintln(\\"hi\\")"), edit
them by reference, and when another agent got there first, retry from the
fresh tags the server sends with the refusal::

    from hashline_client import Client, StaleRefError, edits

    with Client("127.0.0.1:7420", agent="agent-1") as c:
        r = c.read("main.go")
        try:
            c.edit("main.go", [edits.replace(r.lines[3], '\\tprintln("hello")')])
        except StaleRefError as e:
            fresh = e.refs[0].current_line  # retry with this ref

The messages are the generated ones (hashline_client.pb, errors_pb), so
every field of the API is there.
"""

from . import edits
from ._client import Client, GrepStream, WatchStream
from ._common import (
    AGENT_METADATA_KEY,
    DEFAULT_RETRY,
    DEFAULT_TARGET,
    DEFAULT_TIMEOUT,
    LIST_ALL_PAGE,
    NO_RETRY,
    TLS,
    ChangeInit,
    RetryPolicy,
    WORKSPACE_METADATA_KEY,
    new_request_id,
    workspace_name_error,
)
from ._errors import (
    ErrorReason,
    HashlineError,
    StaleRefError,
    StaleRefReason,
    from_rpc_error,
    parse_reason,
    reason_code,
    reason_name,
    stale_ref_reason,
)
from ._gen.hashline.v1 import errors_pb2 as errors_pb
from ._gen.hashline.v1 import hashline_pb2 as pb
from .aio import AsyncClient, AsyncGrepStream, AsyncWatchStream
from .edits import ref

WriteMode = pb.WriteMode
WatchEventKind = pb.WatchEventKind
EntryType = pb.EntryType

__version__ = "0.1.0"

__all__ = [
    "AGENT_METADATA_KEY",
    "AsyncClient",
    "AsyncGrepStream",
    "AsyncWatchStream",
    "WORKSPACE_METADATA_KEY",
    "workspace_name_error",
    "DEFAULT_RETRY",
    "DEFAULT_TARGET",
    "DEFAULT_TIMEOUT",
    "LIST_ALL_PAGE",
    "NO_RETRY",
    "TLS",
    "ChangeInit",
    "Client",
    "EntryType",
    "ErrorReason",
    "GrepStream",
    "HashlineError",
    "RetryPolicy",
    "StaleRefError",
    "StaleRefReason",
    "WatchEventKind",
    "WatchStream",
    "WriteMode",
    "edits",
    "errors_pb",
    "from_rpc_error",
    "new_request_id",
    "parse_reason",
    "pb",
    "reason_code",
    "reason_name",
    "ref",
    "stale_ref_reason",
]
