from google.protobuf import duration_pb2 as _duration_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

CHANGE_KIND_DELETE: ChangeKind
CHANGE_KIND_EDIT: ChangeKind
CHANGE_KIND_EXTERNAL: ChangeKind
CHANGE_KIND_MOVE: ChangeKind
CHANGE_KIND_REVERT: ChangeKind
CHANGE_KIND_SET: ChangeKind
CHANGE_KIND_UNSPECIFIED: ChangeKind
CHANGE_KIND_WRITE: ChangeKind
DESCRIPTOR: _descriptor.FileDescriptor
ENTRY_TYPE_DIR: EntryType
ENTRY_TYPE_FILE: EntryType
ENTRY_TYPE_SYMLINK: EntryType
ENTRY_TYPE_UNSPECIFIED: EntryType
WATCH_EVENT_KIND_CREATED: WatchEventKind
WATCH_EVENT_KIND_DELETED: WatchEventKind
WATCH_EVENT_KIND_MODIFIED: WatchEventKind
WATCH_EVENT_KIND_MOVED: WatchEventKind
WATCH_EVENT_KIND_UNSPECIFIED: WatchEventKind
WRITE_MODE_CREATE: WriteMode
WRITE_MODE_REPLACE: WriteMode
WRITE_MODE_UNSPECIFIED: WriteMode
WRITE_MODE_UPSERT: WriteMode

class ApplyRequest(_message.Message):
    __slots__ = ["changes", "dry_run", "request_id", "strict_syntax"]
    CHANGES_FIELD_NUMBER: _ClassVar[int]
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    STRICT_SYNTAX_FIELD_NUMBER: _ClassVar[int]
    changes: _containers.RepeatedCompositeFieldContainer[Change]
    dry_run: bool
    request_id: str
    strict_syntax: bool
    def __init__(self, changes: _Optional[_Iterable[_Union[Change, _Mapping]]] = ..., dry_run: bool = ..., request_id: _Optional[str] = ..., strict_syntax: bool = ...) -> None: ...

class ApplyResponse(_message.Message):
    __slots__ = ["change_set", "dry_run", "results"]
    CHANGE_SET_FIELD_NUMBER: _ClassVar[int]
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    change_set: str
    dry_run: bool
    results: _containers.RepeatedCompositeFieldContainer[ChangeResult]
    def __init__(self, results: _Optional[_Iterable[_Union[ChangeResult, _Mapping]]] = ..., dry_run: bool = ..., change_set: _Optional[str] = ...) -> None: ...

class BlameLine(_message.Message):
    __slots__ = ["agent", "before_history", "change_id", "line", "time"]
    AGENT_FIELD_NUMBER: _ClassVar[int]
    BEFORE_HISTORY_FIELD_NUMBER: _ClassVar[int]
    CHANGE_ID_FIELD_NUMBER: _ClassVar[int]
    LINE_FIELD_NUMBER: _ClassVar[int]
    TIME_FIELD_NUMBER: _ClassVar[int]
    agent: str
    before_history: bool
    change_id: str
    line: Line
    time: _timestamp_pb2.Timestamp
    def __init__(self, line: _Optional[_Union[Line, _Mapping]] = ..., change_id: _Optional[str] = ..., agent: _Optional[str] = ..., time: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., before_history: bool = ...) -> None: ...

class BlameRequest(_message.Message):
    __slots__ = ["limit", "offset", "path"]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    OFFSET_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    limit: int
    offset: int
    path: str
    def __init__(self, path: _Optional[str] = ..., offset: _Optional[int] = ..., limit: _Optional[int] = ...) -> None: ...

class BlameResponse(_message.Message):
    __slots__ = ["lines", "next_offset", "path", "total_lines", "truncated", "version"]
    LINES_FIELD_NUMBER: _ClassVar[int]
    NEXT_OFFSET_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    TOTAL_LINES_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    lines: _containers.RepeatedCompositeFieldContainer[BlameLine]
    next_offset: int
    path: str
    total_lines: int
    truncated: bool
    version: str
    def __init__(self, path: _Optional[str] = ..., version: _Optional[str] = ..., lines: _Optional[_Iterable[_Union[BlameLine, _Mapping]]] = ..., total_lines: _Optional[int] = ..., truncated: bool = ..., next_offset: _Optional[int] = ...) -> None: ...

