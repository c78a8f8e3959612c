package syntax

import (
	"errors"
	"fmt"
	"time"
)

// parseFunc parses src whole and returns its syntax errors, positioned in
// src.
type parseFunc func(src []byte) []Diagnostic

var errTimeout = errors.New("the parser ran out of time")

// guard runs parse on a goroutine of its own so that a parser that panics
// or runs past timeout fails the check, never the edit. A parse that runs
// too long is left to finish in the background: none of the parsers here
// takes a context, and all of them end on any input (the size bound keeps
// that end near).
func guard(timeout time.Duration, parse func() []Diagnostic) ([]Diagnostic, error) {
	type result struct {
		diags []Diagnostic
		err   error
	}
	done := make(chan result, 1)
	go func() {
		defer func() {
			if v := recover(); v != nil {
				done <- result{err: fmt.Errorf("the parser failed: %v", v)}
			}
		}()
		done <- result{diags: parse()}
	}()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case r := <-done:
		return r.diags, r.err
	case <-t.C:
		return nil, errTimeout
	}
}
