package history_test

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/hashline/hashline/internal/hashline"
	"github.com/hashline/hashline/internal/history"
)

// Two agents change a file and one moves it; the history of its new path
// follows it back through the move, and blame says who wrote each line.
func Example() {
	dir, err := os.MkdirTemp("", "history-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	log, err := history.Open(filepath.Join(dir, "history"), history.Options{Now: clock})
	if err != nil {
		panic(err)
	}
	defer log.Close()

	v1 := hashline.ParseText("package main\n\nfunc main() {}\n")
	v2 := hashline.ParseText("package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(1) }\n")
	write, _ := log.Append(history.Change{Kind: history.KindWrite, Agent: "alice", RequestID: "r1",
		Files: []history.File{{Path: "main.go", After: "v2-a", Hunks: history.HunksOf(nil, v1)}}})
	now = now.Add(time.Minute)
	log.Append(history.Change{Kind: history.KindEdit, Agent: "bob", RequestID: "r2",
		Files: []history.File{{Path: "main.go", Before: "v2-a", After: "v2-b", Hunks: history.HunksOf(v1, v2)}}})
	now = now.Add(time.Minute)
	log.Append(history.Change{Kind: history.KindMove, Agent: "alice",
		Files: []history.File{{Path: "cmd/app/main.go", From: "main.go", Before: "v2-b", After: "v2-b"}}})

	page, _ := log.History(history.Query{Path: "cmd/app/main.go"})
	for _, c := range page.Changes {
		f := c.Files[0]
		fmt.Printf("%s %s %s by %s: -%d +%d\n", c.Time.Format("15:04"), c.Kind, f.Path, c.Agent, f.Removed, f.Added)
	}
	spans, _ := log.Blame("cmd/app/main.go", v2.Len())
	for _, s := range spans {
		fmt.Printf("lines %d-%d: %s\n", s.Start, s.End, s.Agent)
	}
	got, _ := log.Get(write.ID.String())
	fmt.Println(got.RequestID, got.Files[0].Hunks[0].Added[0])
	// Output:
	// 09:02 move cmd/app/main.go by alice: -0 +0
	// 09:01 edit main.go by bob: -1 +3
	// 09:00 write main.go by alice: -0 +3
	// lines 1-2: alice
	// lines 3-5: bob
	// r1 package main
}
