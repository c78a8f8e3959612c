package hashline

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

type editCase struct {
	name  string
	in    string
	edits []Edit
	want  string   // the new file, if the batch succeeds
	warns []string // substrings of the warnings, in order
	// For a refused batch: the dominant reason and substrings of the error.
	reason  Reason
	mention []string
}

func runEditCases(t *testing.T, cases []editCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			d := ParseDocument([]byte(tt.in))
			h := Hasher{}
			opts := ApplyOptions{Hasher: h, Context: 1}
			res, err := ApplyEdits(d, resolveEdits(d, h, tt.edits), opts)
			if tt.reason != "" {
				var be *BatchError
				if !errors.As(err, &be) {
					t.Fatalf("error = %v, want a *BatchError with reason %s", err, tt.reason)
				}
				if be.Reason() != tt.reason {
					t.Errorf("Reason() = %s, want %s; error:\n%s", be.Reason(), tt.reason, be)
				}
				for _, m := range tt.mention {
					if !strings.Contains(be.Error(), m) {
						t.Errorf("error does not mention %q:\n%s", m, be)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("ApplyEdits: %v", err)
			}
			if got := string(res.Doc.Bytes()); got != tt.want {
				t.Errorf("new file = %q, want %q", got, tt.want)
			}
			checkDiff(t, d.Text(), res.Doc.Text(), res.Diff)
			checkTagged(t, d, res, opts)
			if len(res.Warnings) != len(tt.warns) {
				t.Fatalf("warnings = %q, want %d matching %q", res.Warnings, len(tt.warns), tt.warns)
			}
			for i, w := range tt.warns {
				if !strings.Contains(res.Warnings[i], w) {
					t.Errorf("warning %d = %q, want it to mention %q", i, res.Warnings[i], w)
				}
			}
		})
	}
}

func TestApplyEditsOps(t *testing.T) {
	const abc = "a\nb\nc\n"
	runEditCases(t, []editCase{
		{name: "replace the first line", in: abc, edits: []Edit{{Op: OpReplace, Start: "@1", Text: "x"}}, want: "x\nb\nc\n"},
		{name: "replace the last line", in: abc, edits: []Edit{{Op: OpReplace, Start: "@3", Text: "x\n"}}, want: "a\nb\nx\n"},
		{name: "replace the whole file", in: abc, edits: []Edit{{Op: OpReplace, Start: "@1", End: "@3", Text: "x\ny"}}, want: "x\ny\n"},
		{name: "replace one line with several", in: abc, edits: []Edit{{Op: OpReplace, Start: "@2", Text: "x\ny\nz\n"}}, want: "a\nx\ny\nz\nc\n"},
		{name: "replace with empty text deletes", in: abc, edits: []Edit{{Op: OpReplace, Start: "@2", Text: ""}}, want: "a\nc\n"},
		{name: "replace with one empty line", in: abc, edits: []Edit{{Op: OpReplace, Start: "@2", Text: "\n"}}, want: "a\n\nc\n"},
		{name: "delete the first line", in: abc, edits: []Edit{{Op: OpDelete, Start: "@1"}}, want: "b\nc\n"},
		{name: "delete a range", in: abc, edits: []Edit{{Op: OpDelete, Start: "@2", End: "@3"}}, want: "a\n"},
		{name: "delete every line", in: abc, edits: []Edit{{Op: OpDelete, Start: "@1", End: "@3"}}, want: ""},
		{name: "delete every line keeps the BOM", in: "\ufeff" + abc, edits: []Edit{{Op: OpDelete, Start: "@1", End: "@3"}}, want: "\ufeff"},
		{name: "delete ignores text with a warning", in: abc, edits: []Edit{{Op: OpDelete, Start: "@1", Text: "x"}}, want: "b\nc\n", warns: []string{"delete ignores text"}},
		{name: "insert after a line", in: abc, edits: []Edit{{Op: OpInsertAfter, Start: "@1", Text: "x"}}, want: "a\nx\nb\nc\n"},
		{name: "insert after the last line", in: abc, edits: []Edit{{Op: OpInsertAfter, Start: "@3", Text: "x\ny\n"}}, want: "a\nb\nc\nx\ny\n"},
		{name: "insert before the first line", in: abc, edits: []Edit{{Op: OpInsertBefore, Start: "@1", Text: "x"}}, want: "x\na\nb\nc\n"},
		{name: "insert before a line", in: abc, edits: []Edit{{Op: OpInsertBefore, Start: "@3", Text: "x"}}, want: "a\nb\nx\nc\n"},
		{name: "append", in: abc, edits: []Edit{{Op: OpAppend, Text: "x"}}, want: "a\nb\nc\nx\n"},
		{name: "prepend", in: abc, edits: []Edit{{Op: OpPrepend, Text: "x\n"}}, want: "x\na\nb\nc\n"},
		{name: "append to an empty file", in: "", edits: []Edit{{Op: OpAppend, Text: "x\ny"}}, want: "x\ny\n"},
		{name: "prepend to an empty file", in: "", edits: []Edit{{Op: OpPrepend, Text: "x"}}, want: "x\n"},
		{name: "append to a BOM-only file", in: "\ufeff", edits: []Edit{{Op: OpAppend, Text: "x"}}, want: "\ufeffx\n"},
		{name: "prepend goes after the BOM", in: "\ufeffa\n", edits: []Edit{{Op: OpPrepend, Text: "x"}}, want: "\ufeffx\na\n"},
		{name: "prepend and append on an empty file go in that order", in: "", edits: []Edit{{Op: OpAppend, Text: "z"}, {Op: OpPrepend, Text: "x"}}, want: "x\nz\n"},
		{name: "prepend and append together", in: abc, edits: []Edit{{Op: OpAppend, Text: "z"}, {Op: OpPrepend, Text: "x"}}, want: "x\na\nb\nc\nz\n"},
		{name: "edits apply against the original numbering", in: abc, edits: []Edit{
			{Op: OpInsertAfter, Start: "@1", Text: "x\ny"}, {Op: OpReplace, Start: "@3", Text: "C"}, {Op: OpDelete, Start: "@2"},
		}, want: "a\nx\ny\nC\n"},
		{name: "a lone CR in text is content", in: abc, edits: []Edit{{Op: OpReplace, Start: "@2", Text: "x\ry"}}, want: "a\nx\ry\nc\n"},
	})
}

