// Package syntax tells which syntax errors an edit introduced into a file.
//
// That is its one job: [Check] is given a file's path and its content
// before and after an edit and returns the diagnostics present after that
// were not there before (an error that merely moved with the lines around
// it is the same error), each with its line and column in the new content,
// a message and the checker that found it. It writes nothing, runs no
// command and never fails: a file too large, not UTF-8 text, or whose
// parser panicked or ran past its time budget is reported as not checked,
// with the reason.
//
// # Checkers
//
// The checker is chosen by the file's extension, or by its name for a few
// well-known names ([Language]):
//
//   - Go: go/parser.
//   - JavaScript, TypeScript, JSX and TSX: esbuild's parser, through its
//     Transform API with the loader for the extension (.js, .mjs and .cjs
//     files are read as JSX, which accepts every JavaScript program, since
//     many such files hold JSX).
//   - JSON: encoding/json; tsconfig.json and a few other names that allow
//     comments and trailing commas are read as JSON with comments.
//   - YAML: go.yaml.in/yaml/v3, every document of the stream.
//   - Prose (Markdown, plain text and the like): not checked; brackets in
//     prose ("1)", ":-)") mean nothing.
//   - Everything else: a balance check of (), [] and {} (and, for the
//     languages whose comments and strings it knows, of string quotes and
//     block comments). It reports only a change the edit made to a file
//     that was balanced before: a file that was already unbalanced, for
//     whatever reason, gives no diagnostic.
//
// # Large files
//
// A parse of a large Go or TypeScript file costs more than the edit itself,
// so above [Options.ChunkBytes] the checker first parses only the top-level
// declarations the edit touched (from the nearest line at column 0 that
// starts a declaration before the change to the next one after it). When
// that piece parses clean, the edit introduced nothing; when it does not,
// the whole file is parsed, before and after, and compared. The piece is
// found from the layout of the text, not from a parse, so an edit whose
// error shows only in the context around it (inside a multi-line string
// that starts before the piece, say) can go unreported; it is never
// reported wrongly, since every diagnostic comes from whole-file parses.
//
// # JavaScript and TypeScript
//
// esbuild has no parse-only entry point: its Transform parses, then links
// and prints, and the linking costs more than the parse of a small piece.
// It stops after the parse when there are errors, so a source is first
// given to it with a sentinel after it whose error stands only where a
// source that parses leaves off; when that error is all there is, the
// source parses (see esbuildParses). Any other answer is checked by a
// Transform of the source alone.
//
// # Cache
//
// An edit that leaves errors needs the errors of the content before it
// too, which is most often the content after the edit before. A [Cache]
// in [Options] keeps the errors of the last whole-file parse of each of
// the files checked last, known by the content's SHA-256, so that the
// content before is not parsed again.
package syntax