class Change(_message.Message):
    __slots__ = ["delete", "edit", "move", "write"]
    DELETE_FIELD_NUMBER: _ClassVar[int]
    EDIT_FIELD_NUMBER: _ClassVar[int]
    MOVE_FIELD_NUMBER: _ClassVar[int]
    WRITE_FIELD_NUMBER: _ClassVar[int]
    delete: DeleteRequest
    edit: EditRequest
    move: MoveRequest
    write: WriteRequest
    def __init__(self, edit: _Optional[_Union[EditRequest, _Mapping]] = ..., write: _Optional[_Union[WriteRequest, _Mapping]] = ..., delete: _Optional[_Union[DeleteRequest, _Mapping]] = ..., move: _Optional[_Union[MoveRequest, _Mapping]] = ...) -> None: ...

class ChangeResult(_message.Message):
    __slots__ = ["delete", "edit", "move", "write"]
    DELETE_FIELD_NUMBER: _ClassVar[int]
    EDIT_FIELD_NUMBER: _ClassVar[int]
    MOVE_FIELD_NUMBER: _ClassVar[int]
    WRITE_FIELD_NUMBER: _ClassVar[int]
    delete: DeleteResponse
    edit: EditResponse
    move: MoveResponse
    write: WriteResponse
    def __init__(self, edit: _Optional[_Union[EditResponse, _Mapping]] = ..., write: _Optional[_Union[WriteResponse, _Mapping]] = ..., delete: _Optional[_Union[DeleteResponse, _Mapping]] = ..., move: _Optional[_Union[MoveResponse, _Mapping]] = ...) -> None: ...

class DeleteOp(_message.Message):
    __slots__ = ["end", "start"]
    END_FIELD_NUMBER: _ClassVar[int]
    START_FIELD_NUMBER: _ClassVar[int]
    end: str
    start: str
    def __init__(self, start: _Optional[str] = ..., end: _Optional[str] = ...) -> None: ...

class DeleteRequest(_message.Message):
    __slots__ = ["expected_version", "path", "request_id"]
    EXPECTED_VERSION_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    expected_version: str
    path: str
    request_id: str
    def __init__(self, path: _Optional[str] = ..., expected_version: _Optional[str] = ..., request_id: _Optional[str] = ...) -> None: ...

class DeleteResponse(_message.Message):
    __slots__ = ["directory", "path", "version"]
    DIRECTORY_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    directory: bool
    path: str
    version: str
    def __init__(self, path: _Optional[str] = ..., version: _Optional[str] = ..., directory: bool = ...) -> None: ...

class Diagnostic(_message.Message):
    __slots__ = ["checker", "column", "content", "line", "message", "ref", "source"]
    CHECKER_FIELD_NUMBER: _ClassVar[int]
    COLUMN_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    LINE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    REF_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    checker: str
    column: int
    content: str
    line: int
    message: str
    ref: str
    source: str
    def __init__(self, ref: _Optional[str] = ..., line: _Optional[int] = ..., column: _Optional[int] = ..., message: _Optional[str] = ..., checker: _Optional[str] = ..., content: _Optional[str] = ..., source: _Optional[str] = ...) -> None: ...

class EditRequest(_message.Message):
    __slots__ = ["base_version", "context", "dry_run", "edits", "full", "path", "request_id", "strict", "strict_syntax"]
    BASE_VERSION_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_FIELD_NUMBER: _ClassVar[int]
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    EDITS_FIELD_NUMBER: _ClassVar[int]
    FULL_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    STRICT_FIELD_NUMBER: _ClassVar[int]
    STRICT_SYNTAX_FIELD_NUMBER: _ClassVar[int]
    base_version: str
    context: int
    dry_run: bool
    edits: _containers.RepeatedCompositeFieldContainer[FileEdit]
    full: bool
    path: str
    request_id: str
    strict: bool
    strict_syntax: bool
    def __init__(self, path: _Optional[str] = ..., edits: _Optional[_Iterable[_Union[FileEdit, _Mapping]]] = ..., base_version: _Optional[str] = ..., dry_run: bool = ..., context: _Optional[int] = ..., full: bool = ..., request_id: _Optional[str] = ..., strict: bool = ..., strict_syntax: bool = ...) -> None: ...

