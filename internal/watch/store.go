package watch

import "container/list"

// State is what is known of a file at one moment.
type State struct {
	// Version is the file's version token; "" means the file does not
	// exist.
	Version string
	// Text is the file's content as UTF-8 when HasText is set. The hub
	// keeps the slice: callers must not modify it afterwards.
	Text    []byte
	HasText bool
}

// Exists reports whether the state is of an existing file.
func (s State) Exists() bool { return s.Version != "" }

// store remembers the last State of each path, least recently used first
// to go: content beyond maxText bytes is forgotten before versions are,
// and versions beyond maxEntries paths are forgotten last. It is not safe
// for concurrent use; the Hub locks around it.
type store struct {
	maxEntries int
	maxText    int64
	text       int64 // bytes of Text held
	lru        *list.List
	m          map[string]*list.Element
}

type storeEntry struct {
	path  string
	state State
}

func newStore(maxEntries int, maxText int64) *store {
	return &store{maxEntries: maxEntries, maxText: maxText, lru: list.New(), m: map[string]*list.Element{}}
}

func (s *store) get(path string) (State, bool) {
	el, ok := s.m[path]
	if !ok {
		return State{}, false
	}
	s.lru.MoveToFront(el)
	return el.Value.(*storeEntry).state, true
}

// put records st for path. Content larger than the whole budget is not
// kept at all (the version is).
func (s *store) put(path string, st State) {
	if !st.HasText || int64(len(st.Text)) > s.maxText {
		st.Text, st.HasText = nil, false
	}
	if el, ok := s.m[path]; ok {
		e := el.Value.(*storeEntry)
		s.text -= int64(len(e.state.Text))
		e.state = st
		s.lru.MoveToFront(el)
	} else {
		s.m[path] = s.lru.PushFront(&storeEntry{path: path, state: st})
	}
	s.text += int64(len(st.Text))
	for el := s.lru.Back(); s.text > s.maxText && el != nil; el = el.Prev() {
		e := el.Value.(*storeEntry)
		s.text -= int64(len(e.state.Text))
		e.state.Text, e.state.HasText = nil, false
	}
	for s.lru.Len() > s.maxEntries {
		el := s.lru.Back()
		e := el.Value.(*storeEntry)
		s.text -= int64(len(e.state.Text))
		s.lru.Remove(el)
		delete(s.m, e.path)
	}
}

// under returns the paths known to exist at or below dir.
func (s *store) under(dir string) []string {
	var out []string
	for p, el := range s.m {
		if Match(dir, p) && el.Value.(*storeEntry).state.Exists() {
			out = append(out, p)
		}
	}
	return out
}

func (s *store) reset() {
	s.lru.Init()
	clear(s.m)
	s.text = 0
}
