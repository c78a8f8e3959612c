from google.protobuf import descriptor_pb2 as _descriptor_pb2
from google.protobuf import duration_pb2 as _duration_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor
ERROR_REASON_ALREADY_EXISTS: ErrorReason
ERROR_REASON_AMBIGUOUS_TEXT: ErrorReason
ERROR_REASON_BINARY_CONTENT: ErrorReason
ERROR_REASON_BINARY_FILE: ErrorReason
ERROR_REASON_CANCELED: ErrorReason
ERROR_REASON_CHANGE_EXPIRED: ErrorReason
ERROR_REASON_CONFLICTING_CHANGES: ErrorReason
ERROR_REASON_DEADLINE_EXCEEDED: ErrorReason
ERROR_REASON_DIRECTORY_NOT_EMPTY: ErrorReason
ERROR_REASON_EMPTY_EDITS: ErrorReason
ERROR_REASON_INTERNAL: ErrorReason
ERROR_REASON_INVALID_ARGUMENT: ErrorReason
ERROR_REASON_INVALID_EDIT: ErrorReason
ERROR_REASON_INVALID_PATH: ErrorReason
ERROR_REASON_INVALID_PATTERN: ErrorReason
ERROR_REASON_INVALID_REF: ErrorReason
ERROR_REASON_IO_ERROR: ErrorReason
ERROR_REASON_LINE_OUT_OF_RANGE: ErrorReason
ERROR_REASON_MALFORMED_CHANGE_ID: ErrorReason
ERROR_REASON_NOT_FOUND: ErrorReason
ERROR_REASON_NOT_READ: ErrorReason
ERROR_REASON_NOT_REGULAR_FILE: ErrorReason
ERROR_REASON_NOT_REVERTIBLE: ErrorReason
ERROR_REASON_NOT_TEXT: ErrorReason
ERROR_REASON_NOT_WRITABLE: ErrorReason
ERROR_REASON_NO_CHANGE: ErrorReason
ERROR_REASON_OUTSIDE_ROOT: ErrorReason
ERROR_REASON_OVERLAPPING_EDITS: ErrorReason
ERROR_REASON_PATH_NOT_ALLOWED: ErrorReason
ERROR_REASON_PERMISSION_DENIED: ErrorReason
ERROR_REASON_RATE_LIMITED: ErrorReason
ERROR_REASON_READ_ONLY: ErrorReason
ERROR_REASON_REQUEST_ID_REUSED: ErrorReason
ERROR_REASON_REVERT_CONFLICT: ErrorReason
ERROR_REASON_SHUTTING_DOWN: ErrorReason
ERROR_REASON_STALE_REF: ErrorReason
ERROR_REASON_SYNTAX_ERROR: ErrorReason
ERROR_REASON_TEXT_NOT_FOUND: ErrorReason
ERROR_REASON_TOO_LARGE: ErrorReason
ERROR_REASON_TOO_MANY_STREAMS: ErrorReason
ERROR_REASON_UNAUTHENTICATED: ErrorReason
ERROR_REASON_UNKNOWN_CHANGE: ErrorReason
ERROR_REASON_UNSPECIFIED: ErrorReason
ERROR_REASON_VCS_METADATA: ErrorReason
ERROR_REASON_VERSION_MISMATCH: ErrorReason
ERROR_REASON_WATCH_UNAVAILABLE: ErrorReason
ERROR_REASON_WRONG_WORKSPACE: ErrorReason
GRPC_CODE_ABORTED: GrpcCode
GRPC_CODE_ALREADY_EXISTS: GrpcCode
GRPC_CODE_CANCELLED: GrpcCode
GRPC_CODE_DEADLINE_EXCEEDED: GrpcCode
GRPC_CODE_FAILED_PRECONDITION: GrpcCode
GRPC_CODE_FIELD_NUMBER: _ClassVar[int]
GRPC_CODE_INTERNAL: GrpcCode
GRPC_CODE_INVALID_ARGUMENT: GrpcCode
GRPC_CODE_NOT_FOUND: GrpcCode
GRPC_CODE_PERMISSION_DENIED: GrpcCode
GRPC_CODE_RESOURCE_EXHAUSTED: GrpcCode
GRPC_CODE_UNAUTHENTICATED: GrpcCode
GRPC_CODE_UNAVAILABLE: GrpcCode
GRPC_CODE_UNSPECIFIED: GrpcCode
STALE_REF_REASON_CHANGED: StaleRefReason
STALE_REF_REASON_CONFLICT: StaleRefReason
STALE_REF_REASON_DELETED: StaleRefReason
STALE_REF_REASON_NOT_SHOWN: StaleRefReason
STALE_REF_REASON_UNSPECIFIED: StaleRefReason
grpc_code: _descriptor.FieldDescriptor

class ChangeError(_message.Message):
    __slots__ = ["change_index", "code", "message", "path", "reason"]
    CHANGE_INDEX_FIELD_NUMBER: _ClassVar[int]
    CODE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    change_index: int
    code: int
    message: str
    path: str
    reason: str
    def __init__(self, change_index: _Optional[int] = ..., path: _Optional[str] = ..., reason: _Optional[str] = ..., message: _Optional[str] = ..., code: _Optional[int] = ...) -> None: ...