class EditResponse(_message.Message):
    __slots__ = ["diagnostics", "diff", "dry_run", "lines", "moved", "path", "rebased_from", "repairs", "replaced", "shifts", "syntax_not_checked", "tagged_diff", "total_lines", "version", "warnings", "windows"]
    DIAGNOSTICS_FIELD_NUMBER: _ClassVar[int]
    DIFF_FIELD_NUMBER: _ClassVar[int]
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    LINES_FIELD_NUMBER: _ClassVar[int]
    MOVED_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    REBASED_FROM_FIELD_NUMBER: _ClassVar[int]
    REPAIRS_FIELD_NUMBER: _ClassVar[int]
    REPLACED_FIELD_NUMBER: _ClassVar[int]
    SHIFTS_FIELD_NUMBER: _ClassVar[int]
    SYNTAX_NOT_CHECKED_FIELD_NUMBER: _ClassVar[int]
    TAGGED_DIFF_FIELD_NUMBER: _ClassVar[int]
    TOTAL_LINES_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    WARNINGS_FIELD_NUMBER: _ClassVar[int]
    WINDOWS_FIELD_NUMBER: _ClassVar[int]
    diagnostics: _containers.RepeatedCompositeFieldContainer[Diagnostic]
    diff: str
    dry_run: bool
    lines: _containers.RepeatedCompositeFieldContainer[Line]
    moved: _containers.RepeatedCompositeFieldContainer[MovedRef]
    path: str
    rebased_from: str
    repairs: _containers.RepeatedCompositeFieldContainer[Repair]
    replaced: _containers.RepeatedCompositeFieldContainer[Line]
    shifts: _containers.RepeatedCompositeFieldContainer[LineShift]
    syntax_not_checked: str
    tagged_diff: str
    total_lines: int
    version: str
    warnings: _containers.RepeatedScalarFieldContainer[str]
    windows: _containers.RepeatedCompositeFieldContainer[Window]
    def __init__(self, path: _Optional[str] = ..., version: _Optional[str] = ..., diff: _Optional[str] = ..., windows: _Optional[_Iterable[_Union[Window, _Mapping]]] = ..., replaced: _Optional[_Iterable[_Union[Line, _Mapping]]] = ..., warnings: _Optional[_Iterable[str]] = ..., lines: _Optional[_Iterable[_Union[Line, _Mapping]]] = ..., total_lines: _Optional[int] = ..., dry_run: bool = ..., rebased_from: _Optional[str] = ..., moved: _Optional[_Iterable[_Union[MovedRef, _Mapping]]] = ..., repairs: _Optional[_Iterable[_Union[Repair, _Mapping]]] = ..., tagged_diff: _Optional[str] = ..., shifts: _Optional[_Iterable[_Union[LineShift, _Mapping]]] = ..., diagnostics: _Optional[_Iterable[_Union[Diagnostic, _Mapping]]] = ..., syntax_not_checked: _Optional[str] = ...) -> None: ...

class Entry(_message.Message):
    __slots__ = ["path", "size", "type", "version"]
    PATH_FIELD_NUMBER: _ClassVar[int]
    SIZE_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    path: str
    size: int
    type: EntryType
    version: str
    def __init__(self, path: _Optional[str] = ..., type: _Optional[_Union[EntryType, str]] = ..., size: _Optional[int] = ..., version: _Optional[str] = ...) -> None: ...

class FileEdit(_message.Message):
    __slots__ = ["append", "delete", "insert_after", "insert_before", "prepend", "replace", "replace_text"]
    APPEND_FIELD_NUMBER: _ClassVar[int]
    DELETE_FIELD_NUMBER: _ClassVar[int]
    INSERT_AFTER_FIELD_NUMBER: _ClassVar[int]
    INSERT_BEFORE_FIELD_NUMBER: _ClassVar[int]
    PREPEND_FIELD_NUMBER: _ClassVar[int]
    REPLACE_FIELD_NUMBER: _ClassVar[int]
    REPLACE_TEXT_FIELD_NUMBER: _ClassVar[int]
    append: TextOp
    delete: DeleteOp
    insert_after: InsertOp
    insert_before: InsertOp
    prepend: TextOp
    replace: ReplaceOp
    replace_text: ReplaceTextOp
    def __init__(self, replace: _Optional[_Union[ReplaceOp, _Mapping]] = ..., insert_after: _Optional[_Union[InsertOp, _Mapping]] = ..., insert_before: _Optional[_Union[InsertOp, _Mapping]] = ..., delete: _Optional[_Union[DeleteOp, _Mapping]] = ..., append: _Optional[_Union[TextOp, _Mapping]] = ..., prepend: _Optional[_Union[TextOp, _Mapping]] = ..., replace_text: _Optional[_Union[ReplaceTextOp, _Mapping]] = ...) -> None: ...

