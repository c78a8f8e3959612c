//go:build linux

package workspace

import (
	"os"
	"path/filepath"
	"testing"
)

// With a fold rule, every spelling of one name the file system takes for
// one gets one key; the rule is an option, so it is tested on any file
// system, and byte-for-byte names keep their keys apart without it.
func TestLockKeyFoldsNamesByTheFileSystemsRule(t *testing.T) {
	_, root, _ := newWS(t)
	mustWrite(t, filepath.Join(root, "Dir", "File.txt"), "x\n", 0o644)
	if err := os.Symlink("Dir", filepath.Join(root, "Link")); err != nil {
		t.Skipf("this platform cannot make the symlink the test needs: %v", err)
	}
	const nfc, nfd = "caf\u00e9.txt", "cafe\u0301.txt"
	same := [][]string{
		{"Dir/File.txt", "dir/file.txt", "DIR/FILE.TXT", "Link/file.txt"},
		{"Dir/new/" + nfc, "dir/NEW/" + nfd, "Link/New/CAF\u00c9.txt"},
		{"\u03a3", "\u03c3", "\u03c2"}, // sigma: capital, small, final
		{"K", "k", "\u212a"},           // Kelvin sign
	}
	folded, err := Open(root, WithNameFold(FoldCase))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { folded.Close() })
	plain, err := Open(root, WithNameFold(nil))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { plain.Close() })
	for _, names := range same {
		for _, n := range names[1:] {
			if a, b := folded.LockKey(names[0]), folded.LockKey(n); a != b {
				t.Errorf("folded: LockKey(%q) = %q, LockKey(%q) = %q: want one key", names[0], a, n, b)
			}
		}
	}
	if a, b := plain.LockKey("dir/x"), plain.LockKey("Dir/x"); a == b {
		t.Errorf("byte for byte: dir/x and Dir/x share the key %q", a)
	}
	if a, b := folded.LockKey("Dir/a"), folded.LockKey("Dir/b"); a == b {
		t.Errorf("folded: two names share the key %q", a)
	}
}

// On a file system that does fold case (macOS and Windows by default),
// the default rule must give two spellings of one existing file one key.
// Elsewhere the test has nothing to check and says so.
func TestLockKeyDefaultFoldMatchesTheFileSystem(t *testing.T) {
	w, root, _ := newWS(t)
	mustWrite(t, filepath.Join(root, "Probe.txt"), "x\n", 0o644)
	if _, err := os.Lstat(filepath.Join(root, "PROBE.TXT")); err != nil {
		t.Skip("the temporary directory's file system tells case apart")
	}
	if a, b := w.LockKey("Probe.txt"), w.LockKey("pRoBe.TxT"); a != b {
		t.Errorf("LockKey(Probe.txt) = %q, LockKey(pRoBe.TxT) = %q on a case-insensitive file system", a, b)
	}
}
