package main

import "bytes"

// outcome is how a server took one case.
type outcome int

const (
	right   outcome = iota // the file is the intended result (or, where refusing is right, refused and unchanged)
	refused                // refused with the file unchanged, where applying was right
	corrupt                // anything else: wrong bytes written, or success claimed for a change not made
)

func (o outcome) String() string { return [...]string{"right", "refused", "corrupt"}[o] }

// classify judges a case by the file before the mistaken calls (pre), the
// intended file (want), the file after them (final), and whether each call
// was refused. A call that reports success but leaves the file as it was is
// corrupt, not refused: the model is told that a change it did not get was
// made.
func classify(expect expectation, pre, want, final []byte, refusals []bool) outcome {
	allRefused := len(refusals) > 0
	for _, r := range refusals {
		allRefused = allRefused && r
	}
	switch {
	case expect == expectApply && bytes.Equal(final, want):
		return right
	case allRefused && bytes.Equal(final, pre):
		if expect == expectRefuse {
			return right
		}
		return refused
	default:
		return corrupt
	}
}

// tally counts a class's outcomes on one server.
type tally [3]int

func (t *tally) add(o outcome) { t[o]++ }

// syntaxOutcome is how a server took a case whose mistaken text breaks
// the file's syntax.
type syntaxOutcome int

const (
	silent     syntaxOutcome = iota // the broken text written, and the reply says nothing of it
	flagged                         // the broken text written, and the reply carries diagnostics
	refusedSyn                      // refused with the file unchanged
	otherSyn                        // anything else: the intended file, or other bytes
)

// classifySyntax judges a case of a broken class by the file before the
// mistaken calls (pre), the file with the text as sent (sent), the file
// after them (final), whether each call was refused, and whether any reply
// carried diagnostics.
func classifySyntax(pre, sent, final []byte, refusals []bool, diagnosed bool) syntaxOutcome {
	allRefused := len(refusals) > 0
	for _, r := range refusals {
		allRefused = allRefused && r
	}
	switch {
	case bytes.Equal(final, sent) && diagnosed:
		return flagged
	case bytes.Equal(final, sent):
		return silent
	case allRefused && bytes.Equal(final, pre):
		return refusedSyn
	default:
		return otherSyn
	}
}

// syntaxTally counts a broken class's outcomes on one server.
type syntaxTally [4]int

// right counts the cases where the model is told: the broken text written
// and flagged, or refused with the file unchanged.
func (t *syntaxTally) right() int { return t[flagged] + t[refusedSyn] }

// corrupt counts the rest: the broken text written without a word, or
// some other file.
func (t *syntaxTally) corrupt() int { return t[silent] + t[otherSyn] }