func TestApplyEditsLineEndings(t *testing.T) {
	runEditCases(t, []editCase{
		{name: "replacing the last line keeps no final newline", in: "a\nb", edits: []Edit{{Op: OpReplace, Start: "@2", Text: "x\ny\n"}}, want: "a\nx\ny"},
		{name: "deleting the last line drops the new last line's ending", in: "a\nb\nc", edits: []Edit{{Op: OpDelete, Start: "@3"}}, want: "a\nb"},
		{name: "deleting the last lines of a CRLF file drops CRLF", in: "a\r\nb\r\nc", edits: []Edit{{Op: OpDelete, Start: "@2", End: "@3"}}, want: "a"},
		{name: "an empty new last line keeps its ending", in: "a\n\nb", edits: []Edit{{Op: OpDelete, Start: "@3"}}, want: "a\n\n"},
		{name: "an empty replacement for the last line gets an ending", in: "a\nb", edits: []Edit{{Op: OpReplace, Start: "@2", Text: "\n"}}, want: "a\n\n"},
		{name: "appending an empty line to a file without final newline", in: "a", edits: []Edit{{Op: OpAppend, Text: "\n"}}, want: "a\n\n"},
		{name: "appending to a file without final newline", in: "a\nb", edits: []Edit{{Op: OpAppend, Text: "c"}}, want: "a\nb\nc"},
		{name: "inserting after the last line without final newline", in: "a\r\nb", edits: []Edit{{Op: OpInsertAfter, Start: "@2", Text: "c\nd"}}, want: "a\r\nb\r\nc\r\nd"},
		{name: "replacing the last line and appending", in: "a\nb", edits: []Edit{{Op: OpReplace, Start: "@2", Text: "B"}, {Op: OpAppend, Text: "c"}}, want: "a\nB\nc"},
		{name: "CRLF file keeps CRLF on new lines", in: "a\r\nb\r\n", edits: []Edit{{Op: OpReplace, Start: "@1", Text: "x\ny"}}, want: "x\r\ny\r\nb\r\n"},
		{name: "CRLF text into an LF file gets LF", in: "a\nb\n", edits: []Edit{{Op: OpInsertAfter, Start: "@1", Text: "x\r\ny\r\n"}}, want: "a\nx\ny\nb\n"},
		{name: "a replaced line keeps its own ending in a mixed file", in: "a\r\nb\nc\n", edits: []Edit{{Op: OpReplace, Start: "@1", Text: "x"}}, want: "x\r\nb\nc\n"},
		{name: "added lines take the dominant ending in a mixed file", in: "a\r\nb\nc\n", edits: []Edit{{Op: OpReplace, Start: "@1", Text: "x\ny"}}, want: "x\ny\r\nb\nc\n"},
		{name: "lines in place of old ones keep their endings", in: "a\r\nb\nc\r\nd\n", edits: []Edit{{Op: OpReplace, Start: "@1", End: "@3", Text: "A\nB\nC"}}, want: "A\r\nB\nC\r\nd\n"},
		{name: "untouched lines stay byte-identical", in: "a \t\r\nb\r\n\tc\n", edits: []Edit{{Op: OpReplace, Start: "@2", Text: "x"}}, want: "a \t\r\nx\r\n\tc\n"},
		{name: "a content CR at EOF survives an append", in: "a\nb\r", edits: []Edit{{Op: OpAppend, Text: "c"}}, want: "a\nb\r\r\nc"},
		{name: "a content CR at the end of new text survives", in: "a\nb\n", edits: []Edit{{Op: OpReplace, Start: "@1", Text: "x\r"}}, want: "x\r\r\nb\n"},
		{name: "a trailing CR at EOF is content and survives", in: "a\nb\r", edits: []Edit{{Op: OpReplace, Start: "@1", Text: "x"}}, want: "x\nb\r"},
		{name: "the BOM is kept", in: "\ufeffa\nb\n", edits: []Edit{{Op: OpReplace, Start: "@1", Text: "x"}}, want: "\ufeffx\nb\n"},
	})
}

