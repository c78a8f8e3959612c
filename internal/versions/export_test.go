package versions

import "time"

// SetDiffTimeout changes the diff search bound for a test and returns the
// function that restores it.
func SetDiffTimeout(d time.Duration) (restore func()) {
	old := diffTimeout
	diffTimeout = d
	return func() { diffTimeout = old }
}
