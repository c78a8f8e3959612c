// Package section writes one generator's section of BENCHMARKS.md: the
// text between its begin and end markers, leaving the rest of the file as
// it is.
package section

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// Write replaces the text from begin to end (markers included) in file
// with sec, which holds both markers; appends sec when file has no such
// section; and creates file when it does not exist. A section that is
// opened but never closed is an error: guessing where it ends could lose
// what follows.
func Write(file, begin, end, sec string) error {
	old, err := os.ReadFile(file)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	s := string(old)
	i, j := strings.Index(s, begin), strings.Index(s, end)
	switch {
	case i >= 0 && j > i:
		s = s[:i] + strings.TrimSuffix(sec, "\n") + s[j+len(end):]
	case i >= 0:
		return fmt.Errorf("%s: %q opens a section but %q never closes it; fix the file by hand", file, begin, end)
	case len(s) > 0:
		s = strings.TrimRight(s, "\n") + "\n\n" + sec
	default:
		s = sec
	}
	return os.WriteFile(file, []byte(s), 0o644)
}
