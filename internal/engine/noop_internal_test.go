package engine

import (
	"testing"

	"github.com/hashline/hashline/internal/hashline"
)

func TestNoChangeDigest(t *testing.T) {
	base := []hashline.Edit{{Op: hashline.OpReplace, Start: "2:ab", Text: "two"}}
	same := func(edits ...hashline.Edit) bool {
		return noChangeDigest("f.txt", base) == noChangeDigest("f.txt", edits)
	}
	for _, tc := range []struct {
		name  string
		edits []hashline.Edit
		same  bool
	}{
		{"the same edit", []hashline.Edit{{Op: hashline.OpReplace, Start: "2:ab", Text: "two"}}, true},
		{"a ref with spaces, upper-case hex and pasted content", []hashline.Edit{{Op: hashline.OpReplace, Start: " 2:AB|two ", Text: "two"}}, true},
		{"an end equal to the start", []hashline.Edit{{Op: hashline.OpReplace, Start: "2:ab", End: "2:ab", Text: "two"}}, true},
		{"a text with its final newline", []hashline.Edit{{Op: hashline.OpReplace, Start: "2:ab", Text: "two\n"}}, true},
		{"a text with a pasted tag", []hashline.Edit{{Op: hashline.OpReplace, Start: "2:ab", Text: "2:ab|two"}}, true},
		{"another text", []hashline.Edit{{Op: hashline.OpReplace, Start: "2:ab", Text: "two "}}, false},
		{"another line", []hashline.Edit{{Op: hashline.OpReplace, Start: "3:ab", Text: "two"}}, false},
		{"another end", []hashline.Edit{{Op: hashline.OpReplace, Start: "2:ab", End: "3:cd", Text: "two"}}, false},
		{"another op", []hashline.Edit{{Op: hashline.OpInsertAfter, Start: "2:ab", Text: "two"}}, false},
		{"the edit twice", []hashline.Edit{base[0], base[0]}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := same(tc.edits...); got != tc.same {
				t.Errorf("same digest as %+v: %v, want %v", base, got, tc.same)
			}
		})
	}
	if noChangeDigest("f.txt", base) == noChangeDigest("g.txt", base) {
		t.Error("the same edits to two files have one digest")
	}
	if noChangeDigest("f", []hashline.Edit{{Op: hashline.OpReplaceText, OldText: "a", NewText: "bc"}}) == noChangeDigest("f", []hashline.Edit{{Op: hashline.OpReplaceText, OldText: "ab", NewText: "c"}}) {
		t.Error("oldText and newText that run into each other differently have one digest")
	}
}

func TestNoChangesAreBounded(t *testing.T) {
	var n noChanges
	sum := func(i int) [32]byte {
		return noChangeDigest("f", []hashline.Edit{{Op: hashline.OpAppend, Text: string(rune('a'+i%26)) + string(rune(i))}})
	}
	if got := n.refuse("a", sum(0)); got != 0 {
		t.Fatalf("a first refusal counts %d before", got)
	}
	if got := n.refuse("a", sum(0)); got != 1 {
		t.Fatalf("a second refusal counts %d before, want 1", got)
	}
	for i := 1; i <= noChangeEntries; i++ {
		n.refuse("b", sum(i))
	}
	if got := n.refuse("a", sum(0)); got != 0 {
		t.Errorf("the least recently refused no-op is still remembered past the bound (%d before)", got)
	}
	if got := n.refuse("b", sum(noChangeEntries)); got != 1 {
		t.Errorf("the most recent no-op was forgotten (%d before)", got)
	}
	if n.ll.Len() > noChangeEntries || len(n.m) != n.ll.Len() {
		t.Errorf("%d entries in the list, %d in the map; the bound is %d", n.ll.Len(), len(n.m), noChangeEntries)
	}
}