class GrepFile(_message.Message):
    __slots__ = ["lines", "path", "version"]
    LINES_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    lines: _containers.RepeatedCompositeFieldContainer[GrepLine]
    path: str
    version: str
    def __init__(self, path: _Optional[str] = ..., version: _Optional[str] = ..., lines: _Optional[_Iterable[_Union[GrepLine, _Mapping]]] = ...) -> None: ...

class GrepLine(_message.Message):
    __slots__ = ["content", "hash", "match", "number", "submatches"]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    HASH_FIELD_NUMBER: _ClassVar[int]
    MATCH_FIELD_NUMBER: _ClassVar[int]
    NUMBER_FIELD_NUMBER: _ClassVar[int]
    SUBMATCHES_FIELD_NUMBER: _ClassVar[int]
    content: str
    hash: str
    match: bool
    number: int
    submatches: _containers.RepeatedCompositeFieldContainer[Span]
    def __init__(self, number: _Optional[int] = ..., hash: _Optional[str] = ..., content: _Optional[str] = ..., match: bool = ..., submatches: _Optional[_Iterable[_Union[Span, _Mapping]]] = ...) -> None: ...

class GrepRequest(_message.Message):
    __slots__ = ["after", "before", "case_insensitive", "exclude_glob", "glob", "hidden", "literal", "max_matches", "no_ignore", "path", "pattern", "type"]
    AFTER_FIELD_NUMBER: _ClassVar[int]
    BEFORE_FIELD_NUMBER: _ClassVar[int]
    CASE_INSENSITIVE_FIELD_NUMBER: _ClassVar[int]
    EXCLUDE_GLOB_FIELD_NUMBER: _ClassVar[int]
    GLOB_FIELD_NUMBER: _ClassVar[int]
    HIDDEN_FIELD_NUMBER: _ClassVar[int]
    LITERAL_FIELD_NUMBER: _ClassVar[int]
    MAX_MATCHES_FIELD_NUMBER: _ClassVar[int]
    NO_IGNORE_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    PATTERN_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    after: int
    before: int
    case_insensitive: bool
    exclude_glob: _containers.RepeatedScalarFieldContainer[str]
    glob: _containers.RepeatedScalarFieldContainer[str]
    hidden: bool
    literal: bool
    max_matches: int
    no_ignore: bool
    path: str
    pattern: str
    type: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, pattern: _Optional[str] = ..., path: _Optional[str] = ..., glob: _Optional[_Iterable[str]] = ..., exclude_glob: _Optional[_Iterable[str]] = ..., case_insensitive: bool = ..., literal: bool = ..., before: _Optional[int] = ..., after: _Optional[int] = ..., max_matches: _Optional[int] = ..., type: _Optional[_Iterable[str]] = ..., hidden: bool = ..., no_ignore: bool = ...) -> None: ...

class GrepResponse(_message.Message):
    __slots__ = ["file", "summary"]
    FILE_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    file: GrepFile
    summary: GrepSummary
    def __init__(self, file: _Optional[_Union[GrepFile, _Mapping]] = ..., summary: _Optional[_Union[GrepSummary, _Mapping]] = ...) -> None: ...

class GrepSummary(_message.Message):
    __slots__ = ["bytes_scanned", "elapsed", "files_matched", "files_scanned", "matches", "truncated"]
    BYTES_SCANNED_FIELD_NUMBER: _ClassVar[int]
    ELAPSED_FIELD_NUMBER: _ClassVar[int]
    FILES_MATCHED_FIELD_NUMBER: _ClassVar[int]
    FILES_SCANNED_FIELD_NUMBER: _ClassVar[int]
    MATCHES_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    bytes_scanned: int
    elapsed: _duration_pb2.Duration
    files_matched: int
    files_scanned: int
    matches: int
    truncated: bool
    def __init__(self, files_scanned: _Optional[int] = ..., files_matched: _Optional[int] = ..., matches: _Optional[int] = ..., truncated: bool = ..., bytes_scanned: _Optional[int] = ..., elapsed: _Optional[_Union[_duration_pb2.Duration, _Mapping]] = ...) -> None: ...