class EditError(_message.Message):
    __slots__ = ["change_index", "edit_index", "field", "fresh", "message", "reason", "text_at"]
    CHANGE_INDEX_FIELD_NUMBER: _ClassVar[int]
    EDIT_INDEX_FIELD_NUMBER: _ClassVar[int]
    FIELD_FIELD_NUMBER: _ClassVar[int]
    FRESH_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    TEXT_AT_FIELD_NUMBER: _ClassVar[int]
    change_index: int
    edit_index: int
    field: str
    fresh: _containers.RepeatedScalarFieldContainer[str]
    message: str
    reason: str
    text_at: _containers.RepeatedCompositeFieldContainer[LineSpan]
    def __init__(self, edit_index: _Optional[int] = ..., field: _Optional[str] = ..., reason: _Optional[str] = ..., message: _Optional[str] = ..., fresh: _Optional[_Iterable[str]] = ..., text_at: _Optional[_Iterable[_Union[LineSpan, _Mapping]]] = ..., change_index: _Optional[int] = ...) -> None: ...

class ErrorInfo(_message.Message):
    __slots__ = ["domain", "metadata", "reason"]
    class MetadataEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    DOMAIN_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    domain: str
    metadata: _containers.ScalarMap[str, str]
    reason: str
    def __init__(self, reason: _Optional[str] = ..., domain: _Optional[str] = ..., metadata: _Optional[_Mapping[str, str]] = ...) -> None: ...

class LaterChange(_message.Message):
    __slots__ = ["agent", "change_id", "path"]
    AGENT_FIELD_NUMBER: _ClassVar[int]
    CHANGE_ID_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    agent: str
    change_id: str
    path: str
    def __init__(self, change_id: _Optional[str] = ..., agent: _Optional[str] = ..., path: _Optional[str] = ...) -> None: ...

class LineSpan(_message.Message):
    __slots__ = ["end", "start"]
    END_FIELD_NUMBER: _ClassVar[int]
    START_FIELD_NUMBER: _ClassVar[int]
    end: int
    start: int
    def __init__(self, start: _Optional[int] = ..., end: _Optional[int] = ...) -> None: ...

class RetryInfo(_message.Message):
    __slots__ = ["retry_delay"]
    RETRY_DELAY_FIELD_NUMBER: _ClassVar[int]
    retry_delay: _duration_pb2.Duration
    def __init__(self, retry_delay: _Optional[_Union[_duration_pb2.Duration, _Mapping]] = ...) -> None: ...

class StaleRef(_message.Message):
    __slots__ = ["actual_hash", "change_index", "current_line", "current_version", "edit_index", "expected_hash", "fresh", "line", "reason", "ref"]
    ACTUAL_HASH_FIELD_NUMBER: _ClassVar[int]
    CHANGE_INDEX_FIELD_NUMBER: _ClassVar[int]
    CURRENT_LINE_FIELD_NUMBER: _ClassVar[int]
    CURRENT_VERSION_FIELD_NUMBER: _ClassVar[int]
    EDIT_INDEX_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_HASH_FIELD_NUMBER: _ClassVar[int]
    FRESH_FIELD_NUMBER: _ClassVar[int]
    LINE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    REF_FIELD_NUMBER: _ClassVar[int]
    actual_hash: str
    change_index: int
    current_line: str
    current_version: str
    edit_index: int
    expected_hash: str
    fresh: _containers.RepeatedScalarFieldContainer[str]
    line: int
    reason: str
    ref: str
    def __init__(self, edit_index: _Optional[int] = ..., ref: _Optional[str] = ..., line: _Optional[int] = ..., expected_hash: _Optional[str] = ..., actual_hash: _Optional[str] = ..., current_line: _Optional[str] = ..., fresh: _Optional[_Iterable[str]] = ..., current_version: _Optional[str] = ..., reason: _Optional[str] = ..., change_index: _Optional[int] = ...) -> None: ...

class SyntaxError(_message.Message):
    __slots__ = ["change_index", "checker", "column", "content", "line", "message", "path", "ref", "source"]
    CHANGE_INDEX_FIELD_NUMBER: _ClassVar[int]
    CHECKER_FIELD_NUMBER: _ClassVar[int]
    COLUMN_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    LINE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    REF_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    change_index: int
    checker: str
    column: int
    content: str
    line: int
    message: str
    path: str
    ref: str
    source: str
    def __init__(self, ref: _Optional[str] = ..., line: _Optional[int] = ..., column: _Optional[int] = ..., message: _Optional[str] = ..., checker: _Optional[str] = ..., content: _Optional[str] = ..., path: _Optional[str] = ..., change_index: _Optional[int] = ..., source: _Optional[str] = ...) -> None: ...

class ErrorReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class GrpcCode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class StaleRefReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
