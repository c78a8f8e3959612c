package server_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/engine"
	"github.com/hashline/hashline/internal/workspace"
)

const goFile = "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n"

func TestReadReturnsTaggedLinesAndVersion(t *testing.T) {
	e := newEnv(t)
	e.write("main.go", goFile)
	resp, err := e.c.Read(e.ctx, &hashlinev1.ReadRequest{Path: "main.go"})
	if err != nil {
		t.Fatal(err)
	}
	if resp.GetTotalLines() != 5 || len(resp.GetLines()) != 5 || resp.GetTruncated() {
		t.Fatalf("got %d/%d lines truncated=%v", len(resp.GetLines()), resp.GetTotalLines(), resp.GetTruncated())
	}
	var want []string
	for n, l := range strings.Split(strings.TrimSuffix(goFile, "\n"), "\n") {
		want = append(want, tag(goFile, n+1)+"|"+l)
	}
	if resp.GetText() != strings.Join(want, "\n") {
		t.Errorf("text =\n%s\nwant\n%s", resp.GetText(), strings.Join(want, "\n"))
	}
	if l := resp.GetLines()[3]; l.GetNumber() != 4 || l.GetContent() != "\tprintln(\"hi\")" || client.Ref(l) != tag(goFile, 4) {
		t.Errorf("line 4 = %v", l)
	}
	if resp.GetEol() != "lf" || resp.GetBom() || resp.GetPath() != "main.go" || resp.GetVersion() == "" {
		t.Errorf("metadata = eol %q bom %v path %q version %q", resp.GetEol(), resp.GetBom(), resp.GetPath(), resp.GetVersion())
	}
	again, err := e.c.Read(e.ctx, &hashlinev1.ReadRequest{Path: "./main.go"})
	if err != nil || again.GetVersion() != resp.GetVersion() {
		t.Errorf("same bytes gave another version: %v %v", again.GetVersion(), err)
	}
}

func TestReadPaging(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 50; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	content := b.String()
	tests := []struct {
		name          string
		opts          []engine.Option
		offset, limit int32
		first, last   int
		truncated     bool
		nextOffset    int32
	}{
		{name: "whole file by default", first: 1, last: 50},
		{name: "offset and limit give one page", offset: 10, limit: 5, first: 10, last: 14, truncated: true, nextOffset: 15},
		{name: "last page is not truncated", offset: 45, limit: 10, first: 45, last: 50},
		{name: "server limit caps a larger request", opts: []engine.Option{engine.WithReadLimit(20)}, limit: 100, first: 1, last: 20, truncated: true, nextOffset: 21},
		// Lines 1-9 tag as "N:hh|line N", 11 bytes: eight of them and seven
		// newlines are 95 bytes, a ninth would make 107.
		{name: "byte budget stops before the line that would cross it", opts: []engine.Option{engine.WithReadByteBudget(100)}, first: 1, last: 8, truncated: true, nextOffset: 9},
		{name: "a page holds one line even over the budget", opts: []engine.Option{engine.WithReadByteBudget(3)}, offset: 2, first: 2, last: 2, truncated: true, nextOffset: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, tt.opts...)
			e.write("f.txt", content)
			resp, err := e.c.Read(e.ctx, &hashlinev1.ReadRequest{Path: "f.txt", Offset: tt.offset, Limit: tt.limit})
			if err != nil {
				t.Fatal(err)
			}
			lines := resp.GetLines()
			if len(lines) == 0 {
				t.Fatal("no lines")
			}
			if int(lines[0].GetNumber()) != tt.first || int(lines[len(lines)-1].GetNumber()) != tt.last {
				t.Fatalf("got lines %v..%v, want %d..%d", lines[0].GetNumber(), lines[len(lines)-1].GetNumber(), tt.first, tt.last)
			}
			if resp.GetTruncated() != tt.truncated || resp.GetNextOffset() != tt.nextOffset {
				t.Errorf("truncated=%v next=%d, want %v %d", resp.GetTruncated(), resp.GetNextOffset(), tt.truncated, tt.nextOffset)
			}
			if n := strings.Count(resp.GetText(), "\n") + 1; n != len(lines) {
				t.Errorf("text has %d lines, lines[] has %d", n, len(lines))
			}
			// omitLines returns the same page as text only.
			short, err := e.c.Read(e.ctx, &hashlinev1.ReadRequest{Path: "f.txt", Offset: tt.offset, Limit: tt.limit, OmitLines: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(short.GetLines()) != 0 {
				t.Errorf("omitLines returned %d lines", len(short.GetLines()))
			}
			short.Lines, resp.Lines = nil, nil
			if !proto.Equal(short, resp) {
				t.Errorf("omitLines response differs beyond lines:\n got %v\nwant %v", short, resp)
			}
		})
	}
}

