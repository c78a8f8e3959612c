// Package hashline is the pure core of the hashline editor: it hashes and
// tags lines, parses the LINE:HASH references models send back, and plans and
// applies batches of line edits against an in-memory document.
//
// # The format
//
// A tagged line is LINE:HASH|CONTENT, for example
//
//	12:3f|	return nil
//
// LINE is the 1-based line number, HASH is lowercase hex and CONTENT is the
// line without its ending. The default hash is compatible with the published
// hashline format: drop one trailing "\r", remove every whitespace character
// (JavaScript's \s), take xxHash32 with seed 0 of the UTF-8 bytes and print
// the value mod 256 as two hex digits. Longer hashes (up to 8 digits) use the
// low bits of the same value. Whitespace is ignored on purpose so that
// re-indenting a line does not invalidate a model's references; exact change
// detection is the job of content versions, which live outside this package.
//
// # Edits
//
// An edit batch ([Edit]) is resolved against a [Document] by [PlanEdits]:
// every reference is checked by line number and hash, all problems of all
// edits are reported together in a [*BatchError], overlapping edits are
// refused and identical duplicates count once. [Plan.Apply] then builds the
// new document in memory, keeping untouched lines byte for byte (including
// their LF or CRLF endings, the BOM and a missing final newline), and reports
// a unified diff, fresh tagged windows around every change and the lines that
// were replaced.
//
// # Repairs
//
// Models slip in predictable ways when they write an edit's text: they
// paste read output's tags, write a diff, repeat the line beside the range,
// drop the indentation, or escape tabs. Unless a batch is planned with
// [Strict], PlanEdits repairs these where the intended edit is unambiguous
// and reports each one ([Repair], [RepairKind]); where a repair would be a
// guess it refuses the edit with both readings (repair.go, repair_echo.go
// and repair_indent.go say, per rule, what counts as evidence). A repair
// changes only the edit's new lines, never its range.
//
// The package does no I/O: loading, writing, versions and the transport are
// the callers' business.
package hashline