class HistoryEntry(_message.Message):
    __slots__ = ["agent", "change_id", "files", "kind", "request_id", "reverts", "time"]
    AGENT_FIELD_NUMBER: _ClassVar[int]
    CHANGE_ID_FIELD_NUMBER: _ClassVar[int]
    FILES_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    REVERTS_FIELD_NUMBER: _ClassVar[int]
    TIME_FIELD_NUMBER: _ClassVar[int]
    agent: str
    change_id: str
    files: _containers.RepeatedCompositeFieldContainer[HistoryFile]
    kind: ChangeKind
    request_id: str
    reverts: str
    time: _timestamp_pb2.Timestamp
    def __init__(self, change_id: _Optional[str] = ..., agent: _Optional[str] = ..., time: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., kind: _Optional[_Union[ChangeKind, str]] = ..., files: _Optional[_Iterable[_Union[HistoryFile, _Mapping]]] = ..., request_id: _Optional[str] = ..., reverts: _Optional[str] = ...) -> None: ...

class HistoryFile(_message.Message):
    __slots__ = ["diff", "diff_omitted", "from_path", "lines_added", "lines_removed", "new_version", "old_version", "path"]
    DIFF_FIELD_NUMBER: _ClassVar[int]
    DIFF_OMITTED_FIELD_NUMBER: _ClassVar[int]
    FROM_PATH_FIELD_NUMBER: _ClassVar[int]
    LINES_ADDED_FIELD_NUMBER: _ClassVar[int]
    LINES_REMOVED_FIELD_NUMBER: _ClassVar[int]
    NEW_VERSION_FIELD_NUMBER: _ClassVar[int]
    OLD_VERSION_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    diff: str
    diff_omitted: bool
    from_path: str
    lines_added: int
    lines_removed: int
    new_version: str
    old_version: str
    path: str
    def __init__(self, path: _Optional[str] = ..., from_path: _Optional[str] = ..., old_version: _Optional[str] = ..., new_version: _Optional[str] = ..., lines_added: _Optional[int] = ..., lines_removed: _Optional[int] = ..., diff: _Optional[str] = ..., diff_omitted: bool = ...) -> None: ...

class HistoryRequest(_message.Message):
    __slots__ = ["agent", "include_diff", "max_entries", "page_token", "path", "since", "until"]
    AGENT_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_DIFF_FIELD_NUMBER: _ClassVar[int]
    MAX_ENTRIES_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    SINCE_FIELD_NUMBER: _ClassVar[int]
    UNTIL_FIELD_NUMBER: _ClassVar[int]
    agent: str
    include_diff: bool
    max_entries: int
    page_token: str
    path: str
    since: _timestamp_pb2.Timestamp
    until: _timestamp_pb2.Timestamp
    def __init__(self, path: _Optional[str] = ..., agent: _Optional[str] = ..., since: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., until: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., max_entries: _Optional[int] = ..., page_token: _Optional[str] = ..., include_diff: bool = ...) -> None: ...

class HistoryResponse(_message.Message):
    __slots__ = ["entries", "next_page_token", "older_dropped"]
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    OLDER_DROPPED_FIELD_NUMBER: _ClassVar[int]
    entries: _containers.RepeatedCompositeFieldContainer[HistoryEntry]
    next_page_token: str
    older_dropped: bool
    def __init__(self, entries: _Optional[_Iterable[_Union[HistoryEntry, _Mapping]]] = ..., next_page_token: _Optional[str] = ..., older_dropped: bool = ...) -> None: ...

class InsertOp(_message.Message):
    __slots__ = ["anchor", "text"]
    ANCHOR_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    anchor: str
    text: str
    def __init__(self, anchor: _Optional[str] = ..., text: _Optional[str] = ...) -> None: ...

class Line(_message.Message):
    __slots__ = ["content", "hash", "number"]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    HASH_FIELD_NUMBER: _ClassVar[int]
    NUMBER_FIELD_NUMBER: _ClassVar[int]
    content: str
    hash: str
    number: int
    def __init__(self, number: _Optional[int] = ..., hash: _Optional[str] = ..., content: _Optional[str] = ...) -> None: ...

