package client_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
)

// TestFormatReadWithoutLines: a read with OmitLines renders exactly as the
// same read with its structured lines, page header included.
func TestFormatReadWithoutLines(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	c, done := exampleWorkspace(map[string]string{"f.txt": b.String()})
	defer done()
	tests := []struct {
		name          string
		offset, limit int32
	}{
		{name: "whole file"},
		{name: "first page", limit: 10},
		{name: "middle page", offset: 9, limit: 5},
		{name: "last page", offset: 25},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out [2]string
			for i, omit := range []bool{false, true} {
				r, err := c.Read(context.Background(), &hashlinev1.ReadRequest{Path: "f.txt", Offset: tt.offset, Limit: tt.limit, OmitLines: omit})
				if err != nil {
					t.Fatal(err)
				}
				if omit && len(r.GetLines()) != 0 {
					t.Fatalf("OmitLines returned %d lines", len(r.GetLines()))
				}
				out[i] = client.FormatRead(r)
			}
			if out[0] != out[1] {
				t.Errorf("with lines:\n%s\nwithout:\n%s", out[0], out[1])
			}
			if tt.limit > 0 && !strings.Contains(out[1], "[showing lines") {
				t.Errorf("no page header:\n%s", out[1])
			}
		})
	}
}

func TestFormatShifts(t *testing.T) {
	tests := []struct {
		name    string
		shifts  []*hashlinev1.LineShift
		total   int32
		want    string
		rebased bool
	}{
		{"no shift", nil, 10, "Line numbers unchanged.", false},
		{"the lines after an insertion", []*hashlinev1.LineShift{{From: 13, To: 40, By: 2}}, 42, "Lines after 12 moved down 2.", false},
		{"every line after a prepend", []*hashlinev1.LineShift{{From: 1, To: 5, By: 1}}, 6, "All lines moved down 1.", false},
		{"a run that lines were appended after", []*hashlinev1.LineShift{{From: 3, To: 4, By: -1}}, 4, "Lines 3-4 moved up 1.", false},
		{"one line between two changes", []*hashlinev1.LineShift{{From: 7, To: 7, By: -2}, {From: 9, To: 20, By: 0}}, 20,
			"Line 7 moved up 2; lines after 8 kept their numbers.", false},
		{"one line back at its number", []*hashlinev1.LineShift{{From: 2, To: 3, By: 1}, {From: 5, To: 5, By: 0}}, 6,
			"Lines 2-3 moved down 1; line 5 kept its number.", false},
		{"after a rebase, of this edit", []*hashlinev1.LineShift{{From: 13, To: 40, By: 2}}, 42, "Lines after 12 moved down 2 by this edit.", true},
		{"no shift after a rebase", nil, 10, "Line numbers unchanged by this edit.", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &hashlinev1.EditResponse{Shifts: tt.shifts, TotalLines: tt.total}
			if tt.rebased {
				r.RebasedFrom = "v2-1"
			}
			if got := client.FormatShifts(r); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestFormatEditOfAnOlderServer: a response without tagged_diff (a server
// older than the field) shows its windows, and says nothing of how other
// lines moved, which it cannot know.
func TestFormatEditOfAnOlderServer(t *testing.T) {
	r := &hashlinev1.EditResponse{Path: "f", Version: "v2-1", TotalLines: 3,
		Windows: []*hashlinev1.Window{{Text: "1:aa|a\n2:bb|B"}, {Text: "3:cc|c"}}, Diff: "--- a/f\n+++ b/f\n"}
	want := "Updated f (3 lines, version v2-1).\n1:aa|a\n2:bb|B\n...\n3:cc|c\n"
	if got := client.FormatEdit(r, false); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestFormatEntryMarksDirectoriesAndLinksAndShowsWhatIsAsked(t *testing.T) {
	file := &hashlinev1.Entry{Path: "a.go", Type: hashlinev1.EntryType_ENTRY_TYPE_FILE, Size: 12, Version: "v2-ab"}
	dir := &hashlinev1.Entry{Path: "pkg", Type: hashlinev1.EntryType_ENTRY_TYPE_DIR}
	link := &hashlinev1.Entry{Path: "l", Type: hashlinev1.EntryType_ENTRY_TYPE_SYMLINK, Size: 4}
	tests := []struct {
		name          string
		e             *hashlinev1.Entry
		size, version bool
		want          string
	}{
		{"a file is its path", file, false, false, "a.go\n"},
		{"a file with its size and version", file, true, true, "a.go 12 v2-ab\n"},
		{"a directory ends in a slash and has no size", dir, true, true, "pkg/\n"},
		{"a link ends in @ and has its size but no version", link, true, true, "l@ 4\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := client.FormatEntry(tt.e, tt.size, tt.version); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
	if got := client.FormatListEnd(&hashlinev1.ListResponse{Entries: []*hashlinev1.Entry{file}}); got != "" {
		t.Errorf("the end of a last page is %q, want nothing", got)
	}
	if got := client.FormatListEnd(&hashlinev1.ListResponse{Entries: []*hashlinev1.Entry{file}, Truncated: true, NextPageToken: "YQ"}); got != "[1 entry shown; more follow: continue with page token YQ]\n" {
		t.Errorf("the end of a truncated page is %q", got)
	}
}