func TestReadCutsLongLinesButHashesThemWhole(t *testing.T) {
	e := newEnv(t, engine.WithMaxLineBytes(100))
	long := strings.Repeat("x", 5000)
	e.write("long.txt", "short\n"+long+"\n")
	resp, err := e.c.Read(e.ctx, &hashlinev1.ReadRequest{Path: "long.txt"})
	if err != nil {
		t.Fatal(err)
	}
	l := resp.GetLines()[1]
	if len(l.GetContent()) >= 5000 || !strings.HasPrefix(l.GetContent(), strings.Repeat("x", 100)) {
		t.Errorf("long line not cut: %d bytes", len(l.GetContent()))
	}
	if client.Ref(l) != tag("short\n"+long+"\n", 2) {
		t.Errorf("hash %s does not cover the whole line", client.Ref(l))
	}
	// The cut line can still be replaced by reference.
	if _, err := e.c.Edit(e.ctx, &hashlinev1.EditRequest{Path: "long.txt", Edits: []*hashlinev1.FileEdit{client.Replace(client.Ref(l), "", "y")}}); err != nil {
		t.Fatal(err)
	}
	if got := e.read("long.txt"); got != "short\ny\n" {
		t.Errorf("file = %q", got)
	}
}

func TestReadKeepsBOMAndCRLFOutOfContent(t *testing.T) {
	e := newEnv(t)
	e.write("w.txt", "\ufeffone\r\ntwo\r\n")
	resp, err := e.c.Read(e.ctx, &hashlinev1.ReadRequest{Path: "w.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if !resp.GetBom() || resp.GetEol() != "crlf" || resp.GetLines()[0].GetContent() != "one" || resp.GetLines()[1].GetContent() != "two" {
		t.Errorf("bom=%v eol=%q lines=%v", resp.GetBom(), resp.GetEol(), resp.GetLines())
	}
}

func TestEditAppliesAndReturnsFreshTags(t *testing.T) {
	e := newEnv(t)
	e.seed("main.go", goFile)
	resp, err := e.c.Edit(e.ctx, &hashlinev1.EditRequest{
		Path:  "main.go",
		Edits: []*hashlinev1.FileEdit{client.Replace(tag(goFile, 4), "", "\tprintln(\"hello\")\n\treturn")},
		Full:  true,
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "package main\n\nfunc main() {\n\tprintln(\"hello\")\n\treturn\n}\n"
	if got := e.read("main.go"); got != want {
		t.Fatalf("file =\n%s", got)
	}
	if resp.GetTotalLines() != 6 || len(resp.GetLines()) != 6 {
		t.Errorf("totalLines %d, full lines %d", resp.GetTotalLines(), len(resp.GetLines()))
	}
	if len(resp.GetReplaced()) != 1 || resp.GetReplaced()[0].GetContent() != "\tprintln(\"hi\")" || resp.GetReplaced()[0].GetNumber() != 4 {
		t.Errorf("replaced = %v", resp.GetReplaced())
	}
	if !strings.Contains(resp.GetDiff(), "-\tprintln(\"hi\")") || !strings.Contains(resp.GetDiff(), "+\treturn") {
		t.Errorf("diff =\n%s", resp.GetDiff())
	}
	if len(resp.GetWindows()) != 1 || !strings.Contains(resp.GetWindows()[0].GetText(), tag(want, 5)+"|\treturn") {
		t.Errorf("windows = %v", resp.GetWindows())
	}
	read, _ := e.c.Read(e.ctx, &hashlinev1.ReadRequest{Path: "main.go"})
	if read.GetVersion() != resp.GetVersion() {
		t.Errorf("edit version %s != read version %s", resp.GetVersion(), read.GetVersion())
	}
}

func TestEditDryRunWritesNothing(t *testing.T) {
	e := newEnv(t)
	e.write("main.go", goFile)
	before := e.snapshot()
	resp, err := e.c.Edit(e.ctx, &hashlinev1.EditRequest{Path: "main.go", DryRun: true,
		Edits: []*hashlinev1.FileEdit{client.Append("// end")}})
	if err != nil {
		t.Fatal(err)
	}
	e.assertUnchanged(before)
	if !resp.GetDryRun() || !strings.Contains(resp.GetDiff(), "+// end") {
		t.Errorf("dry run response: %v", resp)
	}
	// The dry run's version is the version the write would produce.
	real, err := e.c.Edit(e.ctx, &hashlinev1.EditRequest{Path: "main.go", Edits: []*hashlinev1.FileEdit{client.Append("// end")}})
	if err != nil || real.GetVersion() != resp.GetVersion() {
		t.Errorf("dry-run version %s, real %s (%v)", resp.GetVersion(), real.GetVersion(), err)
	}
}

func TestEditContextZero(t *testing.T) {
	e := newEnv(t)
	e.seed("main.go", goFile)
	resp, err := e.c.Edit(e.ctx, &hashlinev1.EditRequest{Path: "main.go", Context: proto.Int32(0),
		Edits: []*hashlinev1.FileEdit{client.Replace(tag(goFile, 4), "", "\tprintln(2)")}})
	if err != nil {
		t.Fatal(err)
	}
	if w := resp.GetWindows(); len(w) != 1 || w[0].GetStart() != 4 || w[0].GetEnd() != 4 {
		t.Errorf("windows with context 0 = %v", w)
	}
}

func TestStaleEditIsAbortedWithDetails(t *testing.T) {
	e := newEnv(t)
	e.seed("main.go", goFile)
	old := tag(goFile, 4)
	changed := strings.Replace(goFile, "hi", "changed by someone else", 1)
	e.write("main.go", changed)
	before := e.snapshot()

	_, err := e.c.Edit(e.ctx, &hashlinev1.EditRequest{Path: "main.go", Edits: []*hashlinev1.FileEdit{client.Replace(old, "", "x")}})
	var stale client.StaleRefError
	if !errors.As(err, &stale) {
		t.Fatalf("err = %v, want StaleRefError", err)
	}
	if status.Code(err) != codes.Aborted || !errors.Is(err, client.ErrStaleRef) {
		t.Errorf("code %v", status.Code(err))
	}
	if len(stale.Refs) != 1 {
		t.Fatalf("refs = %v", stale.Refs)
	}
	r := stale.Refs[0]
	if r.GetEditIndex() != 0 || r.GetLine() != 4 || r.GetCurrentLine() != tag(changed, 4)+"|\tprintln(\"changed by someone else\")" ||
		r.GetReason() != "CHANGED" || r.GetCurrentVersion() == "" || len(r.GetFresh()) == 0 {
		t.Errorf("stale ref = %v", r)
	}
	if !strings.Contains(stale.Err.Message, "changed since last read") || !strings.Contains(stale.Err.Message, ">>>") {
		t.Errorf("message is not the text view: %s", stale.Err.Message)
	}
	e.assertUnchanged(before)

	// Retrying from the fresh tag succeeds.
	if _, err := e.c.Edit(e.ctx, &hashlinev1.EditRequest{Path: "main.go", Edits: []*hashlinev1.FileEdit{client.Replace(r.GetCurrentLine(), "", "\tprintln(\"retried\")")}}); err != nil {
		t.Fatal(err)
	}
}

func TestWriteModes(t *testing.T) {
	e := newEnv(t)
	resp, err := e.c.Write(e.ctx, &hashlinev1.WriteRequest{Path: "new/dir/a.txt", Content: "a\nb\n", Mode: hashlinev1.WriteMode_WRITE_MODE_CREATE})
	if err != nil {
		t.Fatal(err)
	}
	if !resp.GetCreated() || resp.GetTotalLines() != 2 || e.read("new/dir/a.txt") != "a\nb\n" {
		t.Fatalf("create: %v", resp)
	}
	up, err := e.c.Write(e.ctx, &hashlinev1.WriteRequest{Path: "new/dir/a.txt", Content: "c\n", ExpectedVersion: resp.GetVersion()})
	if err != nil || up.GetCreated() || e.read("new/dir/a.txt") != "c\n" {
		t.Fatalf("CAS upsert: %v %v", up, err)
	}
	read, _ := e.c.Read(e.ctx, &hashlinev1.ReadRequest{Path: "new/dir/a.txt"})
	if read.GetVersion() != up.GetVersion() {
		t.Errorf("write version %s != read version %s", up.GetVersion(), read.GetVersion())
	}
	if err := os.Chmod(filepath.Join(e.root, "new/dir/a.txt"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.Write(e.ctx, &hashlinev1.WriteRequest{Path: "new/dir/a.txt", Content: "d\n", Mode: hashlinev1.WriteMode_WRITE_MODE_REPLACE}); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(filepath.Join(e.root, "new/dir/a.txt")); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode not kept: %v", fi.Mode())
	}
}

func TestGrepStreamsTaggedMatches(t *testing.T) {
	e := newEnv(t)
	e.write("b.go", goFile)
	e.write("a.go", "// hi there\n")
	e.write("c.txt", "no match\n")
	e.write("ignored/x.go", "hi\n")
	e.write(".gitignore", "ignored/\n")
	var files []*hashlinev1.GrepFile
	sum, err := e.c.Grep(e.ctx, &hashlinev1.GrepRequest{Pattern: `"hi"|hi there`, After: 1}, func(f *hashlinev1.GrepFile) error {
		files = append(files, f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 || files[0].GetPath() != "a.go" || files[1].GetPath() != "b.go" {
		t.Fatalf("files = %v", files)
	}
	b := files[1]
	if len(b.GetLines()) != 2 || !b.GetLines()[0].GetMatch() || b.GetLines()[1].GetMatch() || b.GetLines()[0].GetNumber() != 4 {
		t.Errorf("b.go lines = %v", b.GetLines())
	}
	if got := fmt.Sprintf("%d:%s", b.GetLines()[0].GetNumber(), b.GetLines()[0].GetHash()); got != tag(goFile, 4) {
		t.Errorf("grep tag %s, want %s", got, tag(goFile, 4))
	}
	read, _ := e.c.Read(e.ctx, &hashlinev1.ReadRequest{Path: "b.go"})
	if b.GetVersion() != read.GetVersion() {
		t.Errorf("grep version %s != read version %s", b.GetVersion(), read.GetVersion())
	}
	if sum.GetMatches() != 2 || sum.GetFilesMatched() != 2 || sum.GetTruncated() {
		t.Errorf("summary = %v", sum)
	}
}

func TestGrepMaxMatchesTruncates(t *testing.T) {
	e := newEnv(t)
	e.write("a.txt", strings.Repeat("x\n", 10))
	n := 0
	sum, err := e.c.Grep(e.ctx, &hashlinev1.GrepRequest{Pattern: "x", MaxMatches: 3}, func(f *hashlinev1.GrepFile) error {
		n += len(f.GetLines())
		return nil
	})
	if err != nil || n != 3 || sum.GetMatches() != 3 || !sum.GetTruncated() {
		t.Errorf("n=%d summary=%v err=%v", n, sum, err)
	}
}

// TestConcurrentEditsToOneFileAreSerialised runs many appends at once; a
// lost update would drop one of the lines.
func TestConcurrentEditsToOneFileAreSerialised(t *testing.T) {
	e := newEnv(t)
	e.write("log.txt", "")
	const n = 20
	errs := make(chan error, n)
	for i := range n {
		go func() {
			_, err := e.c.Edit(e.ctx, &hashlinev1.EditRequest{Path: "log.txt", Edits: []*hashlinev1.FileEdit{client.Append(fmt.Sprintf("line %d", i))}})
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	got := e.read("log.txt")
	for i := range n {
		if !strings.Contains(got, fmt.Sprintf("line %d\n", i)) {
			t.Errorf("line %d lost:\n%s", i, got)
		}
	}
}

// TestEditsThroughASymlinkShareTheTargetsLock: a link and its target name
// one file, so concurrent appends through both must all land.
func TestEditsThroughASymlinkShareTheTargetsLock(t *testing.T) {
	e := newEnv(t)
	e.write("t.txt", "")
	if err := os.Symlink("t.txt", filepath.Join(e.root, "link.txt")); err != nil {
		t.Fatal(err)
	}
	const n = 40
	errs := make(chan error, n)
	for i := range n {
		path := []string{"t.txt", "link.txt"}[i%2]
		go func() {
			_, err := e.c.Edit(e.ctx, &hashlinev1.EditRequest{Path: path, Edits: []*hashlinev1.FileEdit{client.Append(fmt.Sprintf("line %d", i))}})
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	got := e.read("t.txt")
	for i := range n {
		if !strings.Contains(got, fmt.Sprintf("line %d\n", i)) {
			t.Errorf("line %d lost", i)
		}
	}
	if fi, err := os.Lstat(filepath.Join(e.root, "link.txt")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("link.txt is no longer a symlink: %v %v", fi, err)
	}
}

// TestNothingIsWrittenWhenTheEditCannotBeAnswered covers the refusals that
// come after planning: each must leave the file as it was.
func TestNothingIsWrittenWhenTheEditCannotBeAnswered(t *testing.T) {
	var big strings.Builder
	for i := range 300 {
		fmt.Fprintf(&big, "line %d of a longish file\n", i)
	}
	tests := []struct {
		name   string
		wsOpts []workspace.Option
		opts   []engine.Option
		req    *hashlinev1.EditRequest
		cancel bool
		code   codes.Code
		reason string
	}{
		{name: "response over the limit", opts: []engine.Option{engine.WithMaxResponseBytes(2000)},
			req:  &hashlinev1.EditRequest{Path: "f.txt", Full: true, Edits: []*hashlinev1.FileEdit{client.Append("x")}},
			code: codes.ResourceExhausted, reason: "TOO_LARGE"},
		{name: "result over the file size limit", wsOpts: []workspace.Option{workspace.WithMaxFileBytes(int64(big.Len()) + 5)},
			req:  &hashlinev1.EditRequest{Path: "f.txt", Edits: []*hashlinev1.FileEdit{client.Append("0123456789")}},
			code: codes.ResourceExhausted, reason: "TOO_LARGE"},
		{name: "dry run over the file size limit too", wsOpts: []workspace.Option{workspace.WithMaxFileBytes(int64(big.Len()) + 5)},
			req:  &hashlinev1.EditRequest{Path: "f.txt", DryRun: true, Edits: []*hashlinev1.FileEdit{client.Append("0123456789")}},
			code: codes.ResourceExhausted, reason: "TOO_LARGE"},
		{name: "caller already gone", cancel: true,
			req:  &hashlinev1.EditRequest{Path: "f.txt", Edits: []*hashlinev1.FileEdit{client.Append("x")}},
			code: codes.Canceled, reason: "CANCELED"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnvWS(t, tt.wsOpts, tt.opts...)
			e.write("f.txt", big.String())
			before := e.snapshot()
			ctx := e.ctx
			if tt.cancel {
				c, cancel := context.WithCancel(ctx)
				cancel()
				ctx = c
			}
			// Straight to the service: a client would not send a call
			// whose context is already cancelled.
			_, err := e.svc.Edit(ctx, tt.req)
			ce, ok := client.FromStatus(err).(*client.Error)
			if !ok || ce.Code != tt.code || ce.Reason != tt.reason {
				t.Fatalf("err = %v, want %v %s", err, tt.code, tt.reason)
			}
			e.assertUnchanged(before)
		})
	}
}

// TestWriteReplacesFilesItCannotShow: a binary or non-UTF-8 file can be
// overwritten whole, and a compare-and-swap against its raw bytes works.
func TestWriteReplacesFilesItCannotShow(t *testing.T) {
	for _, raw := range []string{"a\x00b", "caf\xe9\n"} {
		e := newEnv(t)
		e.write("x.dat", raw)
		_, err := e.c.Write(e.ctx, &hashlinev1.WriteRequest{Path: "x.dat", Content: "text\n", ExpectedVersion: "v1-stale"})
		var ce *client.Error
		if !errors.As(err, &ce) || ce.Reason != "VERSION_MISMATCH" || ce.Metadata["currentVersion"] != workspace.Version([]byte(raw)) {
			t.Fatalf("%q: err = %v, want VERSION_MISMATCH naming the raw version", raw, err)
		}
		if _, err := e.c.Write(e.ctx, &hashlinev1.WriteRequest{Path: "x.dat", Content: "text\n", ExpectedVersion: ce.Metadata["currentVersion"]}); err != nil {
			t.Fatal(err)
		}
		if got := e.read("x.dat"); got != "text\n" {
			t.Errorf("file = %q", got)
		}
	}
}

// An edit of a UTF-16 file writes UTF-16 with its byte-order mark, and the
// version it returns is the version of those bytes, as a fresh read says.
func TestEditKeepsUTF16(t *testing.T) {
	for _, enc := range []workspace.Encoding{workspace.UTF16LE, workspace.UTF16BE} {
		t.Run(string(enc), func(t *testing.T) {
			e := newEnv(t)
			before, err := workspace.Encode([]byte("one\r\ntwo\r\n"), enc)
			if err != nil {
				t.Fatal(err)
			}
			e.seed("w.txt", string(before))
			resp, err := e.c.Edit(e.ctx, &hashlinev1.EditRequest{Path: "w.txt",
				Edits: []*hashlinev1.FileEdit{client.Replace(tag("one\ntwo\n", 2), "", "zwei")}})
			if err != nil {
				t.Fatal(err)
			}
			want, err := workspace.Encode([]byte("one\r\nzwei\r\n"), enc)
			if err != nil {
				t.Fatal(err)
			}
			if got := e.read("w.txt"); got != string(want) {
				t.Fatalf("file = %q, want %q", got, want)
			}
			if v := workspace.Version(want); resp.GetVersion() != v {
				t.Errorf("version %s, want %s (the bytes on disk)", resp.GetVersion(), v)
			}
			read := newEnvAt(t, e.root)
			r, err := read.c.Read(read.ctx, &hashlinev1.ReadRequest{Path: "w.txt"})
			if err != nil {
				t.Fatal(err)
			}
			if r.GetVersion() != resp.GetVersion() || r.GetEncoding() != string(enc) {
				t.Errorf("a fresh read says version %s encoding %q; the edit said %s", r.GetVersion(), r.GetEncoding(), resp.GetVersion())
			}
		})
	}
}