class LineRange(_message.Message):
    __slots__ = ["new_count", "new_start", "old_count", "old_start"]
    NEW_COUNT_FIELD_NUMBER: _ClassVar[int]
    NEW_START_FIELD_NUMBER: _ClassVar[int]
    OLD_COUNT_FIELD_NUMBER: _ClassVar[int]
    OLD_START_FIELD_NUMBER: _ClassVar[int]
    new_count: int
    new_start: int
    old_count: int
    old_start: int
    def __init__(self, old_start: _Optional[int] = ..., old_count: _Optional[int] = ..., new_start: _Optional[int] = ..., new_count: _Optional[int] = ...) -> None: ...

class LineShift(_message.Message):
    __slots__ = ["by", "to"]
    BY_FIELD_NUMBER: _ClassVar[int]
    FROM_FIELD_NUMBER: _ClassVar[int]
    TO_FIELD_NUMBER: _ClassVar[int]
    by: int
    to: int
    def __init__(self, to: _Optional[int] = ..., by: _Optional[int] = ..., **kwargs) -> None: ...

class ListRequest(_message.Message):
    __slots__ = ["glob", "hidden", "include_versions", "max_entries", "no_ignore", "page_token", "path", "recursive"]
    GLOB_FIELD_NUMBER: _ClassVar[int]
    HIDDEN_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_VERSIONS_FIELD_NUMBER: _ClassVar[int]
    MAX_ENTRIES_FIELD_NUMBER: _ClassVar[int]
    NO_IGNORE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    RECURSIVE_FIELD_NUMBER: _ClassVar[int]
    glob: _containers.RepeatedScalarFieldContainer[str]
    hidden: bool
    include_versions: bool
    max_entries: int
    no_ignore: bool
    page_token: str
    path: str
    recursive: bool
    def __init__(self, path: _Optional[str] = ..., glob: _Optional[_Iterable[str]] = ..., recursive: bool = ..., max_entries: _Optional[int] = ..., hidden: bool = ..., no_ignore: bool = ..., include_versions: bool = ..., page_token: _Optional[str] = ...) -> None: ...

class ListResponse(_message.Message):
    __slots__ = ["entries", "next_page_token", "path", "truncated"]
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    entries: _containers.RepeatedCompositeFieldContainer[Entry]
    next_page_token: str
    path: str
    truncated: bool
    def __init__(self, path: _Optional[str] = ..., entries: _Optional[_Iterable[_Union[Entry, _Mapping]]] = ..., truncated: bool = ..., next_page_token: _Optional[str] = ...) -> None: ...

class MoveRequest(_message.Message):
    __slots__ = ["expected_version", "overwrite", "request_id", "to"]
    EXPECTED_VERSION_FIELD_NUMBER: _ClassVar[int]
    FROM_FIELD_NUMBER: _ClassVar[int]
    OVERWRITE_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    TO_FIELD_NUMBER: _ClassVar[int]
    expected_version: str
    overwrite: bool
    request_id: str
    to: str
    def __init__(self, to: _Optional[str] = ..., expected_version: _Optional[str] = ..., overwrite: bool = ..., request_id: _Optional[str] = ..., **kwargs) -> None: ...

class MoveResponse(_message.Message):
    __slots__ = ["replaced_version", "to", "version"]
    FROM_FIELD_NUMBER: _ClassVar[int]
    REPLACED_VERSION_FIELD_NUMBER: _ClassVar[int]
    TO_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    replaced_version: str
    to: str
    version: str
    def __init__(self, to: _Optional[str] = ..., version: _Optional[str] = ..., replaced_version: _Optional[str] = ..., **kwargs) -> None: ...

class MovedRef(_message.Message):
    __slots__ = ["ref", "to"]
    FROM_FIELD_NUMBER: _ClassVar[int]
    REF_FIELD_NUMBER: _ClassVar[int]
    TO_FIELD_NUMBER: _ClassVar[int]
    ref: str
    to: int
    def __init__(self, ref: _Optional[str] = ..., to: _Optional[int] = ..., **kwargs) -> None: ...

class ReadRequest(_message.Message):
    __slots__ = ["limit", "offset", "omit_lines", "path"]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    OFFSET_FIELD_NUMBER: _ClassVar[int]
    OMIT_LINES_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    limit: int
    offset: int
    omit_lines: bool
    path: str
    def __init__(self, path: _Optional[str] = ..., offset: _Optional[int] = ..., limit: _Optional[int] = ..., omit_lines: bool = ...) -> None: ...

