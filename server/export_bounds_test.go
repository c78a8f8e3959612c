package server

import "github.com/hashline/hashline/internal/grep"

// WithGrepSearched makes the service call f when the search of a Grep has
// ended (before its results are all sent), with what it scanned and why it
// ended.
func WithGrepSearched(f func(grep.Summary, error)) Option {
	return func(o *options) { o.grepSearched = f }
}

// GrepQueueLen is how many files a Grep's send queue holds at most.
const GrepQueueLen = grepQueueLen

// WithGrepSearchBytes sets the bound of each Grep's own on what it holds
// (grep.Options.MaxHeldBytes).
func WithGrepSearchBytes(n int64) Option {
	return func(o *options) { o.grepSearchBytes = n }
}
