package workspace

// withDirSync makes the workspace sync directories with fn instead of
// fsync, so that tests can watch, hold back and fail the syncs.
func withDirSync(fn func(dir string) error) Option {
	return func(o *options) { o.dirSync = fn }
}

// syncCallers is the number of calls waiting in, or running, a sync of dir.
func (w *Workspace) syncCallers(dir string) int {
	w.dirs.mu.Lock()
	defer w.dirs.mu.Unlock()
	if g := w.dirs.groups[dir]; g != nil {
		return g.callers
	}
	return 0
}