class ReadResponse(_message.Message):
    __slots__ = ["bom", "encoding", "eol", "lines", "next_offset", "path", "text", "total_lines", "truncated", "version"]
    BOM_FIELD_NUMBER: _ClassVar[int]
    ENCODING_FIELD_NUMBER: _ClassVar[int]
    EOL_FIELD_NUMBER: _ClassVar[int]
    LINES_FIELD_NUMBER: _ClassVar[int]
    NEXT_OFFSET_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    TOTAL_LINES_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    bom: bool
    encoding: str
    eol: str
    lines: _containers.RepeatedCompositeFieldContainer[Line]
    next_offset: int
    path: str
    text: str
    total_lines: int
    truncated: bool
    version: str
    def __init__(self, path: _Optional[str] = ..., version: _Optional[str] = ..., lines: _Optional[_Iterable[_Union[Line, _Mapping]]] = ..., text: _Optional[str] = ..., total_lines: _Optional[int] = ..., truncated: bool = ..., next_offset: _Optional[int] = ..., eol: _Optional[str] = ..., bom: bool = ..., encoding: _Optional[str] = ...) -> None: ...

class Repair(_message.Message):
    __slots__ = ["detail", "edit_index", "kind", "line"]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    EDIT_INDEX_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    LINE_FIELD_NUMBER: _ClassVar[int]
    detail: str
    edit_index: int
    kind: str
    line: int
    def __init__(self, kind: _Optional[str] = ..., edit_index: _Optional[int] = ..., line: _Optional[int] = ..., detail: _Optional[str] = ...) -> None: ...

class ReplaceOp(_message.Message):
    __slots__ = ["end", "start", "text"]
    END_FIELD_NUMBER: _ClassVar[int]
    START_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    end: str
    start: str
    text: str
    def __init__(self, start: _Optional[str] = ..., end: _Optional[str] = ..., text: _Optional[str] = ...) -> None: ...

class ReplaceTextOp(_message.Message):
    __slots__ = ["all", "new_text", "old_text"]
    ALL_FIELD_NUMBER: _ClassVar[int]
    NEW_TEXT_FIELD_NUMBER: _ClassVar[int]
    OLD_TEXT_FIELD_NUMBER: _ClassVar[int]
    all: bool
    new_text: str
    old_text: str
    def __init__(self, old_text: _Optional[str] = ..., new_text: _Optional[str] = ..., all: bool = ...) -> None: ...

class RevertRequest(_message.Message):
    __slots__ = ["change_id", "dry_run", "request_id"]
    CHANGE_ID_FIELD_NUMBER: _ClassVar[int]
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    change_id: str
    dry_run: bool
    request_id: str
    def __init__(self, change_id: _Optional[str] = ..., dry_run: bool = ..., request_id: _Optional[str] = ...) -> None: ...

class RevertResponse(_message.Message):
    __slots__ = ["change_id", "dry_run", "results", "reverted", "warnings"]
    CHANGE_ID_FIELD_NUMBER: _ClassVar[int]
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    REVERTED_FIELD_NUMBER: _ClassVar[int]
    WARNINGS_FIELD_NUMBER: _ClassVar[int]
    change_id: str
    dry_run: bool
    results: _containers.RepeatedCompositeFieldContainer[ChangeResult]
    reverted: str
    warnings: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, change_id: _Optional[str] = ..., reverted: _Optional[str] = ..., results: _Optional[_Iterable[_Union[ChangeResult, _Mapping]]] = ..., dry_run: bool = ..., warnings: _Optional[_Iterable[str]] = ...) -> None: ...

class Span(_message.Message):
    __slots__ = ["end", "start"]
    END_FIELD_NUMBER: _ClassVar[int]
    START_FIELD_NUMBER: _ClassVar[int]
    end: int
    start: int
    def __init__(self, start: _Optional[int] = ..., end: _Optional[int] = ...) -> None: ...

