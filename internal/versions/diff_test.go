package versions_test

import (
	"math/rand/v2"
	"strings"
	"testing"

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

func TestDiffIsValidAndMinimal(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 5000 {
		od, a := randomDoc(r)
		nd, b := randomDoc(r)
		hunks := versions.Diff(od, nd)
		var got []string
		prev, removed, added := 0, 0, 0
		for k, hk := range hunks {
			if hk.A0 < prev || (k > 0 && hk.A0 == prev) {
				t.Fatalf("%q -> %q: hunks out of order or touching: %+v", a, b, hunks)
			}
			got = append(got, a[prev:hk.A0]...)
			got = append(got, b[hk.B0:hk.B1]...)
			prev = hk.A1
			removed += hk.A1 - hk.A0
			added += hk.B1 - hk.B0
		}
		got = append(got, a[prev:]...)
		if strings.Join(got, ",") != strings.Join(b, ",") {
			t.Fatalf("%q -> %q: hunks %+v replay to %q", a, b, hunks, got)
		}
		if keep := len(a) - removed; keep != lcsLen(a, b) || len(b)-added != keep {
			t.Fatalf("%q -> %q: hunks %+v keep %d lines, the LCS has %d", a, b, hunks, keep, lcsLen(a, b))
		}
	}
}

func TestDiffComparesContentNotEndings(t *testing.T) {
	old := hashline.ParseDocument([]byte("a\r\nb\nc"))
	cur := hashline.ParseDocument([]byte("\xef\xbb\xbfa\nb\r\nc\n"))
	if hunks := versions.Diff(old, cur); len(hunks) != 0 {
		t.Errorf("endings, BOM and final newline alone gave hunks %+v", hunks)
	}
}
