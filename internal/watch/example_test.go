package watch_test

import (
	"fmt"

	"github.com/hashline/hashline/internal/watch"
)

// A subscriber to a directory sees an agent's edit with the changed lines,
// and the same write seen again by the file-system watcher is not
// reported twice.
func ExampleHub() {
	hub := watch.NewHub()
	sub, _ := hub.Subscribe("src")
	defer sub.Close()

	old := watch.State{Version: "v1", Text: []byte("a\nb\nc\n"), HasText: true}
	cur := watch.State{Version: "v2", Text: []byte("a\nB\nB2\nc\n"), HasText: true}
	hub.Publish(watch.Change{Path: "src/main.go", Agent: "alice", Old: &old, New: cur})
	hub.Publish(watch.Change{Path: "src/main.go", External: true, New: cur}) // the echo
	hub.Publish(watch.Change{Path: "docs/x.md", Agent: "bob", Old: &watch.State{}, New: cur})

	for {
		ev, ok := sub.Next()
		if !ok {
			break
		}
		fmt.Println(ev.Path, ev.Kind, ev.Agent, ev.OldVersion, "->", ev.NewVersion, ev.Changed)
	}
	// Output:
	// src/main.go modified alice v1 -> v2 [{2 1 2 2}]
}

func ExampleRanges() {
	fmt.Println(watch.Ranges([]byte("one\ntwo\nthree\n"), []byte("one\nthree\nfour\n")))
	// Output:
	// [{2 1 1 0} {3 0 3 1}]
}
