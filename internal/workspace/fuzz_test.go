//go:build linux

package workspace

import (
	"bytes"
	"path"
	"strings"
	"testing"
)

// FuzzRel checks that whatever Rel accepts is a clean relative path that
// cannot climb out of the root.
func FuzzRel(f *testing.F) {
	w, root, _ := newWS(f)
	for _, s := range []string{"a/b", "./a", "a/../b", "../x", "/etc", root + "/x", root + "x", " a ", "a\x00", "", ".", "..", "a/./../../b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		r, err := w.Rel(p)
		if err != nil {
			if countSentinels(err) != 1 {
				t.Fatalf("Rel(%q) error %v wraps %d sentinels", p, err, countSentinels(err))
			}
			return
		}
		if r != path.Clean(r) || path.IsAbs(r) || r == ".." || strings.HasPrefix(r, "../") || strings.ContainsRune(r, 0) {
			t.Fatalf("Rel(%q) = %q: not a clean path inside the root", p, r)
		}
	})
}

// FuzzDecodeText checks the promise behind every edit: text that decodes is
// re-encoded to exactly the bytes it came from.
func FuzzDecodeText(f *testing.F) {
	for _, s := range []string{"hello\n", "\xEF\xBB\xBFbom\r\n", "\xFF\xFEa\x00", "\xFE\xFF\x00a", "\xFF\xFE\x00\xD8", "caf\xe9", "a\x00b"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		text, enc, err := decodeText("read", "f", raw)
		if err != nil {
			if countSentinels(err) != 1 {
				t.Fatalf("error %v wraps %d sentinels", err, countSentinels(err))
			}
			return
		}
		again, err := encodeText("write", "f", text, enc)
		if err != nil {
			t.Fatalf("decoded %q as %s but cannot encode it back: %v", raw, enc, err)
		}
		if !bytes.Equal(again, raw) {
			t.Fatalf("%q decoded as %s re-encodes to %q", raw, enc, again)
		}
	})
}
