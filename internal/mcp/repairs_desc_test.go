package mcp

import "testing"

// The repair rules share edit_file's description with everything else a
// model must know; they stay terse.
func TestRepairsDescriptionIsTerse(t *testing.T) {
	if n := len(repairsDescription); n > 400 {
		t.Errorf("repairsDescription is %d bytes, want at most 400", n)
	}
}
