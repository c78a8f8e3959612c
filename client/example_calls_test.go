package client_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
)

// exampleWorkspace writes files into a new temp dir, serves it, and returns a
// connected client and a cleanup func.
func exampleWorkspace(files map[string]string) (*client.Client, func()) {
	dir, err := os.MkdirTemp("", "hashline-example")
	if err != nil {
		log.Fatal(err)
	}
	for name, content := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			log.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			log.Fatal(err)
		}
	}
	addr, stop := startServer(dir)
	c, err := client.Dial(addr, client.WithAgentID("example"))
	if err != nil {
		log.Fatal(err)
	}
	return c, func() { c.Close(); stop(); os.RemoveAll(dir) }
}

func ExampleClient_Read() {
	c, done := exampleWorkspace(map[string]string{"main.go": "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n"})
	defer done()

	r, err := c.Read(context.Background(), &hashlinev1.ReadRequest{Path: "main.go", Offset: 3, Limit: 2})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(client.FormatRead(r))
	fmt.Println("ref of line 4:", client.Ref(r.GetLines()[1]))
	// Output:
	// File: main.go (5 lines, version v2-e2a19f46ab26455998932e316fe0a879) [showing lines 3-4; 1 more below, continue with offset 5]
	// 3:76|func main() {
	// 4:16|	println("hi")
	// ref of line 4: 4:16
}

