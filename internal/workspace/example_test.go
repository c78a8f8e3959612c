package workspace_test

import (
	"errors"
	"fmt"
	"log"
	"os"

	"github.com/hashline/hashline/internal/workspace"
)

func ExampleWorkspace_WriteFile() {
	dir, err := os.MkdirTemp("", "hashline-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ws, err := workspace.Open(dir)
	if err != nil {
		log.Fatal(err)
	}
	defer ws.Close()

	// Parents are created; the write is atomic and durable.
	res, err := ws.WriteFile("notes/todo.txt", []byte("buy milk\n"), workspace.WriteOptions{Mode: workspace.CreateOnly})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Path, res.Created, res.Version)

	// Create-only refuses to clobber, with a sentinel to branch on and a
	// message that says what to do.
	_, err = ws.WriteFile("notes/todo.txt", []byte("sell milk\n"), workspace.WriteOptions{Mode: workspace.CreateOnly})
	fmt.Println(errors.Is(err, workspace.ErrExists))
	fmt.Println(err)

	// The version is a hash of the bytes, so reading gives the same token.
	f, err := ws.ReadFile("notes/todo.txt")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%q %s %v\n", f.Text, f.Encoding, f.Version == res.Version)

	// Output:
	// notes/todo.txt true v2-eebf0db75f5e2418575b7af93a76af91
	// true
	// write "notes/todo.txt": file already exists; read it and edit it, or write with mode upsert or replace to overwrite it
	// "buy milk\n" utf-8 true
}