func TestApplyEditsBatchRules(t *testing.T) {
	const abcd = "a\nb\nc\nd\n"
	runEditCases(t, []editCase{
		{name: "identical duplicates count once", in: abcd, edits: []Edit{
			{Op: OpReplace, Start: "@2", Text: "x"}, {Op: OpReplace, Start: "@2", Text: "x\n"},
		}, want: "a\nx\nc\nd\n", warns: []string{"edit 1 repeats edit 0"}},
		{name: "insertAfter N and insertBefore N+1 with the same text are duplicates", in: abcd, edits: []Edit{
			{Op: OpInsertAfter, Start: "@1", Text: "x"}, {Op: OpInsertBefore, Start: "@2", Text: "x"},
		}, want: "a\nx\nb\nc\nd\n", warns: []string{"edit 1 repeats edit 0"}},
		{name: "overlapping ranges are refused", in: abcd, edits: []Edit{
			{Op: OpReplace, Start: "@1", End: "@2", Text: "x"}, {Op: OpDelete, Start: "@2", End: "@3"},
		}, reason: ReasonOverlappingEdits, mention: []string{"edit 1 (start) overlaps edit 0"}},
		{name: "the same line replaced differently is refused", in: abcd, edits: []Edit{
			{Op: OpReplace, Start: "@2", Text: "x"}, {Op: OpReplace, Start: "@2", Text: "y"},
		}, reason: ReasonOverlappingEdits, mention: []string{"edit 1", "edit 0"}},
		{name: "two inserts at one point are refused", in: abcd, edits: []Edit{
			{Op: OpInsertAfter, Start: "@1", Text: "x"}, {Op: OpInsertBefore, Start: "@2", Text: "y"},
		}, reason: ReasonOverlappingEdits, mention: []string{"edit 1 (anchor) inserts at the same point as edit 0 (after line 1)"}},
		{name: "append and insert after the last line are one point", in: abcd, edits: []Edit{
			{Op: OpAppend, Text: "x"}, {Op: OpInsertAfter, Start: "@4", Text: "y"},
		}, reason: ReasonOverlappingEdits, mention: []string{"the end of the file"}},
		{name: "prepend and insert before the first line are one point", in: abcd, edits: []Edit{
			{Op: OpInsertBefore, Start: "@1", Text: "y"}, {Op: OpPrepend, Text: "x"},
		}, reason: ReasonOverlappingEdits, mention: []string{"the start of the file"}},
		{name: "an insert inside a replaced range is refused", in: abcd, edits: []Edit{
			{Op: OpReplace, Start: "@1", End: "@3", Text: "x"}, {Op: OpInsertAfter, Start: "@2", Text: "y"},
		}, reason: ReasonOverlappingEdits, mention: []string{"inserts inside lines 1-3, which edit 0 replaces"}},
		{name: "two appends are refused", in: abcd, edits: []Edit{
			{Op: OpAppend, Text: "x"}, {Op: OpAppend, Text: "y"},
		}, reason: ReasonOverlappingEdits, mention: []string{"edit 1 (text) inserts at the same point as edit 0 (the end of the file)"}},
		{name: "two appends to an empty file are refused", in: "", edits: []Edit{
			{Op: OpAppend, Text: "x"}, {Op: OpPrepend, Text: "y"}, {Op: OpAppend, Text: "z"},
		}, reason: ReasonOverlappingEdits},
		{name: "an insert at the end of a replaced range goes after it", in: abcd, edits: []Edit{
			{Op: OpReplace, Start: "@1", End: "@2", Text: "x"}, {Op: OpInsertAfter, Start: "@2", Text: "y"},
		}, want: "x\ny\nc\nd\n"},
		{name: "an insert at the start of a replaced range goes before it", in: abcd, edits: []Edit{
			{Op: OpDelete, Start: "@2", End: "@3"}, {Op: OpInsertBefore, Start: "@2", Text: "y"},
		}, want: "a\ny\nd\n"},
		{name: "adjacent ranges are fine", in: abcd, edits: []Edit{
			{Op: OpReplace, Start: "@1", End: "@2", Text: "x"}, {Op: OpReplace, Start: "@3", End: "@4", Text: "y"},
		}, want: "x\ny\n"},
		{name: "a no-op edit in a changing batch is a warning", in: abcd, edits: []Edit{
			{Op: OpReplace, Start: "@1", Text: "x"}, {Op: OpReplace, Start: "@3", Text: "c"},
		}, want: "x\nb\nc\nd\n", warns: []string{"edit 1 changed nothing"}},
		{name: "a batch that changes nothing is refused", in: abcd, edits: []Edit{
			{Op: OpReplace, Start: "@2", End: "@3", Text: "b\nc"},
		}, reason: ReasonNoChange, mention: []string{"edit 0 (replace 2:", "leaves the file unchanged"}},
		{name: "deleting a line and inserting it again changes nothing", in: abcd, edits: []Edit{
			{Op: OpDelete, Start: "@2"}, {Op: OpInsertAfter, Start: "@2", Text: "b"},
		}, reason: ReasonNoChange},
		{name: "changes of the same size far apart are still a change", in: abcd, edits: []Edit{
			{Op: OpReplace, Start: "@1", Text: "b"}, {Op: OpReplace, Start: "@4", Text: "a"},
		}, want: "b\nb\nc\na\n"},
		{name: "deleting the lines after a last line without newline keeps it without one", in: "a\nb\nc", edits: []Edit{
			{Op: OpDelete, Start: "@2", End: "@3"},
		}, want: "a"},
		{name: "text with pasted tags is stripped with a warning", in: abcd, edits: []Edit{
			{Op: OpReplace, Start: "@2", Text: "2:aa|x\n3:bb|y\n"},
		}, want: "a\nx\ny\nc\nd\n", warns: []string{"edit 0: text carried hashline prefixes"}},
		{name: "an empty batch is refused", in: abcd, edits: nil, reason: ReasonEmptyEdits, mention: []string{"at least one edit"}},
	})
}

