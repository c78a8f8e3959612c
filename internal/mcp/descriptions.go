package mcp

// The texts a model reads. They say what the tools do here, including where
// this server differs from the published hashline MCP server.

const instructions = `hashline edits files by reference. read_file (or grep) shows every line as LINE:HASH|CONTENT; edit_file points at lines with those LINE:HASH refs instead of repeating old text. Every ref is checked against the file as it is now: if a line changed since you read it, the edit is refused, nothing is written, and the error shows the fresh refs (>>> marks changed lines) to retry with.`

const readDescription = `Read a text file as LINE:HASH|CONTENT lines: the LINE:HASH refs are what edit_file takes, so use this (or grep) rather than other read tools before editing.
offset (1-based) and limit (default and most 2000 lines) page through a large file; a page also stops at 256 KiB, and the header says where to continue. Lines over 4 KiB are shown cut, and can still be edited by ref. plain: true leaves out the hashes, for reading only. Binary files are refused.`

// editDescription teaches every operation and the reply in as few bytes as
// the peer's teaches fewer: tools/list is paid for in every session
// (TestToolListIsSmallerThanThePeers keeps it below the peer's, with room
// for a paragraph on repairs).
const editDescription = `Edit a file by LINE:HASH refs copied from read_file, grep or an earlier edit's result. All edits of a call refer to the file as you last saw it, not as changed by earlier items, and are written together or not at all. If a ref is stale nothing is written, and the error shows the current lines (>>> on changed ones): retry with their refs.
Each item of edits holds one of:
- set_line {anchor, new_text}: replace a line
- replace_lines {start_anchor, end_anchor, new_text}: replace lines, inclusive
- insert_after, insert_before {anchor, text}
- delete {start_anchor, end_anchor?}
- append, prepend {text}: add at the end, start (no ref; works on an empty file)
- replace {old_text, new_text, all?}: exact text, unique unless all; when you have no refs
Texts are plain lines joined by \n, without LINE:HASH| or diff prefixes; new_text "" deletes. Overlapping edits, and a call that changes nothing, are refused.
The result is a diff whose " " (unchanged) and "+" (added) lines carry fresh LINE:HASH refs for your next edit; "-" lines were removed. It says how the other lines' numbers moved; their hashes stay. Use refs from your read_file, grep or edit results (renumbered as a result says, or your read's own numbers); a ref to a line you were never shown is refused with fresh refs.`

const writeDescription = `Create or overwrite a whole file, atomically; missing directories are created. To change part of a file prefer edit_file, which cannot undo someone else's change.`

const grepDescription = `Search files with an RE2 regular expression. Matches are PATH:>>LINE:HASH|CONTENT, context lines PATH:  LINE:HASH|CONTENT, "--" between groups: refs edit_file takes. Skips .gitignored, hidden and binary files; stops at limit matching lines (default 100) and says so.`

const listDescription = `List a directory, one path per line ("/" ends directories, "@" symlinks), skipping what grep skips. A long list ends with a page_token to continue.`
