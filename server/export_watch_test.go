package server

// WatchState reports how many Watch streams are subscribed and whether the
// file-system watcher runs, so tests can check that ending the streams
// stops everything.
func (s *Service) WatchState() (subscribers int, watching bool) {
	s.watch.mu.Lock()
	defer s.watch.mu.Unlock()
	return s.watch.subs, s.watch.tree != nil
}
