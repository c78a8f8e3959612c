package server_test

import (
	"strings"
	"testing"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/workspace"
)

// TestVersionAfterEncodingConvertedOutside: a file the server knows as
// UTF-16 is converted to UTF-8 outside the server, keeping its text (and
// back). The server compares a file with the snapshot of the version it
// last saw there to skip hashing it; the snapshot of a UTF-16 file is its
// decoded text, which equals the converted file's bytes, so the comparison
// must not be made: every version must be the hash of the bytes on disk.
func TestVersionAfterEncodingConvertedOutside(t *testing.T) {
	text := strings.Repeat("καλημέρα κόσμε, a line of text\n", 10000)
	utf16, err := workspace.Encode([]byte(text), workspace.UTF16LE)
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t)
	e.write("f.txt", string(utf16))
	for i, step := range []struct {
		raw string
		enc string
	}{{string(utf16), "utf-16le"}, {text, "utf-8"}, {string(utf16), "utf-16le"}, {text, "utf-8"}} {
		e.write("f.txt", step.raw)
		r, err := e.c.Read(e.ctx, &hashlinev1.ReadRequest{Path: "f.txt", Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		if want := workspace.Version([]byte(step.raw)); r.GetVersion() != want || r.GetEncoding() != step.enc {
			t.Fatalf("step %d: Read gives version %s (%s), want %s (%s): the hash of the bytes on disk", i, r.GetVersion(), r.GetEncoding(), want, step.enc)
		}
	}
	// An Edit after a conversion keeps the file's encoding as it is now.
	e.write("f.txt", string(utf16))
	r, err := e.c.Read(e.ctx, &hashlinev1.ReadRequest{Path: "f.txt", Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	e.write("f.txt", text)
	resp, err := e.c.Edit(e.ctx, &hashlinev1.EditRequest{Path: "f.txt",
		Edits: []*hashlinev1.FileEdit{client.Replace(client.Ref(r.GetLines()[0]), "", "hello")}})
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(text, "καλημέρα κόσμε, a line of text\n", "hello\n", 1)
	if got := e.read("f.txt"); got != want {
		t.Fatalf("after the edit the file holds %d bytes (%q...), want the UTF-8 text edited", len(got), got[:12])
	}
	if resp.GetVersion() != workspace.Version([]byte(want)) {
		t.Fatalf("Edit gives version %s, not the hash of the file it wrote", resp.GetVersion())
	}
}