func ExampleClient_Edit() {
	c, done := exampleWorkspace(map[string]string{"main.go": "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n"})
	defer done()
	ctx := context.Background()

	r, err := c.Read(ctx, &hashlinev1.ReadRequest{Path: "main.go"})
	if err != nil {
		log.Fatal(err)
	}
	line4 := client.Ref(r.GetLines()[3])
	resp, err := c.Edit(ctx, &hashlinev1.EditRequest{
		Path: "main.go",
		Edits: []*hashlinev1.FileEdit{
			client.Replace(line4, "", "\tprintln(\"hello\")"),
			client.InsertAfter(line4, "\tprintln(\"bye\")"),
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(client.FormatEdit(resp, false))
	fmt.Println("replaced:", client.FormatTagged(resp.GetReplaced()))
	// Output:
	// Updated main.go (6 lines, version v2-8586c249057ef25deac8838857a0c619). Lines after 4 moved down 1.
	//  1:c9|package main
	//  2:05|
	//  3:76|func main() {
	// -	println("hi")
	// +4:d4|	println("hello")
	// +5:81|	println("bye")
	//  6:18|}
	// replaced: 4:16|	println("hi")
}

func ExampleClient_Write() {
	c, done := exampleWorkspace(map[string]string{"notes.txt": "old\n"})
	defer done()
	ctx := context.Background()

	// Create-only: refuses to clobber an existing file.
	_, err := c.Write(ctx, &hashlinev1.WriteRequest{Path: "notes.txt", Content: "new\n", Mode: hashlinev1.WriteMode_WRITE_MODE_CREATE})
	fmt.Println(errors.Is(err, client.ErrAlreadyExists))

	w, err := c.Write(ctx, &hashlinev1.WriteRequest{Path: "docs/todo.txt", Content: "one\ntwo\n", Mode: hashlinev1.WriteMode_WRITE_MODE_CREATE})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(client.FormatWrite(w))

	// Compare-and-swap: only overwrite the version we saw.
	_, err = c.Write(ctx, &hashlinev1.WriteRequest{Path: "docs/todo.txt", Content: "three\n", ExpectedVersion: "v1-0000"})
	fmt.Println(errors.Is(err, client.ErrVersionMismatch))
	w, err = c.Write(ctx, &hashlinev1.WriteRequest{Path: "docs/todo.txt", Content: "three\n", ExpectedVersion: w.GetVersion()})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(client.FormatWrite(w))
	// Output:
	// true
	// Created docs/todo.txt (2 lines, version v2-04d2649eb72531af4fa85b201f661081)
	// true
	// Wrote docs/todo.txt (1 line, version v2-60fb664876a40c05fc85d3fae1fa06ee)
}

func ExampleClient_Grep() {
	c, done := exampleWorkspace(map[string]string{
		"a.go": "package a\n\n// TODO: name\nfunc A() {}\n",
		"b.go": "package b\n\nfunc B() {} // todo later\n",
		"c.go": "package c\n",
	})
	defer done()

	summary, err := c.Grep(context.Background(), &hashlinev1.GrepRequest{Pattern: "todo", CaseInsensitive: true, After: 1},
		func(f *hashlinev1.GrepFile) error {
			fmt.Print(client.FormatGrepFile(f))
			return nil
		})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(client.FormatGrepSummary(summary))
	// Output:
	// File: a.go (version v2-091dbc67c657305e333fab16b5056983)
	// >>3:7a|// TODO: name
	//   4:67|func A() {}
	// File: b.go (version v2-132b0f25620571f40d980b4267d2d29e)
	// >>3:67|func B() {} // todo later
	// 2 matches in 2 files (3 files searched).
}

func ExampleClient_List() {
	c, done := exampleWorkspace(map[string]string{
		".gitignore":   "*.log\n",
		"main.go":      "package main\n",
		"debug.log":    "ignored\n",
		"pkg/a/a.go":   "package a\n",
		"pkg/a/a.txt":  "notes\n",
		"pkg/b/b.go":   "package b\n",
		"pkg/b/b_test": "x\n",
	})
	defer done()
	ctx := context.Background()

	// One page of three, then the rest page by page.
	page, err := c.List(ctx, &hashlinev1.ListRequest{Recursive: true, MaxEntries: 3})
	if err != nil {
		log.Fatal(err)
	}
	for _, e := range page.GetEntries() {
		fmt.Print(client.FormatEntry(e, true, false))
	}
	fmt.Println("truncated:", page.GetTruncated())
	err = c.ListAll(ctx, &hashlinev1.ListRequest{Recursive: true, MaxEntries: 3, Glob: []string{"*.go"}},
		func(entries []*hashlinev1.Entry) error {
			for _, e := range entries {
				fmt.Print(client.FormatEntry(e, false, false))
			}
			return nil
		})
	if err != nil {
		log.Fatal(err)
	}
	// Output:
	// main.go 13
	// pkg/
	// pkg/a/
	// truncated: true
	// main.go
	// pkg/a/a.go
	// pkg/b/b.go
}

// An edit made from tags another agent has since changed is refused with
// the fresh tags; the agent retries from them without another Read.
func ExampleStaleRefError() {
	c, done := exampleWorkspace(map[string]string{"greet.txt": "hello\nworld\n"})
	defer done()
	ctx := context.Background()

	r, err := c.Read(ctx, &hashlinev1.ReadRequest{Path: "greet.txt"})
	if err != nil {
		log.Fatal(err)
	}
	world := client.Ref(r.GetLines()[1]) // "2:b3"

	// Meanwhile line 2 changes under us.
	if _, err := c.Edit(ctx, &hashlinev1.EditRequest{Path: "greet.txt",
		Edits: []*hashlinev1.FileEdit{client.Replace(world, "", "there")}}); err != nil {
		log.Fatal(err)
	}

	_, err = c.Edit(ctx, &hashlinev1.EditRequest{Path: "greet.txt",
		Edits: []*hashlinev1.FileEdit{client.Replace(world, "", "world!")}})
	var stale client.StaleRefError
	if !errors.As(err, &stale) {
		log.Fatalf("want a stale ref, got %v", err)
	}
	fmt.Print(client.FormatError(err))

	// Retry from the fresh tag the error carried.
	fresh := stale.Refs[0].GetCurrentLine() // "2:50|there": a whole tagged line is a valid ref
	resp, err := c.Edit(ctx, &hashlinev1.EditRequest{Path: "greet.txt",
		Edits: []*hashlinev1.FileEdit{client.Replace(fresh, "", "world!")}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(client.FormatEdit(resp, false))
	// Output:
	// 1 line(s) changed since last read; use the updated refs below (>>> marks changed lines)
	//     1:f9|hello
	// >>> 2:50|there
	// current version v2-1551bbe4d923d6c7517a8cddaf2b5f18
	// Updated greet.txt (2 lines, version v2-1daf31b422683c673ce9744efbea7ce5). Line numbers unchanged.
	//  1:f9|hello
	// -there
	// +2:68|world!
}

// ExampleClient_Apply renames a function across two files and moves one
// of them, all or nothing: had either reference been stale, nothing would
// have been written.
func ExampleClient_Apply() {
	c, done := exampleWorkspace(map[string]string{
		"util.go": "package main\n\nfunc helper() {}\n",
		"main.go": "package main\n\nfunc main() { helper() }\n",
	})
	defer done()
	ctx := context.Background()

	ref := func(path string, n int32) string {
		r, err := c.Read(ctx, &hashlinev1.ReadRequest{Path: path, Offset: n, Limit: 1})
		if err != nil {
			log.Fatal(err)
		}
		return client.Ref(r.GetLines()[0])
	}
	edit := func(path string, e *hashlinev1.FileEdit) *hashlinev1.Change {
		return &hashlinev1.Change{Change: &hashlinev1.Change_Edit{Edit: &hashlinev1.EditRequest{Path: path, Edits: []*hashlinev1.FileEdit{e}}}}
	}
	resp, err := c.Apply(ctx, &hashlinev1.ApplyRequest{Changes: []*hashlinev1.Change{
		edit("util.go", client.Replace(ref("util.go", 3), "", "func assist() {}")),
		edit("main.go", client.Replace(ref("main.go", 3), "", "func main() { assist() }")),
		{Change: &hashlinev1.Change_Move{Move: &hashlinev1.MoveRequest{From: "util.go", To: "internal/assist.go"}}},
	}})
	var conflict *client.Error
	switch {
	case errors.As(err, &conflict) && conflict.Reason == "CONFLICTING_CHANGES":
		// util.go is edited and moved: one change per path. Edit it, then
		// move it, in two sets.
		fmt.Println("refused:", conflict.Reason)
	case err != nil:
		log.Fatal(err)
	default:
		fmt.Println("applied", len(resp.GetResults()), "changes")
	}
	// Output:
	// refused: CONFLICTING_CHANGES
}

// ExampleClient_Move moves a file into a new directory; an agent's
// references to it keep working at the new path.
func ExampleClient_Move() {
	c, done := exampleWorkspace(map[string]string{"notes.txt": "one\ntwo\n"})
	defer done()
	ctx := context.Background()

	r, err := c.Read(ctx, &hashlinev1.ReadRequest{Path: "notes.txt"})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := c.Move(ctx, &hashlinev1.MoveRequest{From: "notes.txt", To: "docs/notes.txt"}); err != nil {
		log.Fatal(err)
	}
	if _, err := c.Edit(ctx, &hashlinev1.EditRequest{Path: "docs/notes.txt", Edits: []*hashlinev1.FileEdit{client.Replace(client.Ref(r.GetLines()[1]), "", "TWO")}}); err != nil {
		log.Fatal(err)
	}
	d, err := c.Delete(ctx, &hashlinev1.DeleteRequest{Path: "docs/notes.txt"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("deleted", d.GetPath())
	// Output:
	// deleted docs/notes.txt
}
