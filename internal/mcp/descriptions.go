package mcp

// The texts a model reads. They say what the tools do here, including where
// this server differs from the published hashline MCP server.

const instructions = `hashline edits files by reference. read_file (or grep) shows every line as LINE:HASH|CONTENT; edit_file points at lines with those LINE:HASH refs instead of repeating old text. Every ref is checked against the file as it is now: if a line changed since you read it, the edit is refused, nothing is written, and the error shows the fresh refs (>>> marks changed lines) to retry with.`

const readDescription = `Read a text file with hashline-prefixed output: every line is LINE:HASH|CONTENT.

Use this instead of built-in read tools when you plan to edit: the LINE:HASH pairs are the anchors edit_file needs.

- path: relative to the workspace root (an absolute path inside the root works too).
- offset: first line to show, 1-based (default 1). limit: most lines (default and maximum 2000).
- Output stops early at 256 KiB of text; the header then says which lines are shown and the offset to continue from.
- Lines longer than 4 KiB are shown cut with a marker; their hash covers the whole line, so they can still be replaced or deleted by reference.
- plain: true returns LINE|CONTENT without hashes (for reading only).
Text files only: binary files and files that are not valid UTF-8 (or UTF-16 with a BOM) are refused.`

const editDescription = `Edit a file using hash-verified line references (LINE:HASH, copied verbatim from read_file, grep or a previous edit).

All edits in one call refer to the file as you last saw it, not as changed by earlier edits in the same call; they are checked together, applied bottom-up and written once, atomically. If any ref is stale, nothing is written and the error shows the updated refs (>>> marks changed lines): retry with those.

Each item of edits holds exactly one of:
- set_line: {anchor, new_text}: replace one line ("" deletes it).
- replace_lines: {start_anchor, end_anchor, new_text}: replace the range, inclusive ("" deletes it).
- insert_after: {anchor, text}: insert lines after the anchor.
- insert_before: {anchor, text}: insert lines before the anchor.
- delete: {start_anchor, end_anchor?}: delete a line or a range.
- append: {text} / prepend: {text}: add lines at the end / start of the file (no ref needed; works on empty files).
- replace: {old_text, new_text, all?}: fallback without refs; old_text must match exactly (line endings aside) and be unique unless all is true.

Rules:
- text/new_text are plain lines separated by \n, without LINE:HASH prefixes or diff markers.
- Edits that touch the same line or overlapping ranges are refused; an edit that changes nothing is refused.
- The result shows a diff and fresh LINE:HASH refs around each change: use them for follow-up edits without re-reading. Lines you did not change keep their hashes.`

const writeDescription = `Create a file or overwrite it whole, atomically (missing parent directories are created).

Prefer edit_file to change an existing file: it is checked against what you read and cannot lose someone else's change. Use this for new files or when replacing everything is simpler.`

const grepDescription = `Search files with a regular expression (RE2 syntax) and get hashline-prefixed results whose LINE:HASH refs can be passed directly to edit_file.

Match lines are shown as PATH:>>LINE:HASH|CONTENT, context lines as PATH:  LINE:HASH|CONTENT, and "--" separates groups.
- path: file or directory under the workspace root (default: the whole workspace). .gitignore is honoured; hidden files and binary files are skipped.
- glob: only files matching it ("*.go", "src/**/*.ts"). type: only files of a type ("go", "py", "ts", ...).
- i: case-insensitive. pre/post: context lines before/after each match.
- limit: stop after this many matching lines in total (default 100); the result says when it stopped.`