func TestApplyEditsProblems(t *testing.T) {
	const abc = "a\nb\nc\n"
	runEditCases(t, []editCase{
		{name: "a stale ref", in: abc, edits: []Edit{{Op: OpReplace, Start: "!2", Text: "x"}}, reason: ReasonStaleRef,
			mention: []string{"1 line(s) changed since last read", ">>> 2:", "    1:", "    3:"}},
		{name: "a stale end", in: abc, edits: []Edit{{Op: OpDelete, Start: "@1", End: "!3"}}, reason: ReasonStaleRef, mention: []string{">>> 3:"}},
		{name: "a stale anchor", in: abc, edits: []Edit{{Op: OpInsertAfter, Start: "!1", Text: "x"}}, reason: ReasonStaleRef, mention: []string{">>> 1:"}},
		{name: "a line past the end", in: abc, edits: []Edit{{Op: OpReplace, Start: "9:ab", Text: "x"}}, reason: ReasonLineOutOfRange,
			mention: []string{"edit 0 (start): line 9 is past the end of the file, which has 3 lines"}},
		{name: "a range that ends before it starts", in: abc, edits: []Edit{{Op: OpDelete, Start: "@3", End: "@1"}}, reason: ReasonLineOutOfRange,
			mention: []string{"edit 0 (end): range ends at line 1 before it starts at line 3"}},
		{name: "line zero", in: abc, edits: []Edit{{Op: OpReplace, Start: "0:ab", Text: "x"}}, reason: ReasonInvalidRef, mention: []string{"edit 0 (start):", "start at 1"}},
		{name: "a malformed ref", in: abc, edits: []Edit{{Op: OpInsertBefore, Start: "second line", Text: "x"}}, reason: ReasonInvalidRef, mention: []string{"edit 0 (anchor):"}},
		{name: "a missing ref", in: abc, edits: []Edit{{Op: OpDelete}}, reason: ReasonInvalidRef, mention: []string{"edit 0 (start): empty line reference"}},
		{name: "a hash of the wrong length", in: abc, edits: []Edit{{Op: OpReplace, Start: "1:abcd", Text: "x"}}, reason: ReasonInvalidRef, mention: []string{"4-digit hash", "2 digits"}},
		{name: "op zero", in: abc, edits: []Edit{{Text: "x"}}, reason: ReasonInvalidEdit, mention: []string{"edit 0 (op): unknown op op(0)"}},
		{name: "an insert without text", in: abc, edits: []Edit{{Op: OpInsertAfter, Start: "@1"}}, reason: ReasonInvalidEdit, mention: []string{"edit 0 (text): insertAfter needs text"}},
		{name: "an append without text", in: abc, edits: []Edit{{Op: OpAppend}}, reason: ReasonInvalidEdit, mention: []string{"append needs text"}},
		{name: "every problem of every edit is reported", in: abc, edits: []Edit{
			{Op: OpReplace, Start: "!1", Text: "x"},
			{Op: OpDelete, Start: "@2", End: "7:ab"},
			{Op: OpInsertAfter, Start: "nope", Text: "y"},
			{Op: OpReplace, Start: "@3", Text: "fine"},
		}, reason: ReasonLineOutOfRange, mention: []string{"edit 1 (end): line 7 is past the end", "edit 2 (anchor):", ">>> 1:"}},
	})
}

