package versions_test

import (
	"errors"
	"fmt"

	"github.com/hashline/hashline/internal/hashline"
	"github.com/hashline/hashline/internal/versions"
)

// An agent read a file and replaced its second line; meanwhile another
// agent added a line at the top. The rebase moves the reference to line 3.
func ExampleRebase() {
	var h hashline.Hasher
	base := hashline.ParseDocument([]byte("package main\nfunc a() {}\nfunc b() {}\n"))
	cur := hashline.ParseDocument([]byte("// Copyright\npackage main\nfunc a() {}\nfunc b() {}\n"))
	ref := hashline.Ref{Line: 2, Hash: h.Sum("func a() {}")}.String()

	r, err := versions.Rebase(base, cur, []hashline.Edit{{Op: hashline.OpReplace, Start: ref, Text: "func a() { return }"}}, h)
	if err != nil {
		panic(err)
	}
	for _, m := range r.Moved {
		fmt.Printf("%s moved from line %d to %d\n", m.Ref, m.From, m.To)
	}
	res, _ := hashline.ApplyEdits(cur, r.Edits, hashline.ApplyOptions{Hasher: h})
	fmt.Print(res.Doc.Text())

	// Had the other agent changed line 2 itself, the edit would conflict.
	changed := hashline.ParseDocument([]byte("package main\nfunc a() { panic(1) }\nfunc b() {}\n"))
	_, err = versions.Rebase(base, changed, []hashline.Edit{{Op: hashline.OpReplace, Start: ref, Text: "x"}}, h)
	var ce *versions.ConflictError
	if errors.As(err, &ce) {
		fmt.Println(ce.Conflicts[0].Reason, ce.Conflicts[0].CurrentLine)
	}
	// Output:
	// 2:95 moved from line 2 to 3
	// // Copyright
	// package main
	// func a() { return }
	// func b() {}
	// CHANGED 2:e0|func a() { panic(1) }
}
