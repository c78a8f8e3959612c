package workspace

// withPreallocate replaces allocate for the writes of one workspace, so a
// test can see which of them reserve their blocks first.
func withPreallocate(f func(fd uintptr, n int) bool) Option {
	return func(o *options) { o.preallocate = f }
}

// withBeforeOpen makes ReadFile call f between its Lstat and its open.
func withBeforeOpen(f func(target string)) Option {
	return func(o *options) { o.beforeOpen = f }
}

// withBeforeRename makes WriteFile call f once its temp file is complete,
// before the rename; an error from f fails the write at that step.
func withBeforeRename(f func(target string) error) Option {
	return func(o *options) { o.beforeRename = f }
}