class StatusRequest(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class StatusResponse(_message.Message):
    __slots__ = ["hash_len", "require_read", "root", "version", "workspace"]
    HASH_LEN_FIELD_NUMBER: _ClassVar[int]
    REQUIRE_READ_FIELD_NUMBER: _ClassVar[int]
    ROOT_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    WORKSPACE_FIELD_NUMBER: _ClassVar[int]
    hash_len: int
    require_read: bool
    root: str
    version: str
    workspace: str
    def __init__(self, root: _Optional[str] = ..., version: _Optional[str] = ..., hash_len: _Optional[int] = ..., require_read: bool = ..., workspace: _Optional[str] = ...) -> None: ...

class TextOp(_message.Message):
    __slots__ = ["text"]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    text: str
    def __init__(self, text: _Optional[str] = ...) -> None: ...

class WatchRequest(_message.Message):
    __slots__ = ["path"]
    PATH_FIELD_NUMBER: _ClassVar[int]
    path: str
    def __init__(self, path: _Optional[str] = ...) -> None: ...

class WatchResponse(_message.Message):
    __slots__ = ["agent", "change_id", "change_set", "changed", "dropped", "external", "from_path", "kind", "new_version", "old_version", "path", "time"]
    AGENT_FIELD_NUMBER: _ClassVar[int]
    CHANGED_FIELD_NUMBER: _ClassVar[int]
    CHANGE_ID_FIELD_NUMBER: _ClassVar[int]
    CHANGE_SET_FIELD_NUMBER: _ClassVar[int]
    DROPPED_FIELD_NUMBER: _ClassVar[int]
    EXTERNAL_FIELD_NUMBER: _ClassVar[int]
    FROM_PATH_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    NEW_VERSION_FIELD_NUMBER: _ClassVar[int]
    OLD_VERSION_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    TIME_FIELD_NUMBER: _ClassVar[int]
    agent: str
    change_id: str
    change_set: str
    changed: _containers.RepeatedCompositeFieldContainer[LineRange]
    dropped: int
    external: bool
    from_path: str
    kind: WatchEventKind
    new_version: str
    old_version: str
    path: str
    time: _timestamp_pb2.Timestamp
    def __init__(self, path: _Optional[str] = ..., kind: _Optional[_Union[WatchEventKind, str]] = ..., agent: _Optional[str] = ..., external: bool = ..., old_version: _Optional[str] = ..., new_version: _Optional[str] = ..., changed: _Optional[_Iterable[_Union[LineRange, _Mapping]]] = ..., dropped: _Optional[int] = ..., time: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., from_path: _Optional[str] = ..., change_set: _Optional[str] = ..., change_id: _Optional[str] = ...) -> None: ...

class Window(_message.Message):
    __slots__ = ["end", "lines", "start", "text"]
    END_FIELD_NUMBER: _ClassVar[int]
    LINES_FIELD_NUMBER: _ClassVar[int]
    START_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    end: int
    lines: _containers.RepeatedCompositeFieldContainer[Line]
    start: int
    text: str
    def __init__(self, start: _Optional[int] = ..., end: _Optional[int] = ..., lines: _Optional[_Iterable[_Union[Line, _Mapping]]] = ..., text: _Optional[str] = ...) -> None: ...

class WriteRequest(_message.Message):
    __slots__ = ["content", "expected_version", "mode", "path", "request_id", "strict_syntax"]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_VERSION_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    STRICT_SYNTAX_FIELD_NUMBER: _ClassVar[int]
    content: str
    expected_version: str
    mode: WriteMode
    path: str
    request_id: str
    strict_syntax: bool
    def __init__(self, path: _Optional[str] = ..., content: _Optional[str] = ..., mode: _Optional[_Union[WriteMode, str]] = ..., expected_version: _Optional[str] = ..., request_id: _Optional[str] = ..., strict_syntax: bool = ...) -> None: ...

class WriteResponse(_message.Message):
    __slots__ = ["created", "diagnostics", "path", "syntax_not_checked", "total_lines", "version", "warnings"]
    CREATED_FIELD_NUMBER: _ClassVar[int]
    DIAGNOSTICS_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    SYNTAX_NOT_CHECKED_FIELD_NUMBER: _ClassVar[int]
    TOTAL_LINES_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    WARNINGS_FIELD_NUMBER: _ClassVar[int]
    created: bool
    diagnostics: _containers.RepeatedCompositeFieldContainer[Diagnostic]
    path: str
    syntax_not_checked: str
    total_lines: int
    version: str
    warnings: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, path: _Optional[str] = ..., version: _Optional[str] = ..., total_lines: _Optional[int] = ..., created: bool = ..., diagnostics: _Optional[_Iterable[_Union[Diagnostic, _Mapping]]] = ..., syntax_not_checked: _Optional[str] = ..., warnings: _Optional[_Iterable[str]] = ...) -> None: ...

class WriteMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class WatchEventKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class EntryType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class ChangeKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
