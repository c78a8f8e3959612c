package engine

// withRecorded makes the service call f right after a change set's intent
// record is written, before the set is committed.
func withRecorded(f func(set string)) Option {
	return func(o *options) { o.recorded = f }
}

// withTreeWait makes the service call f whenever a shared holder of the
// tree lock is about to wait for it.
func withTreeWait(f func()) Option {
	return func(o *options) { o.treeWait = f }
}

// withPoint makes the service call f at the named moments of a commit
// (options.point).
func withPoint(f func(name string)) Option {
	return func(o *options) { o.point = f }
}
