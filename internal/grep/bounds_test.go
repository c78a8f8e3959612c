package grep

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestPatternProgramIsBounded(t *testing.T) {
	// Each "[^x]{1000}" is a thousand instructions for ten bytes.
	var alts []string
	for i := range 70 {
		alts = append(alts, "[^"+string(rune('a'+i%26))+"]{1000}")
	}
	tests := []struct {
		name    string
		pattern string
		ok      bool
	}{
		{"a counted repetition people write compiles", `.{1,1000}foo`, true},
		{"a long literal compiles", strings.Repeat("x", 16<<10), true},
		{"a short pattern with a huge program is refused", strings.Join(alts, "|"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := compile(Options{Pattern: tt.pattern})
			if tt.ok {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, ErrBadPattern) || !strings.Contains(err.Error(), "65536") {
				t.Fatalf("err = %v, want ErrBadPattern naming the limit", err)
			}
		})
	}
}

func TestGlobBraceExpansionsAreBounded(t *testing.T) {
	tests := []struct {
		name string
		glob string
		want int
	}{
		{"a glob without groups is one pattern", "src/**/*.go", 1},
		{"alternatives add up", "*.{go,mod,sum}", 3},
		{"groups in sequence multiply", "{a,b}/{c,d,e}.go", 6},
		{"nested groups add into their alternative", "{a,{b,c}}x", 3},
		{"braces in brackets and escaped braces are not groups", `[{,}]\{a,b\}`, 1},
		{"a chain of groups saturates past the limit", strings.Repeat("{a,a}", 40), MaxGlobAlternatives + 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := braceExpansions(tt.glob); got != tt.want {
				t.Errorf("braceExpansions(%q) = %d, want %d", tt.glob, got, tt.want)
			}
		})
	}
	t.Run("a glob over the limit is refused before any name is matched", func(t *testing.T) {
		dir := t.TempDir()
		writeTree(t, dir, map[string]string{"a.txt": "x\n"})
		// Matching a name against this would try 2^20 combinations.
		_, _, err := collect(t, rootFS(t, dir), Options{Pattern: "x", ExcludeGlobs: []string{strings.Repeat("{a,a}", 20) + "z"}})
		if !errors.Is(err, ErrBadPattern) || !strings.Contains(err.Error(), "256") {
			t.Fatalf("err = %v, want ErrBadPattern naming the limit", err)
		}
	})
	t.Run("a glob at the limit works", func(t *testing.T) {
		dir := t.TempDir()
		writeTree(t, dir, map[string]string{"ab.txt": "x\n", "c.txt": "x\n"})
		files, _, err := collect(t, rootFS(t, dir), Options{Pattern: "x", Globs: []string{strings.Repeat("{a,b}", 8) + ".txt", "a*"}})
		if err != nil || len(files) != 1 || files[0].Path != "ab.txt" {
			t.Fatalf("files %v, err %v; want ab.txt", paths(files), err)
		}
	})
}

// The reader that lets a long line's regexp run be stopped must not change
// what matches.
func TestLineReaderMatchesLikeBytes(t *testing.T) {
	patterns := []string{`^a`, `b$`, `\bab\b`, `a.c`, `(?i)é`, `^$`, `\xff`, `[^a]{3}`, `.`, `\B`}
	alphabet := []string{"a", "b", "c", " ", "é", "\xff", "\xc3", "\t"}
	r := rand.New(rand.NewPCG(1, 2))
	for _, p := range patterns {
		re := regexp.MustCompile(p)
		for range 300 {
			var b strings.Builder
			for range r.IntN(12) {
				b.WriteString(alphabet[r.IntN(len(alphabet))])
			}
			line := []byte(b.String())
			want := re.Match(line)
			got := re.MatchReader(&lineReader{ctx: context.Background(), b: line, every: 1 + r.IntN(3)})
			if got != want {
				t.Fatalf("%q on %q: reader %v, bytes %v", p, line, got, want)
			}
		}
	}
}

func TestSpansOfACostlyLineCoverItsStart(t *testing.T) {
	m, err := compile(Options{Pattern: "a"})
	if err != nil {
		t.Fatal(err)
	}
	m.cost = spanWork / 10 // as if the program were huge
	got := m.spans([]byte(strings.Repeat("a", 100)))
	if len(got) != 10 || got[9] != (Span{9, 10}) {
		t.Errorf("spans %v, want the 10 in the first 10 bytes", got)
	}
}

// tripCtx cancels itself on the n-th call of its Err: a cancellation at a
// point the code under test reaches, not at a time.
type tripCtx struct {
	context.Context
	left atomic.Int32
	once sync.Once
	done chan struct{}
}

func newTripCtx(n int32) *tripCtx {
	c := &tripCtx{Context: context.Background(), done: make(chan struct{})}
	c.left.Store(n)
	return c
}

func (c *tripCtx) Done() <-chan struct{} { return c.done }

func (c *tripCtx) Err() error {
	if c.left.Add(-1) > 0 {
		return nil
	}
	c.once.Do(func() { close(c.done) })
	return context.Canceled
}

// A search cancelled while the regexp works through a large file stops
// inside the file, not after it. The file takes the regexp minutes: each of
// its long lines costs a program of 25,000 instructions per byte.
func TestCancelStopsInsideAFile(t *testing.T) {
	var alts []string
	for c := 'a'; c <= 'z'; c++ {
		if c != 'b' {
			alts = append(alts, "[^"+string(c)+"]{1000}")
		}
	}
	// \pN is no literal the prefilter could skip lines by, and no line
	// has a digit: every line runs the whole regexp, and none matches.
	pattern := "(?:" + strings.Join(alts, "|") + `)\pN`
	line := strings.Repeat("b", 4095) + "\n"
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "big.txt"), []byte(strings.Repeat(line, 2000)), 0o644); err != nil {
		t.Fatal(err)
	}
	fsys := rootFS(t, dir)
	// The third check of ctx is the first one inside the file: the search
	// checks before it starts and before it reads the file.
	ctx := newTripCtx(3)
	done := make(chan error, 1)
	go func() {
		_, err := Search(ctx, fsys, Options{Pattern: pattern, Path: "big.txt"}, func(File) error { return nil })
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the search went on through the file after it was cancelled")
	}
}
