//go:build linux

package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestIsVCSName(t *testing.T) {
	for _, tc := range []struct {
		name string
		want bool
	}{
		{".git", true},
		{".hg", true},
		{".svn", true},
		{".bzr", true},
		{"_darcs", true},
		{".jj", true},
		{".pijul", true},
		{"CVS", true},
		{".GIT", true},
		{".Git", true},
		{"cvs", true},
		{".git.", true},
		{".git ", true},
		{".git. . ", true},
		{".g\u200cit", true},
		{"\ufeff.git", true},
		{"GIT~1", true},
		{"git~12", true},
		{"HG~1", true},
		{".gitignore", false},
		{".gitattributes", false},
		{".github", false},
		{"git", false},
		{".gi", false},
		{"GIT~", false},
		{"GIT~1a", false},
		{"x.git", false},
		{".git-crypt", false},
		{"..", false},
		{".", false},
		{"", false},
		{"CVSROOT", false},
		{"darcs", false},
	} {
		if got := IsVCSName(tc.name); got != tc.want {
			t.Errorf("IsVCSName(%q) = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestIsVCSPath(t *testing.T) {
	for _, tc := range []struct {
		path string
		want bool
	}{
		{".git", true},
		{".git/config", true},
		{"sub/.git/config", true},
		{"a/b/.hg/hgrc", true},
		{"vendor/CVS/Root", true},
		{"sub/.git", true},
		{".gitignore", false},
		{"src/git/config", false},
		{".", false},
		{"a/b.go", false},
	} {
		if got := IsVCSPath(tc.path); got != tc.want {
			t.Errorf("IsVCSPath(%q) = %v, want %v", tc.path, got, tc.want)
		}
	}
}

// vcsTree is a workspace root with a git repository's metadata, a nested
// repository, a worktree's ".git" file and links into the metadata. It
// returns the root.
func vcsTree(t *testing.T, root string) {
	t.Helper()
	mustWrite(t, filepath.Join(root, ".git", "config"), "[core]\n", 0o644)
	mustWrite(t, filepath.Join(root, ".git", "hooks", "README"), "hooks\n", 0o644)
	mustWrite(t, filepath.Join(root, "sub", ".git", "config"), "[core]\n", 0o644)
	mustWrite(t, filepath.Join(root, "wt", ".git"), "gitdir: ../.git/worktrees/wt\n", 0o644)
	mustWrite(t, filepath.Join(root, ".hg", "hgrc"), "[hooks]\n", 0o644)
	mustWrite(t, filepath.Join(root, "f.txt"), "text\n", 0o644)
	mustSymlink(t, ".git/config", filepath.Join(root, "cfg"))
	mustSymlink(t, ".git", filepath.Join(root, "g"))
	mustSymlink(t, "g/hooks", filepath.Join(root, "h")) // a chain
	mustSymlink(t, filepath.Join(root, ".git", "config"), filepath.Join(root, "abscfg"))
	mustSymlink(t, "sub", filepath.Join(root, "s"))
	mustSymlink(t, ".git/../f.txt", filepath.Join(root, "through")) // passes through .git to a plain file
}

// TestVCSMetadataIsRefused: every way of naming version-control metadata,
// directly or through links, is refused for writing, and for reading
// unless the workspace allows it; nothing on disk changes.
func TestVCSMetadataIsRefused(t *testing.T) {
	paths := []struct {
		name, path string
	}{
		{"the git config", ".git/config"},
		{"a hook that does not exist yet", ".git/hooks/pre-commit"},
		{"a new file in a new directory of .git", ".git/new/dir/x"},
		{"the .git directory itself", ".git"},
		{"a path that climbs through .git and back into it", "./.git/../.git/config"},
		{"a nested repository's config", "sub/.git/config"},
		{"a worktree's .git file", "wt/.git"},
		{"Mercurial's hgrc", ".hg/hgrc"},
		{"a differently cased name", ".GIT/config"},
		{"a link to the config", "cfg"},
		{"a link with an absolute target", "abscfg"},
		{"a hook through a linked .git", "g/hooks/x"},
		{"the config through a linked .git", "g/config"},
		{"a hook through a chain of links", "h/pre-commit"},
		{"a nested repository through a linked directory", "s/.git/config"},
		{"a missing file through a linked .git", "g/missing"},
		{"an absolute path into .git", "ROOT/.git/config"},
	}
	for _, allowRead := range []bool{false, true} {
		mode := "by default"
		if allowRead {
			mode = "with reads allowed"
		}
		w, root, _ := newWS(t, WithVCSRead(allowRead))
		vcsTree(t, root)
		abs := func(p string) string {
			if rest, ok := strings.CutPrefix(p, "ROOT"); ok {
				return root + rest
			}
			return p
		}
		for _, tc := range paths {
			t.Run(tc.name+" "+mode, func(t *testing.T) {
				before := snapshot(t, root)
				_, err := w.WriteFile(abs(tc.path), []byte("pwned\n"), WriteOptions{})
				assertErr(t, err, ErrVCSPath)
				assertSameSnapshot(t, before, snapshot(t, root))

				if allowRead {
					return
				}
				_, err = w.ReadFile(abs(tc.path))
				assertErr(t, err, ErrVCSPath)
				_, err = w.FileVersion(abs(tc.path))
				assertErr(t, err, ErrVCSPath)
				_, _, err = w.Resolve(abs(tc.path))
				assertErr(t, err, ErrVCSPath)
				_, _, err = w.Stat(abs(tc.path))
				assertErr(t, err, ErrVCSPath)
			})
		}
	}
}

func TestVCSReadIsAllowedOnlyWhenAsked(t *testing.T) {
	w, root, _ := newWS(t, WithVCSRead(true))
	vcsTree(t, root)
	for _, p := range []string{".git/config", "cfg", "g/config", "sub/.git/config"} {
		f, err := w.ReadFile(p)
		if err != nil {
			t.Fatalf("ReadFile(%q) with WithVCSRead: %v", p, err)
		}
		if string(f.Text) != "[core]\n" {
			t.Errorf("ReadFile(%q) = %q", p, f.Text)
		}
	}
	if got, _, err := w.Stat("g/hooks"); err != nil || got != ".git/hooks" {
		t.Errorf("Stat(g/hooks) = %q, %v; want .git/hooks", got, err)
	}
}

func TestPlainPathsNearVCSMetadataStayUsable(t *testing.T) {
	w, root, _ := newWS(t)
	vcsTree(t, root)
	for _, p := range []string{"f.txt", "through", ".gitignore", "sub/.github/x.yml", "src/git/config"} {
		if _, err := w.WriteFile(p, []byte("ok\n"), WriteOptions{}); err != nil {
			t.Errorf("WriteFile(%q): %v", p, err)
			continue
		}
		if _, err := w.ReadFile(p); err != nil {
			t.Errorf("ReadFile(%q): %v", p, err)
		}
	}
	// "through" named .git in its target on the way to f.txt: f.txt was
	// written, .git was not.
	if b, _ := os.ReadFile(filepath.Join(root, "f.txt")); string(b) != "ok\n" {
		t.Errorf("f.txt = %q after writing through the link", b)
	}
}

// TestVCSErrorSaysWhereTheLinkLeads: a model that wrote "cfg" learns that
// it leads into .git, and what to do instead.
func TestVCSErrorSaysWhereTheLinkLeads(t *testing.T) {
	w, root, _ := newWS(t)
	vcsTree(t, root)
	_, err := w.WriteFile("cfg", []byte("x\n"), WriteOptions{})
	var we *Error
	if !errors.As(err, &we) || we.Kind != ErrVCSPath {
		t.Fatalf("got %v", err)
	}
	for _, want := range []string{`"cfg"`, `leads to ".git/config"`, `(".git")`, "never writes there"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	_, err = w.ReadFile(".git/config")
	if !strings.Contains(err.Error(), "--allow-vcs-read") {
		t.Errorf("read error %q does not name the operator's switch", err)
	}
}
