package mcp_test

import (
	"context"
	"fmt"
	"log"
	"net"
	"os"
	"path/filepath"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hashline/hashline/client"
	"github.com/hashline/hashline/internal/engine"
	"github.com/hashline/hashline/internal/mcp"
	"github.com/hashline/hashline/internal/workspace"
	"github.com/hashline/hashline/server"
)

// New serves the tools of an engine through its client; an MCP client
// (here over the SDK's in-memory transport, in `hashline mcp` over stdio)
// then reads and edits files by LINE:HASH reference.
func ExampleNew() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	os.WriteFile(filepath.Join(dir, "main.go"), []byte("func main() {\n\tprintln(\"hi\")\n}\n"), 0o644)

	// The engine: a hashlined-style server of dir on a loopback port.
	ws, err := workspace.Open(dir)
	if err != nil {
		log.Fatal(err)
	}
	defer ws.Close()
	gs, _ := server.NewGRPCServer(server.New(ws, engine.WithRequireRead(false)), server.GRPCConfig{})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	go gs.Serve(lis)
	defer gs.Stop()
	engine, err := client.Dial(lis.Addr().String())
	if err != nil {
		log.Fatal(err)
	}
	defer engine.Close()

	ctx := context.Background()
	clientSide, serverSide := sdk.NewInMemoryTransports()
	if _, err := mcp.New(engine).Connect(ctx, serverSide, nil); err != nil {
		log.Fatal(err)
	}
	session, err := sdk.NewClient(&sdk.Implementation{Name: "example"}, nil).Connect(ctx, clientSide, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer session.Close()

	call := func(tool string, args map[string]any) {
		res, err := session.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(res.Content[0].(*sdk.TextContent).Text)
	}
	call("read_file", map[string]any{"path": "main.go"})
	call("edit_file", map[string]any{"path": "main.go", "edits": []map[string]any{
		{"set_line": map[string]any{"anchor": "2:16", "new_text": "\tprintln(\"hello\")"}},
		{"insert_after": map[string]any{"anchor": "1:76", "text": "\t// Greet."}},
	}})
	// Output:
	// File: main.go (3 lines)
	//
	// ```
	// 1:76|func main() {
	// 2:16|	println("hi")
	// 3:18|}
	// ```
	// Updated main.go (4 lines). Lines after 2 moved down 1.
	// ```diff
	//  1:76|func main() {
	// +2:b2|	// Greet.
	// -	println("hi")
	// +3:d4|	println("hello")
	//  4:18|}
	// ```
}
