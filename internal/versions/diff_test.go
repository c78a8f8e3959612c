package versions_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/hashline/hashline/internal/hashline"
	"github.com/hashline/hashline/internal/versions"
)

// randomDoc makes a short document of lines from a tiny alphabet (so lines
// repeat), with random LF/CRLF endings and maybe no final newline.
func randomDoc(r *rand.Rand) (*hashline.Document, []string) {
	var b strings.Builder
	var lines []string
	n := r.IntN(9)
	for i := range n {
		l := string(rune('a' + r.IntN(3)))
		lines = append(lines, l)
		b.WriteString(l)
		if i < n-1 || r.IntN(2) == 0 {
			b.WriteString([]string{"\n", "\r\n"}[r.IntN(2)])
		}
	}
	return hashline.ParseDocument([]byte(b.String())), lines
}

// lcsLen is the textbook dynamic program, the reference for minimality.
func lcsLen(a, b []string) int {
	dp := make([][]int, len(a)+1)
	for i := range dp {
		dp[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				dp[i][j] = dp[i+1][j+1] + 1
			} else {
				dp[i][j] = max(dp[i+1][j], dp[i][j+1])
			}
		}
	}
	return dp[0][0]
}

// blockDoc turns each letter of letters into a block of size lines, the
// same lines each time the letter appears ("x0".."x<size-1>" for x), so
// long runs repeat: that leads diff libraries to take shortcuts across a
// long shared run, and with blocks of a dozen lines or more the edit
// distance passes lcsExactBound and the diffmatchpatch path answers.
func blockDoc(letters string, size int) (*hashline.Document, []string) {
	var lines []string
	for _, x := range letters {
		for i := range size {
			lines = append(lines, fmt.Sprintf("%c%d", x, i))
		}
	}
	return doc(lines...), lines
}

// randomBlocks is a pair of block documents (blockDoc) of 1 to 8 blocks
// of 13 to 60 lines, and how they were made.
func randomBlocks(r *rand.Rand) (od *hashline.Document, a []string, nd *hashline.Document, b []string, what string) {
	letters := func() string {
		var b strings.Builder
		for range 1 + r.IntN(8) {
			b.WriteByte(byte('a' + r.IntN(3)))
		}
		return b.String()
	}
	size := 13 + r.IntN(48)
	la, lb := letters(), letters()
	od, a = blockDoc(la, size)
	nd, b = blockDoc(lb, size)
	return od, a, nd, b, fmt.Sprintf("%s -> %s in blocks of %d lines", la, lb, size)
}

// checkDiff fails unless hunks, replayed on a, give b, are in order with an
// unchanged line between each two, and keep as many lines as the longest
// common subsequence. It returns that length. what names the case.
func checkDiff(t *testing.T, what string, a, b []string, hunks []versions.Hunk) int {
	t.Helper()
	var got []string
	prev, removed, added := 0, 0, 0
	for k, hk := range hunks {
		if hk.A0 < prev || (k > 0 && hk.A0 == prev) {
			t.Fatalf("%s: hunks out of order or touching: %+v", what, hunks)
		}
		got = append(got, a[prev:hk.A0]...)
		got = append(got, b[hk.B0:hk.B1]...)
		prev = hk.A1
		removed += hk.A1 - hk.A0
		added += hk.B1 - hk.B0
	}
	got = append(got, a[prev:]...)
	if strings.Join(got, ",") != strings.Join(b, ",") {
		t.Fatalf("%s: hunks %+v replay to %q", what, hunks, got)
	}
	l := lcsLen(a, b)
	if keep := len(a) - removed; keep != l || len(b)-added != keep {
		t.Fatalf("%s: hunks %+v keep %d lines, the LCS has %d", what, hunks, keep, l)
	}
	return l
}

func TestDiffIsValidAndMinimal(t *testing.T) {
	t.Run("short documents of a three-line alphabet", func(t *testing.T) {
		r := rand.New(rand.NewPCG(3, 4))
		for range 5000 {
			od, a := randomDoc(r)
			nd, b := randomDoc(r)
			checkDiff(t, fmt.Sprintf("%q -> %q", a, b), a, b, versions.Diff(od, nd))
		}
	})
	t.Run("blocks of repeated runs, many through diffmatchpatch", func(t *testing.T) {
		r := rand.New(rand.NewPCG(5, 6))
		viaDMP := 0
		for range 300 {
			od, a, nd, b, what := randomBlocks(r)
			// A minute: the search finishes, under -race and load too.
			l := checkDiff(t, what, a, b, versions.DiffWithin(od, nd, time.Minute))
			if len(a)+len(b)-2*l >= versions.LCSExactBound {
				viaDMP++
			}
		}
		// The seed must keep exercising the path this case is for.
		if viaDMP < 100 {
			t.Errorf("only %d of 300 pairs reached the diffmatchpatch path", viaDMP)
		}
	})
}

func TestDiffKeepsEveryLineOfRepeatedBlocksThatSurvives(t *testing.T) {
	// cacbca -> bcacc: the longest common subsequence is cacc. In blocks of
	// 60 lines it is 240 lines long; a diff that first split both texts at
	// a long shared run kept only 180 and marked 60 unchanged lines as
	// changed. One line a block is go-udiff's case, 60 diffmatchpatch's.
	for _, tt := range []struct {
		name    string
		size    int
		timeout time.Duration
	}{
		{"one line a block", 1, versions.DiffTimeout},
		{"60 lines a block with Diff's own timeout", 60, versions.DiffTimeout},
		{"60 lines a block with a timeout no search reaches", 60, time.Minute},
	} {
		t.Run(tt.name, func(t *testing.T) {
			od, a := blockDoc("cacbca", tt.size)
			nd, b := blockDoc("bcacc", tt.size)
			what := fmt.Sprintf("cacbca -> bcacc in blocks of %d lines", tt.size)
			if l := checkDiff(t, what, a, b, versions.DiffWithin(od, nd, tt.timeout)); l != 4*tt.size {
				t.Fatalf("%s: the LCS is %d lines, want %d", what, l, 4*tt.size)
			}
		})
	}
}
