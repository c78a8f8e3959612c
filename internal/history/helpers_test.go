package history

import "github.com/hashline/hashline/internal/versions"

func hk(a0, a1, b0, b1 int) versions.Hunk { return versions.Hunk{A0: a0, A1: a1, B0: b0, B1: b1} }