func TestApplyEditsReplaceText(t *testing.T) {
	const src = "func f() {\n\treturn 1\n}\n\nfunc g() {\n\treturn 1\n}\n"
	runEditCases(t, []editCase{
		{name: "a unique substring keeps the rest of the line", in: src, edits: []Edit{{Op: OpReplaceText, OldText: "f()", NewText: "h(x int)"}}, want: strings.Replace(src, "f()", "h(x int)", 1)},
		{name: "a multi-line match", in: src, edits: []Edit{{Op: OpReplaceText, OldText: "g() {\n\treturn 1", NewText: "g() {\n\tlog()\n\treturn 2"}},
			want: "func f() {\n\treturn 1\n}\n\nfunc g() {\n\tlog()\n\treturn 2\n}\n"},
		{name: "an ambiguous match lists the candidate tags", in: src, edits: []Edit{{Op: OpReplaceText, OldText: "return 1", NewText: "return 2"}},
			reason: ReasonAmbiguousText, mention: []string{"occurs 2 times", "2:", "6:", "set all"}},
		{name: "all replaces every occurrence", in: src, edits: []Edit{{Op: OpReplaceText, OldText: "return 1", NewText: "return 2", All: true}},
			want: strings.ReplaceAll(src, "return 1", "return 2")},
		{name: "all with two matches on one line", in: "a a\nb\n", edits: []Edit{{Op: OpReplaceText, OldText: "a", NewText: "x", All: true}}, want: "x x\nb\n"},
		{name: "overlapping occurrences are ambiguous", in: "aaa\n", edits: []Edit{{Op: OpReplaceText, OldText: "aa", NewText: "b"}}, reason: ReasonAmbiguousText},
		{name: "text not found suggests lines that differ in indentation", in: src, edits: []Edit{{Op: OpReplaceText, OldText: "    return 1\n}\n\nfunc g", NewText: "x"}},
			reason: ReasonTextNotFound, mention: []string{"does not occur", "Lines with similar text: 2:"}},
		{name: "CRLF files match LF text", in: "a\r\nb\r\nc\r\n", edits: []Edit{{Op: OpReplaceText, OldText: "a\nb", NewText: "x\r\ny\nz"}}, want: "x\r\ny\r\nz\r\nc\r\n"},
		{name: "removing whole lines with their newline", in: "a\nb\nc\n", edits: []Edit{{Op: OpReplaceText, OldText: "b\n", NewText: ""}}, want: "a\nc\n"},
		{name: "swallowing a newline joins the next line", in: "a\nb\nc\n", edits: []Edit{{Op: OpReplaceText, OldText: "a\n", NewText: "x"}}, want: "xb\nc\n"},
		{name: "replacing at the end of a file without final newline", in: "a\nb", edits: []Edit{{Op: OpReplaceText, OldText: "b", NewText: "c\nd"}}, want: "a\nc\nd"},
		{name: "oldText of only hashline prefixes is refused", in: src, edits: []Edit{{Op: OpReplaceText, OldText: "2:ab|", NewText: "x"}},
			reason: ReasonInvalidEdit, mention: []string{"edit 0 (oldText): oldText is only hashline prefixes"}},
		{name: "oldText that looks like a tag but is in the file is taken as given", in: "a\n0:00|\n", edits: []Edit{{Op: OpReplaceText, OldText: "0:00|", NewText: "b"}},
			want: "a\nb\n"},
		{name: "pasted read output as oldText is stripped", in: src, edits: []Edit{{Op: OpReplaceText, OldText: "1:00|func f() {", NewText: "func h() {"}},
			want: strings.Replace(src, "func f() {", "func h() {", 1), warns: []string{"oldText carried hashline prefixes"}},
		{name: "empty oldText is refused", in: src, edits: []Edit{{Op: OpReplaceText, NewText: "x"}}, reason: ReasonInvalidEdit, mention: []string{"edit 0 (oldText): oldText is empty"}},
		{name: "replaceText overlapping a line edit is refused", in: src, edits: []Edit{
			{Op: OpReplace, Start: "@1", Text: "x"}, {Op: OpReplaceText, OldText: "func f", NewText: "func h"},
		}, reason: ReasonOverlappingEdits, mention: []string{"edit 1 (oldText) overlaps edit 0"}},
		{name: "identical oldText and newText changes nothing", in: src, edits: []Edit{{Op: OpReplaceText, OldText: "f()", NewText: "f()"}}, reason: ReasonNoChange},
	})
}

