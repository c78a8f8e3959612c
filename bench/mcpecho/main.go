// Command mcpecho is the benchmark's measure of what an MCP tool call
// costs with no server work behind it: an MCP server on stdio that answers
// every tools/call with the text of the file its "path" argument names
// under -replies, serialised once at the first call and written as it is
// after that. A call to it pays the client, the pipe and the reply's size,
// and nothing else, so the peer's time over its time is the most any MCP
// server could be faster than the peer on that call.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

func main() {
	dir := flag.String("replies", ".", "directory holding the text of each tool result, by the call's path argument")
	flag.Parse()
	if err := serve(os.Stdin, os.Stdout, *dir); err != nil {
		fmt.Fprintln(os.Stderr, "mcpecho:", err)
		os.Exit(1)
	}
}

// request is the part of a JSON-RPC request mcpecho reads.
type request struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		ProtocolVersion string `json:"protocolVersion"`
		Arguments       struct {
			Path string `json:"path"`
		} `json:"arguments"`
	} `json:"params"`
}

func serve(in io.Reader, out io.Writer, dir string) error {
	replies := map[string][]byte{}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	w := bufio.NewWriterSize(out, 1<<20)
	for sc.Scan() {
		var req request
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
			return err
		}
		if req.ID == nil {
			continue // a notification
		}
		var result []byte
		switch req.Method {
		case "initialize":
			result, _ = json.Marshal(map[string]any{
				"protocolVersion": req.Params.ProtocolVersion,
				"capabilities":    map[string]any{"tools": map[string]any{}},
				"serverInfo":      map[string]any{"name": "mcpecho", "version": "0"},
			})
		case "tools/call":
			p := req.Params.Arguments.Path
			if result = replies[p]; result == nil {
				text, err := os.ReadFile(filepath.Join(dir, filepath.Clean("/"+p)))
				if err != nil {
					return err
				}
				result, _ = json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": string(text)}}})
				replies[p] = result
			}
		default:
			result = []byte("{}")
		}
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", req.ID, result)
		if err := w.Flush(); err != nil {
			return err
		}
	}
	return sc.Err()
}
