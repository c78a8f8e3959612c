package server_test

import (
	"math"
	"testing"

	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
)

// Context is bounded by the file, not by the request: a huge before/after
// must neither allocate for the lines it asks for nor take the server down.
func TestGrepHugeContextIsTheWholeFile(t *testing.T) {
	e := newEnv(t)
	e.write("a.txt", "one\ntwo\nthree\nfour\n")
	for _, req := range []*hashlinev1.GrepRequest{
		{Pattern: "two", Before: math.MaxInt32, After: math.MaxInt32},
		{Pattern: "o", Before: math.MaxInt32},
		{Pattern: "three", After: math.MaxInt32},
	} {
		files, _, err := e.grepAll(req)
		if err != nil {
			t.Fatal(err)
		}
		var got []int32
		for _, f := range files {
			for _, l := range f.GetLines() {
				got = append(got, l.GetNumber())
			}
		}
		want := map[string][]int32{"two": {1, 2, 3, 4}, "o": {1, 2, 3, 4}, "three": {3, 4}}[req.GetPattern()]
		if len(got) != len(want) {
			t.Fatalf("%v: lines %v, want %v", req, got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%v: lines %v, want %v", req, got, want)
			}
		}
	}
}