func TestBatchErrorReason(t *testing.T) {
	tests := []struct {
		reasons []Reason
		want    Reason
	}{
		{[]Reason{ReasonStaleRef}, ReasonStaleRef},
		{[]Reason{ReasonStaleRef, ReasonTextNotFound}, ReasonTextNotFound},
		{[]Reason{ReasonTextNotFound, ReasonStaleRef, ReasonOverlappingEdits}, ReasonOverlappingEdits},
		{[]Reason{ReasonStaleRef, ReasonInvalidRef}, ReasonInvalidRef},
		{[]Reason{ReasonAmbiguousText, ReasonTextNotFound}, ReasonAmbiguousText},
		{[]Reason{ReasonNoChange}, ReasonNoChange},
		{nil, ""},
	}
	for _, tt := range tests {
		e := &BatchError{}
		for _, r := range tt.reasons {
			e.Problems = append(e.Problems, Problem{Reason: r})
		}
		if got := e.Reason(); got != tt.want {
			t.Errorf("Reason() of %v = %s, want %s", tt.reasons, got, tt.want)
		}
	}
}

func TestStaleErrorView(t *testing.T) {
	d := ParseDocument([]byte("l1\nl2\nl3\nl4\nl5\nl6\nl7\nl8\nl9\nl10\n"))
	h := Hasher{}
	_, err := PlanEdits(d, resolveEdits(d, h, []Edit{
		{Op: OpReplace, Start: "!2", Text: "x"},
		{Op: OpReplace, Start: "!3", Text: "y"},
		{Op: OpDelete, Start: "!9"},
	}), h)
	var be *BatchError
	if !errors.As(err, &be) {
		t.Fatalf("PlanEdits error = %v, want *BatchError", err)
	}
	tag := func(n int) string {
		return TaggedLine{Number: n, Hash: h.Sum(d.Line(n)), Content: d.Line(n)}.String()
	}
	view := func(lines ...string) string {
		return strings.Join(append([]string{"3 line(s) changed since last read; use the updated refs below (>>> marks changed lines)"}, lines...), "\n")
	}
	// By default StaleContext (3) lines on each side, which here join the
	// views of lines 3 and 9.
	want := view("    "+tag(1), ">>> "+tag(2), ">>> "+tag(3), "    "+tag(4), "    "+tag(5), "    "+tag(6),
		"    "+tag(7), "    "+tag(8), ">>> "+tag(9), "    "+tag(10))
	if got := be.Error(); got != want {
		t.Errorf("Error() =\n%s\nwant\n%s", got, want)
	}
	p := be.Problems[0]
	if p.EditIndex != 0 || p.Field != "start" || p.Line != 2 || p.ActualHash != h.Sum("l2") || p.ExpectedHash != wrongHash(h.Sum("l2")) ||
		p.CurrentLine != tag(2) || len(p.Fresh) != 5 || p.Fresh[0].Number != 1 || p.Around != [2]int{2, 2} {
		t.Errorf("problem 0 = %+v", p)
	}
	for _, tt := range []struct {
		context int
		want    string
	}{
		{2, view("    "+tag(1), ">>> "+tag(2), ">>> "+tag(3), "    "+tag(4), "    "+tag(5), "...",
			"    "+tag(7), "    "+tag(8), ">>> "+tag(9), "    "+tag(10))},
		{0, view(">>> "+tag(2), ">>> "+tag(3), "...", ">>> "+tag(9))},
		{-1, view(">>> "+tag(2), ">>> "+tag(3), "...", ">>> "+tag(9))},
		{3, want},
	} {
		be.SetContext(d, h, tt.context)
		if got := be.Error(); got != tt.want {
			t.Errorf("with context %d, Error() =\n%s\nwant\n%s", tt.context, got, tt.want)
		}
	}
	// The changed lines can be pasted back as refs.
	for _, line := range strings.Split(be.Error(), "\n")[1:] {
		if line == "..." {
			continue
		}
		if _, err := ParseRef(line); err != nil {
			t.Errorf("line %q of the stale view does not parse as a ref: %v", line, err)
		}
	}
}

