package procs

import (
	"runtime"
	"testing"
)

// reset undoes Serial and Widen at the end of a test.
func reset(t *testing.T) {
	t.Helper()
	before := runtime.GOMAXPROCS(0)
	t.Cleanup(func() {
		mu.Lock()
		wide, widened = 0, 0
		mu.Unlock()
		runtime.GOMAXPROCS(before)
	})
}

func TestSerialAndWiden(t *testing.T) {
	reset(t)
	t.Setenv("GOMAXPROCS", "")
	runtime.GOMAXPROCS(4)
	if !Serial() {
		t.Fatal("Serial did nothing with GOMAXPROCS unset")
	}
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Fatalf("after Serial: GOMAXPROCS = %d, want 1", got)
	}
	// Overlapping calls: wide until the last narrows; a second call of the
	// same narrow counts once.
	narrowA := Widen()
	narrowB := Widen()
	if got := runtime.GOMAXPROCS(0); got != 4 {
		t.Fatalf("widened: GOMAXPROCS = %d, want 4", got)
	}
	narrowA()
	narrowA()
	if got := runtime.GOMAXPROCS(0); got != 4 {
		t.Fatalf("one of two narrowed (twice): GOMAXPROCS = %d, want 4", got)
	}
	narrowB()
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Fatalf("both narrowed: GOMAXPROCS = %d, want 1", got)
	}
	// Serial again keeps the width it first saw, not 1.
	Serial()
	defer Widen()()
	if got := runtime.GOMAXPROCS(0); got != 4 {
		t.Fatalf("Serial twice, then Widen: GOMAXPROCS = %d, want 4", got)
	}
}

func TestSerialLeavesTheOperatorsSettingAlone(t *testing.T) {
	reset(t)
	t.Setenv("GOMAXPROCS", "3")
	runtime.GOMAXPROCS(3)
	if Serial() {
		t.Fatal("Serial lowered GOMAXPROCS although the environment sets it")
	}
	if got := runtime.GOMAXPROCS(0); got != 3 {
		t.Fatalf("GOMAXPROCS = %d, want 3", got)
	}
	Widen()()
	if got := runtime.GOMAXPROCS(0); got != 3 {
		t.Fatalf("after Widen without Serial: GOMAXPROCS = %d, want 3", got)
	}
}
