package engine

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// conflictSet runs conflicts over changes keyed by names under root (a
// name "x>y" is a move from x to y) and returns the indexes refused.
func conflictSet(root string, names []string) []int {
	changes := make([]*change, len(names))
	for i, n := range names {
		c := &change{index: i, path: n, plan: &writePlan{}}
		from, to, move := strings.Cut(n, ">")
		c.key = filepath.Join(root, filepath.FromSlash(from))
		if move {
			c.plan = &movePlan{destKey: filepath.Join(root, filepath.FromSlash(to))}
		}
		changes[i] = c
	}
	var out []int
	for _, f := range conflicts(changes) {
		out = append(out, f.Index)
	}
	slices.Sort(out)
	return out
}

// bruteConflicts is the rule conflicts implements, pair by pair: two
// changes conflict when a path of one is a path of the other, or lies
// inside it.
func bruteConflicts(names []string) []int {
	paths := func(n string) []string {
		from, to, move := strings.Cut(n, ">")
		if move {
			return []string{from, to}
		}
		return []string{from}
	}
	within := func(a, b string) bool { return a == b || strings.HasPrefix(a, b+"/") }
	var out []int
	for i, a := range names {
	pairs:
		for j, b := range names {
			if i == j {
				continue
			}
			for _, p := range paths(a) {
				for _, q := range paths(b) {
					if within(p, q) || within(q, p) {
						out = append(out, i)
						break pairs
					}
				}
			}
		}
	}
	return out
}

func TestConflictsFindsEveryPathInsideAnother(t *testing.T) {
	tests := []struct {
		name  string
		paths []string
		want  []int
	}{
		{"a directory and a file in it conflict, with a sibling whose name sorts between them",
			[]string{"d", "d/new", "d.txt"}, []int{0, 1}},
		{"a file, a file under that name and a name with a dash: the first two conflict",
			[]string{"a", "a/b", "a-b"}, []int{0, 1}},
		{"a name with a space sorts between a parent and its child",
			[]string{"a/b", "a b", "a"}, []int{0, 2}},
		{"a name with a dot sorts between a parent and its child",
			[]string{"a.b", "a/b/c", "a"}, []int{1, 2}},
		{"several names between a parent and its deep child",
			[]string{"a", "a b", "a-b", "a.b", "a!", "a/x/y/z"}, []int{0, 5}},
		{"one path twice conflicts", []string{"d.txt", "d", "d.txt"}, []int{0, 2}},
		{"siblings whose names share a prefix do not conflict",
			[]string{"a", "a b", "a-b", "a.b", "ab", "a0"}, nil},
		{"a move into a directory another change deletes",
			[]string{"x>d/new", "d.txt", "d"}, []int{0, 2}},
		{"a move out of a directory another change writes below",
			[]string{"d/f>e", "d.txt", "d/f/g"}, []int{0, 2}},
		{"a move's own two paths do not conflict with each other", []string{"a>a.b", "a-b"}, nil},
	}
	root := filepath.Join(string(filepath.Separator), "ws")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := conflictSet(root, tt.paths)
			if !slices.Equal(got, tt.want) {
				t.Errorf("conflicts(%q) refused %v, want %v", tt.paths, got, tt.want)
			}
			if brute := bruteConflicts(tt.paths); !slices.Equal(brute, tt.want) {
				t.Errorf("the pairwise rule refuses %v, the table %v: fix the table", brute, tt.want)
			}
		})
	}
}

// FuzzConflictsAgreesWithPairwise checks the conflict scan against the
// pairwise rule for any set of paths, built from names whose bytes sort
// on both sides of the separator.
func FuzzConflictsAgreesWithPairwise(f *testing.F) {
	f.Add([]byte("d\nd/new\nd.txt"))
	f.Add([]byte("a\na/b\na-b"))
	f.Add([]byte("a b\na.b\na/b>c\na"))
	f.Add([]byte("x>d/new\nd.txt\nd"))
	root := filepath.Join(string(filepath.Separator), "ws")
	f.Fuzz(func(t *testing.T, data []byte) {
		var names []string
		for line := range strings.SplitSeq(string(data), "\n") {
			ok := true
			for p := range strings.SplitSeq(line, ">") {
				ok = ok && validName(p)
			}
			if ok && strings.Count(line, ">") <= 1 {
				names = append(names, line)
			}
		}
		if got, want := conflictSet(root, names), bruteConflicts(names); !slices.Equal(got, want) {
			t.Errorf("conflicts(%q) refused %v, the pairwise rule %v", names, got, want)
		}
	})
}

// validName reports whether p is a clean relative path, as keys are made
// of: no empty, "." or ".." components.
func validName(p string) bool {
	if p == "" {
		return false
	}
	for c := range strings.SplitSeq(p, "/") {
		if c == "" || c == "." || c == ".." || strings.ContainsRune(c, filepath.Separator) {
			return false
		}
	}
	return true
}

// TestConflictsAgreesWithPairwiseOnManySets is the fuzz property over
// random sets drawn from a small alphabet, so that it runs in every test
// run, not only under -fuzz.
func TestConflictsAgreesWithPairwiseOnManySets(t *testing.T) {
	alphabet := []string{"a", "b", "a b", "a-b", "a.b", "a!", "b.c"}
	root := filepath.Join(string(filepath.Separator), "ws")
	seed := uint64(1)
	next := func(n int) int { // xorshift: reproducible without math/rand
		seed ^= seed << 13
		seed ^= seed >> 7
		seed ^= seed << 17
		return int(seed % uint64(n))
	}
	for range 5000 {
		names := make([]string, 1+next(6))
		for i := range names {
			parts := make([]string, 1+next(3))
			for j := range parts {
				parts[j] = alphabet[next(len(alphabet))]
			}
			names[i] = strings.Join(parts, "/")
			if next(5) == 0 {
				names[i] += ">" + alphabet[next(len(alphabet))]
			}
		}
		if got, want := conflictSet(root, names), bruteConflicts(names); !slices.Equal(got, want) {
			t.Fatalf("conflicts(%q) refused %v, the pairwise rule %v", names, got, want)
		}
	}
}