func TestApplyResultWindowsAndReplaced(t *testing.T) {
	var lines []string
	for i := 1; i <= 20; i++ {
		lines = append(lines, "line"+string(rune('a'+i-1)))
	}
	d := ParseDocument([]byte(strings.Join(lines, "\n") + "\n"))
	h := Hasher{}
	res, err := ApplyEdits(d, resolveEdits(d, h, []Edit{
		{Op: OpReplace, Start: "@3", Text: "X\nY"},  // new lines 3-4
		{Op: OpInsertAfter, Start: "@6", Text: "Z"}, // new line 8, window 6-10 touches 2-5
		{Op: OpDelete, Start: "@15", End: "@16"},    // gap after new line 16
	}), ApplyOptions{Hasher: h, Context: 2})
	if err != nil {
		t.Fatal(err)
	}
	var got [][2]int
	for _, w := range res.Windows {
		got = append(got, [2]int{w.Start, w.End})
		if len(w.Lines) != w.End-w.Start+1 || w.Lines[0].Number != w.Start {
			t.Errorf("window %d-%d has lines %+v", w.Start, w.End, w.Lines)
		}
		for _, l := range w.Lines {
			if l.Content != res.Doc.Line(l.Number) || l.Hash != h.Sum(l.Content) {
				t.Errorf("window line %+v is not the new file's line", l)
			}
		}
	}
	if want := [][2]int{{1, 10}, {15, 18}}; !slices.Equal(got, want) {
		t.Errorf("windows = %v, want %v", got, want)
	}
	var replaced []string
	for _, r := range res.Replaced {
		replaced = append(replaced, TaggedLine{Number: r.Number, Hash: r.Hash, Content: r.Content}.String())
	}
	want := []string{"3:" + h.Sum("linec") + "|linec", "15:" + h.Sum("lineo") + "|lineo", "16:" + h.Sum("linep") + "|linep"}
	if !slices.Equal(replaced, want) {
		t.Errorf("replaced = %q, want %q", replaced, want)
	}
}

func TestDeletionWindowWithoutContext(t *testing.T) {
	d := ParseDocument([]byte("a\nb\nc\n"))
	h := Hasher{}
	res, err := ApplyEdits(d, resolveEdits(d, h, []Edit{{Op: OpDelete, Start: "@2"}}), ApplyOptions{Hasher: h, Context: -4})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Windows) != 1 || res.Windows[0].Start != 1 || res.Windows[0].End != 2 {
		t.Errorf("windows = %+v, want the lines on both sides of the gap", res.Windows)
	}
	if !strings.Contains(res.Diff, "-b\n") || strings.Contains(res.Diff, " a\n") {
		t.Errorf("diff with context 0 = %q", res.Diff)
	}
}

