package grep

import (
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/hashline/hashline/internal/workspace"
)

// ignoreTree has a match in every file, so the emitted paths are exactly
// the files searched.
var ignoreTree = map[string]string{
	".gitignore":         "# needle\n\n*.log\n!keep.log\nbuild/\n**/gen\n/rootonly.txt\r\n",
	"a.txt":              "needle\n",
	"debug.log":          "needle\n",
	"keep.log":           "needle\n",
	"build/x.txt":        "needle\n",
	"gen/w.txt":          "needle\n",
	"rootonly.txt":       "needle\n",
	"src/rootonly.txt":   "needle\n",
	"src/build/y.txt":    "needle\n",
	"src/deep/gen/z.txt": "needle\n",
	"src/generator.txt":  "needle\n",
	"src/.gitignore":     "# needle\nsecret*\n!secret-ok.txt\n",
	"src/secret.txt":     "needle\n",
	"src/secret-ok.txt":  "needle\n",
	"other/secret.txt":   "needle\n",
	".hidden.txt":        "needle\n",
	".dir/x.txt":         "needle\n",
	".git/config":        "needle\n",
	".git/x/y.txt":       "needle\n",
	"sub/.git":           "needle\n",
}

func TestWalkFilters(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, ignoreTree)
	tests := []struct {
		name string
		opts Options
		want []string
	}{
		{
			name: "gitignore rules from root and nested files apply, with negation and directory rules",
			opts: Options{},
			want: []string{"a.txt", "keep.log", "other/secret.txt", "src/generator.txt", "src/rootonly.txt", "src/secret-ok.txt"},
		},
		{
			name: "NoIgnore searches ignored files but still skips hidden ones and .git",
			opts: Options{NoIgnore: true},
			want: []string{"a.txt", "build/x.txt", "debug.log", "gen/w.txt", "keep.log", "other/secret.txt", "rootonly.txt",
				"src/build/y.txt", "src/deep/gen/z.txt", "src/generator.txt", "src/rootonly.txt", "src/secret-ok.txt", "src/secret.txt"},
		},
		{
			name: "Hidden adds dot-files and dot-directories but never .git",
			opts: Options{Hidden: true},
			want: []string{".dir/x.txt", ".gitignore", ".hidden.txt", "a.txt", "keep.log", "other/secret.txt",
				"src/.gitignore", "src/generator.txt", "src/rootonly.txt", "src/secret-ok.txt"},
		},
		{
			name: "a subdirectory still obeys the .gitignore files above it",
			opts: Options{Path: "src"},
			want: []string{"src/generator.txt", "src/rootonly.txt", "src/secret-ok.txt"},
		},
		{
			name: "an ignored directory named as Path is searched",
			opts: Options{Path: "build/"},
			want: []string{"build/x.txt"},
		},
		{
			name: "a hidden directory named as Path is searched",
			opts: Options{Path: "./.dir"},
			want: []string{".dir/x.txt"},
		},
		{
			name: "an ignored file named as Path is searched",
			opts: Options{Path: "debug.log"},
			want: []string{"debug.log"},
		},
		{
			name: "a hidden file named as Path is searched even if excluded by a glob",
			opts: Options{Path: ".hidden.txt", ExcludeGlobs: []string{"*.txt"}},
			want: []string{".hidden.txt"},
		},
		{
			name: "a glob without a slash matches base names anywhere",
			opts: Options{Globs: []string{"secret*"}, NoIgnore: true},
			want: []string{"other/secret.txt", "src/secret-ok.txt", "src/secret.txt"},
		},
		{
			name: "a glob with a slash matches the path from the root",
			opts: Options{Globs: []string{"src/**/*.txt"}, NoIgnore: true, Path: "src"},
			want: []string{"src/build/y.txt", "src/deep/gen/z.txt", "src/generator.txt", "src/rootonly.txt", "src/secret-ok.txt", "src/secret.txt"},
		},
		{
			name: "exclude globs prune files and directories",
			opts: Options{ExcludeGlobs: []string{"**/gen/**", "build/", "*.log", "src/s*"}, NoIgnore: true},
			want: []string{"a.txt", "other/secret.txt", "rootonly.txt", "src/generator.txt", "src/rootonly.txt"},
		},
		{
			name: "include and exclude globs combine",
			opts: Options{Globs: []string{"*.txt", "/keep.log"}, ExcludeGlobs: []string{"src"}},
			want: []string{"a.txt", "keep.log", "other/secret.txt"},
		},
		{
			name: "SkipFile hides files by base name",
			opts: Options{SkipFile: func(name string) bool { return name == "a.txt" || name == "src" }},
			want: []string{"keep.log", "other/secret.txt", "src/generator.txt", "src/rootonly.txt", "src/secret-ok.txt"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.Pattern = "needle"
			for name, fsys := range map[string]fs.FS{
				"os.Root": rootFS(t, dir), "generic": plainFS{rootFS(t, dir)}, "os.DirFS": os.DirFS(dir),
			} {
				files, sum, err := collect(t, fsys, tt.opts)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if got := paths(files); !reflect.DeepEqual(got, tt.want) {
					t.Errorf("%s: got %q\nwant %q", name, got, tt.want)
				}
				if sum.FilesScanned != len(tt.want) || sum.FilesMatched != len(tt.want) || sum.Matches != len(tt.want) {
					t.Errorf("%s: summary %+v, want %d files scanned and matched", name, sum, len(tt.want))
				}
			}
		})
	}
}

