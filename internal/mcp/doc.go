// Package mcp serves the hashline service to MCP clients (Claude Desktop,
// Cursor, any client of the Model Context Protocol) as tools: read_file,
// edit_file, write_file and grep, delete_file and move_file (files.go),
// where edit_file also takes edits for several files, made all or nothing
// by one Apply, and undo (undo.go), which reverts the caller's own last
// change, or one it names, over the changes made since.
//
// The tools follow the argument shapes of the published hashline MCP server
// (mcp-hashline-edit-server 0.2.0): read_file takes path, offset and limit;
// edit_file takes a path and a batch of edits, each one of set_line,
// replace_lines, insert_after or replace, to which this server adds
// insert_before, delete, append and prepend. Results are the same tagged
// text ("LINE:HASH|CONTENT"), and tags are byte-identical to that server's
// for the same file (testdata/peer holds its recorded output).
//
// Every tool is a thin translation to a hashline.v1 call on a
// client.Client: of the workspace's shared engine (internal/daemon), or of
// a hashlined named by --server. A stale reference comes back as a tool
// error whose text is the ">>>" view of the fresh tags to retry with.
//
// New gives the server for any MCP transport; Serve runs it over a stream
// pair (hashline mcp's stdin and stdout), one message per line of at most
// MaxFrameBytes, through a connection of its own (frames.go) that answers
// a bad line with a JSON-RPC error instead of ending the session. The SDK
// decodes and validates every call's arguments against the tool's input
// schema and serialises every result.
package mcp
