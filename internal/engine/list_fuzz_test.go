package engine

import (
	"path"
	"strings"
	"testing"
)

// FuzzPageToken: whatever a client sends as a page token, it is refused or
// names a clean relative path inside the listed directory, and every token
// the server makes parses back to its key.
func FuzzPageToken(f *testing.F) {
	for _, seed := range []struct{ tok, dir string }{
		{pageToken("a/b"), "."}, {pageToken("a/"), "a"}, {pageToken("../x"), "."}, {"", "."},
		{"not base64!", "."}, {pageToken("/etc"), "."}, {pageToken("a//b"), "a"}, {pageToken("a\xff"), "."},
	} {
		f.Add(seed.tok, seed.dir)
	}
	f.Fuzz(func(t *testing.T, tok, dir string) {
		dir = path.Clean("/" + dir)[1:]
		if dir == "" {
			dir = "."
		}
		key, err := parsePageToken(tok, dir)
		if err != nil || tok == "" {
			return
		}
		p := strings.TrimSuffix(key, "/")
		if p == "" || path.Clean(p) != p || path.IsAbs(p) || p == ".." || strings.HasPrefix(p, "../") {
			t.Fatalf("token %q accepted as %q, not a clean relative path", tok, key)
		}
		if dir != "." && !strings.HasPrefix(p, dir+"/") {
			t.Fatalf("token %q accepted as %q, outside %q", tok, key, dir)
		}
		if again, err := parsePageToken(pageToken(key), dir); err != nil || again != key {
			t.Fatalf("the token of %q parses as %q, %v", key, again, err)
		}
	})
}