func TestGitInfoExclude(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		".git/info/exclude": "# local\nlocal.txt\n",
		"local.txt":         "needle\n",
		"shared.txt":        "needle\n",
	})
	files, _, err := collect(t, rootFS(t, dir), Options{Pattern: "needle"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := paths(files), []string{"shared.txt"}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestWalkSkipsVCSMetadataAndLinksInto: every version-control metadata
// directory the workspace knows is skipped at any depth, hidden or not, and
// SkipLink sees every link before it is followed; symlink loops are skipped
// like any unreadable file.
func TestWalkSkipsVCSMetadataAndLinksInto(t *testing.T) {
	dir := t.TempDir()
	tree := map[string]string{"a.txt": "needle\n", "sub/b.txt": "needle\n"}
	for _, d := range workspace.VCSDirs() {
		tree[d+"/config"] = "needle\n"
		tree["sub/deep/"+d+"/config"] = "needle\n"
	}
	writeTree(t, dir, tree)
	for target, name := range map[string]string{".git/config": "cfg", "sub/b.txt": "b-link", "loop": "loop", "b": "a", "a": "b"} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	var seen []string
	var mu sync.Mutex
	skipLink := func(p string) bool {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, p)
		return p == "cfg"
	}
	for name, fsys := range map[string]fs.FS{"os.Root": rootFS(t, dir), "generic": plainFS{rootFS(t, dir)}} {
		t.Run("through "+name, func(t *testing.T) {
			seen = nil
			files, sum, err := collect(t, fsys, Options{Pattern: "needle", Hidden: true, NoIgnore: true, SkipLink: skipLink})
			if err != nil {
				t.Fatal(err)
			}
			if got, want := paths(files), []string{"a.txt", "b-link", "sub/b.txt"}; !reflect.DeepEqual(got, want) {
				t.Errorf("got %q, want %q", got, want)
			}
			if sum.FilesScanned != 3 {
				t.Errorf("scanned %d files, want 3", sum.FilesScanned)
			}
			slices.Sort(seen)
			if want := []string{"a", "b", "b-link", "cfg", "loop"}; !reflect.DeepEqual(seen, want) {
				t.Errorf("SkipLink saw %q, want %q", seen, want)
			}
		})
	}
}

func TestOrderIsPathOrder(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"a/x": "needle", "a.go": "needle", "a-b/x": "needle", "a0": "needle", "A": "needle", "a/b/c": "needle", "a/b.c": "needle",
	})
	files, _, err := collect(t, rootFS(t, dir), Options{Pattern: "needle"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"A", "a-b/x", "a.go", "a/b.c", "a/b/c", "a/x", "a0"}
	if got := paths(files); !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// The fast path is taken for RootFS alone: an os.Root's file system as
// root.FS() returns it, os.DirFS or another FS is walked through its
// methods, whatever its type is called.
func TestFastPathIsUsedForRootFSAlone(t *testing.T) {
	dir := t.TempDir()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	for _, tt := range []struct {
		name string
		fs   fs.FS
		want bool
	}{
		{"RootFS", RootFS(root), fastSupported},
		{"root.FS()", root.FS(), false},
		{"os.DirFS", os.DirFS(dir), false},
		{"another FS", plainFS{RootFS(root)}, false},
	} {
		if got := newSource(tt.fs).fast; got != tt.want {
			t.Errorf("%s: fast = %v, want %v", tt.name, got, tt.want)
		}
	}
}
