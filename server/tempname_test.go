package server_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
)

// Only names of the exact form the server writes through are its temp
// files: a user's file that looks like one is read, edited, written and
// grepped like any other, and an exact one cannot be named or found.
func TestOnlyExactTempNamesAreTheServers(t *testing.T) {
	tests := []struct {
		name   string
		path   string
		server bool // a name of the server's temp files
	}{
		{"a user's notes are the user's", ".hashline-notes.tmp", false},
		{"an empty random part is the user's", ".hashline-.tmp", false},
		{"a short upper-case name is the user's", "src/.hashline-ABC.tmp", false},
		{"a lower-case name of the right length is the user's", ".hashline-abcdefghijklmnopqrstuvwxyz.tmp", false},
		{"27 characters are the user's", ".hashline-ABCDEFGHIJKLMNOPQRSTUVWXYZA.tmp", false},
		{"the exact form is the server's", ".hashline-ABCDEFGHIJKLMNOPQRSTUVWXYZ.tmp", true},
		{"the exact form in a directory is the server's", "src/.hashline-234567ABCDEFGHIJKLMNOPQRST.tmp", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.write(tt.path, "needle\n")
			files, _, err := e.grepAll(&hashlinev1.GrepRequest{Pattern: "needle", Hidden: true})
			if err != nil {
				t.Fatal(err)
			}
			if found := slices.Contains(grepPaths(files), tt.path); found == tt.server {
				t.Errorf("Grep found %s: %v, want %v", tt.path, found, !tt.server)
			}
			if tt.server {
				before := e.snapshot()
				_, rerr := e.c.Read(e.ctx, &hashlinev1.ReadRequest{Path: tt.path})
				_, werr := e.c.Write(e.ctx, &hashlinev1.WriteRequest{Path: tt.path, Content: "overwritten\n"})
				for _, err := range []error{rerr, werr} {
					if !errors.Is(err, &client.Error{Reason: "INVALID_PATH"}) {
						t.Errorf("err = %v, want INVALID_PATH", err)
					}
				}
				e.assertUnchanged(before)
				return
			}
			r, err := e.c.Read(e.ctx, &hashlinev1.ReadRequest{Path: tt.path})
			if err != nil {
				t.Fatalf("Read: %v", err)
			}
			if _, err := e.c.Edit(e.ctx, &hashlinev1.EditRequest{Path: tt.path, Edits: []*hashlinev1.FileEdit{client.Replace(client.Ref(r.GetLines()[0]), "", "edited")}}); err != nil {
				t.Fatalf("Edit: %v", err)
			}
			if got := e.read(tt.path); got != "edited\n" {
				t.Errorf("after Edit the file holds %q", got)
			}
			if _, err := e.c.Write(e.ctx, &hashlinev1.WriteRequest{Path: tt.path, Content: "written\n"}); err != nil {
				t.Fatalf("Write: %v", err)
			}
			if got := e.read(tt.path); got != "written\n" {
				t.Errorf("after Write the file holds %q", got)
			}
		})
	}
}