func TestPlanIsSortedAndDescribesChanges(t *testing.T) {
	d := ParseDocument([]byte("a\nb\nc\n"))
	h := Hasher{}
	p, err := PlanEdits(d, resolveEdits(d, h, []Edit{
		{Op: OpAppend, Text: "z"},
		{Op: OpDelete, Start: "@2"},
		{Op: OpInsertBefore, Start: "@2", Text: "y"},
		{Op: OpPrepend, Text: "x"},
	}), h)
	if err != nil {
		t.Fatal(err)
	}
	want := []Change{
		{EditIndex: []int{3}, Start: 0, End: 0, Lines: []string{"x"}},
		{EditIndex: []int{2}, Start: 1, End: 1, Lines: []string{"y"}},
		{EditIndex: []int{1}, Start: 1, End: 2},
		{EditIndex: []int{0}, Start: 3, End: 3, Lines: []string{"z"}},
	}
	if len(p.Changes) != len(want) {
		t.Fatalf("changes = %+v", p.Changes)
	}
	for i := range want {
		c := p.Changes[i]
		if !slices.Equal(c.EditIndex, want[i].EditIndex) || c.Start != want[i].Start || c.End != want[i].End || !slices.Equal(c.Lines, want[i].Lines) {
			t.Errorf("change %d = %+v, want %+v", i, c, want[i])
		}
	}
}

func TestApplyRefusesAPlanThatDoesNotFit(t *testing.T) {
	d := ParseDocument([]byte("a\n"))
	for _, p := range []*Plan{
		{Changes: []Change{{Start: 0, End: 2}}},
		{Changes: []Change{{Start: 1, End: 0}}},
		{Changes: []Change{{Start: 0, End: 1}, {Start: 0, End: 1}}},
		{Changes: []Change{{Start: 1, End: 1, Lines: []string{"x"}}, {Start: 0, End: 1}}},
	} {
		if _, err := p.Apply(d, ApplyOptions{}); err == nil {
			t.Errorf("Apply(%+v) succeeded", p.Changes)
		}
	}
}

func TestOpNames(t *testing.T) {
	for o := OpReplace; o <= OpReplaceText; o++ {
		got, err := ParseOp(o.String())
		if err != nil || got != o {
			t.Errorf("ParseOp(%q) = %v, %v", o.String(), got, err)
		}
	}
	if _, err := ParseOp("upsert"); err == nil {
		t.Error(`ParseOp("upsert") succeeded`)
	}
}

func TestDiffWithoutContext(t *testing.T) {
	tests := []struct {
		name, in string
		edits    []Edit
		want     string
	}{
		{"append after a last line without newline", "a\nb", []Edit{{Op: OpAppend, Text: "c"}},
			"@@ -2 +2,2 @@\n-b\n\\ No newline at end of file\n+b\n+c\n\\ No newline at end of file\n"},
		{"replace the last line and append", "a\nb", []Edit{{Op: OpReplace, Start: "@2", Text: "B"}, {Op: OpAppend, Text: "c"}},
			"@@ -2 +2,2 @@\n-b\n\\ No newline at end of file\n+B\n+c\n\\ No newline at end of file\n"},
		{"insert in the middle", "a\nb\nc\n", []Edit{{Op: OpInsertAfter, Start: "@1", Text: "x"}}, "@@ -1,0 +2 @@\n+x\n"},
		{"delete in the middle", "a\nb\nc\n", []Edit{{Op: OpDelete, Start: "@2"}}, "@@ -2 +1,0 @@\n-b\n"},
		{"delete everything", "a\nb\n", []Edit{{Op: OpDelete, Start: "@1", End: "@2"}}, "@@ -1,2 +0,0 @@\n-a\n-b\n"},
		{"fill an empty file", "", []Edit{{Op: OpAppend, Text: "a"}}, "@@ -0,0 +1 @@\n+a\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := ParseDocument([]byte(tt.in))
			h := Hasher{}
			res, err := ApplyEdits(d, resolveEdits(d, h, tt.edits), ApplyOptions{Hasher: h, OldLabel: "a", NewLabel: "b"})
			if err != nil {
				t.Fatal(err)
			}
			if want := "--- a\n+++ b\n" + tt.want; res.Diff != want {
				t.Errorf("diff =\n%s\nwant\n%s", res.Diff, want)
			}
			checkDiff(t, d.Text(), res.Doc.Text(), res.Diff)
		})
	}
}
