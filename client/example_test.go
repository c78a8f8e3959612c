package client_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"os"
	"path/filepath"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/workspace"
	"github.com/hashline/hashline/server"
)

// startServer serves dir on a free loopback port, as `hashlined serve`
// does, and returns its address and a stop func.
func startServer(dir string) (string, func()) {
	ws, err := workspace.Open(dir)
	if err != nil {
		log.Fatal(err)
	}
	gs, _ := server.NewGRPCServer(server.New(ws), server.GRPCConfig{})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	go gs.Serve(lis)
	return lis.Addr().String(), func() { gs.Stop(); ws.Close() }
}

// An agent reads a file, edits a line by its tag, and then tries the same
// (now stale) tag again: the server refuses it and hands back the fresh tag
// to retry from.
func Example() {
	dir, _ := os.MkdirTemp("", "hashline-example")
	defer os.RemoveAll(dir)
	os.WriteFile(filepath.Join(dir, "greet.txt"), []byte("hello\nworld\n"), 0o644)
	addr, stop := startServer(dir)
	defer stop()

	c, err := client.Dial(addr, client.WithAgentID("example"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()

	read, err := c.Read(ctx, &hashlinev1.ReadRequest{Path: "greet.txt"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(read.GetText())
	world := client.Ref(read.GetLines()[1])

	edit, err := c.Edit(ctx, &hashlinev1.EditRequest{
		Path:  "greet.txt",
		Edits: []*hashlinev1.FileEdit{client.Replace(world, "", "there")},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(edit.GetWindows()[0].GetText())

	_, err = c.Edit(ctx, &hashlinev1.EditRequest{
		Path:  "greet.txt",
		Edits: []*hashlinev1.FileEdit{client.Replace(world, "", "again")},
	})
	var stale client.StaleRefError
	if errors.As(err, &stale) {
		fmt.Println("stale:", stale.Refs[0].GetRef(), "is now", stale.Refs[0].GetCurrentLine())
	}
	// Output:
	// 1:f9|hello
	// 2:b3|world
	// 1:f9|hello
	// 2:50|there
	// stale: 2:b3 is now 2:50|there
}

// Errors carry an exact reason; errors.Is matches it against the sentinels.
func ExampleFromStatus() {
	dir, _ := os.MkdirTemp("", "hashline-example")
	defer os.RemoveAll(dir)
	addr, stop := startServer(dir)
	defer stop()
	c, _ := client.Dial(addr)
	defer c.Close()

	_, err := c.Read(context.Background(), &hashlinev1.ReadRequest{Path: "../etc/passwd"})
	fmt.Println(errors.Is(err, client.ErrOutsideRoot))
	_, err = c.Write(context.Background(), &hashlinev1.WriteRequest{Path: "new.txt", Content: "x\n", Mode: hashlinev1.WriteMode_WRITE_MODE_REPLACE})
	fmt.Println(errors.Is(err, client.ErrNotFound))
	// Output:
	// true
	// true
}

// A connection made with grpc.NewClient (here with its own message limit)
// gets the transport of client.Dial from TransportOptions, and New wraps it.
func ExampleTransportOptions() {
	dir, _ := os.MkdirTemp("", "hashline-example")
	defer os.RemoveAll(dir)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("one\ntwo\n"), 0o644)
	addr, stop := startServer(dir)
	defer stop()

	opts := append(client.TransportOptions(),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(256<<20)))
	conn, err := grpc.NewClient("passthrough:///"+addr, opts...)
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	c := client.New(conn, client.WithAgentID("orchestrator"))

	r, err := c.Read(context.Background(), &hashlinev1.ReadRequest{Path: "notes.txt"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(r.GetText())
	// Output:
	// 1:60|one
	// 2:f4|two
}
