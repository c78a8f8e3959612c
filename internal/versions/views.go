package versions

import (
	"container/list"
	"slices"
	"sort"
	"sync"
)

// DefaultViewEntries is the Views bound on pairs when none is configured.
const DefaultViewEntries = 100_000

// DefaultViewBytes is the Views bound on bytes when none is configured:
// room for DefaultViewEntries pairs of ordinary agent names and paths, and
// for far fewer of the longest (an agent's name and a path are chosen by
// callers, so entries are counted by their bytes, not only their number).
const DefaultViewBytes = 64 << 20

// ViewEntryOverhead is what a Views counts for one pair besides the bytes
// of its agent, file and versions: about what its list element, map entry
// and record take.
const ViewEntryOverhead = 160

// ViewVersionOverhead is what a Views counts for each version a pair
// remembers besides the bytes of its name and its spans.
const ViewVersionOverhead = 64

// ViewSpanBytes is what a Views counts for each span of shown lines.
const ViewSpanBytes = 16

// DefaultViewDepth is how many versions of one file a Views remembers per
// agent unless WithDepth says otherwise: the one the agent saw last and the
// few before it, which an edit's references may still come from (an agent
// that reads once and then makes edit after edit from those tags, or whose
// own insertion moved the lines it read).
const DefaultViewDepth = 4

// MaxViewSpans bounds the spans of shown lines one version keeps. Lines
// past the bound are forgotten, never guessed: a reference to a forgotten
// line is refused with fresh tags, as one to a line never shown.
const MaxViewSpans = 1024

// ViewStats is a snapshot of a Views' counters.
type ViewStats struct {
	// Entries is the number of (agent, file) pairs remembered now.
	Entries int
	// Versions is the number of versions they remember in all.
	Versions int
	// Bytes is what they count for (see ViewEntryOverhead,
	// ViewVersionOverhead and ViewSpanBytes).
	Bytes int64
	// Evictions counts pairs forgotten to stay within the bounds.
	Evictions uint64
	// MaxEntries and MaxBytes are the bounds.
	MaxEntries int
	MaxBytes   int64
}

// Span is a run of lines, 1-based and inclusive.
type Span struct{ Start, End int }

// Lines is a set of line numbers: sorted spans that neither overlap nor
// touch. A Lines value is never changed once made (Union and Clip return
// new ones), so it may be shared.
type Lines []Span

// Range is the lines start..end; none when end < max(start, 1).
func Range(start, end int) Lines {
	start = max(start, 1)
	if end < start {
		return nil
	}
	return Lines{{start, end}}
}

// LinesOf is the set of the given line numbers (numbers below 1 are left
// out).
func LinesOf(nums ...int) Lines {
	s := slices.Clone(nums)
	slices.Sort(s)
	var out Lines
	for _, n := range s {
		if n < 1 {
			continue
		}
		if k := len(out) - 1; k >= 0 && n <= out[k].End+1 {
			out[k].End = max(out[k].End, n)
			continue
		}
		out = append(out, Span{n, n})
	}
	return out
}

// Has reports whether line n is in l.
func (l Lines) Has(n int) bool {
	i := sort.Search(len(l), func(i int) bool { return l[i].End >= n })
	return i < len(l) && l[i].Start <= n
}

// Union is the lines in l or o.
func (l Lines) Union(o Lines) Lines {
	if len(o) == 0 {
		return l
	}
	if len(l) == 0 {
		return o
	}
	return merge(append(slices.Clone(l), o...))
}

// merge sorts spans and joins those that overlap or touch, in place.
func merge(all []Span) Lines {
	if len(all) == 0 {
		return nil
	}
	slices.SortFunc(all, func(a, b Span) int { return a.Start - b.Start })
	out := all[:1]
	for _, s := range all[1:] {
		if k := len(out) - 1; s.Start <= out[k].End+1 {
			out[k].End = max(out[k].End, s.End)
			continue
		}
		out = append(out, s)
	}
	return slices.Clip(out)
}

// Clip is the lines of l within start..end.
func (l Lines) Clip(start, end int) Lines {
	var out Lines
	for _, s := range l {
		a, b := max(s.Start, start), min(s.End, end)
		if a <= b {
			out = append(out, Span{a, b})
		}
	}
	return out
}

// Seen is one version of a file an agent was shown, and which of its lines.
type Seen struct {
	Version string
	// Lines are the line numbers of Version the agent was shown, or that
	// stand at the number it was shown them at in a version before
	// (Carry).
	Lines Lines
	// Moved are lines of Version the agent was shown in a version before
	// at another number, and told where they went (the reply of its own
	// edit): a reference may name one by its new number, or by its old
	// number read against that older version.
	Moved Lines
}

// Has reports whether line n counts as shown: in Lines or Moved.
func (s Seen) Has(n int) bool { return s.Lines.Has(n) || s.Moved.Has(n) }

// Views remembers, for each (agent, file), the last few versions of the
// file the agent was shown and which lines of each, forgetting the least
// recently used pairs past a bound on their number and one on their bytes.
// A forgotten pair behaves as if the agent had never seen the file. It is
// safe for concurrent use.
type Views struct {
	mu        sync.Mutex
	max       int
	maxBytes  int64
	depth     int
	bytes     int64
	versions  int
	ll        list.List // of *viewEntry, most recently used at the front
	m         map[viewKey]*list.Element
	evictions uint64
	tick      uint64 // orders the versions of a pair by their last use
	// held counts, per version, the pairs that remember it (Holds).
	held map[string]int
	// agents lists, per file, the agents with a pair for it, so that Move
	// and Forget touch only the file's pairs.
	agents map[string]map[string]struct{}
}

type viewKey struct{ agent, file string }

type viewEntry struct {
	key viewKey
	// seen are the remembered versions, the most recently shown first.
	seen []seenVersion
}

type seenVersion struct {
	Seen
	// used is when the version was last shown or rebased from: the
	// version least recently used is the one forgotten past the depth.
	used uint64
}

func (s *seenVersion) size() int64 {
	return int64(len(s.Version) + ViewVersionOverhead + ViewSpanBytes*(len(s.Lines)+len(s.Moved)))
}

func (e *viewEntry) size() int64 {
	n := int64(len(e.key.agent) + len(e.key.file) + ViewEntryOverhead)
	for i := range e.seen {
		n += e.seen[i].size()
	}
	return n
}

// ViewsOption configures NewViews.
type ViewsOption func(*Views)

// WithDepth sets how many versions each pair remembers (at least 1;
// DefaultViewDepth when not given).
func WithDepth(n int) ViewsOption { return func(v *Views) { v.depth = max(n, 1) } }

// NewViews returns a Views holding at most maxEntries pairs (at least 1)
// that count for at most maxBytes together (<= 0 means DefaultViewBytes).
// The pair seen last is always kept, whatever its size.
func NewViews(maxEntries int, maxBytes int64, opts ...ViewsOption) *Views {
	if maxBytes <= 0 {
		maxBytes = DefaultViewBytes
	}
	v := &Views{max: max(maxEntries, 1), maxBytes: maxBytes, depth: DefaultViewDepth, m: make(map[viewKey]*list.Element), held: make(map[string]int),
		agents: make(map[string]map[string]struct{})}
	for _, o := range opts {
		o(v)
	}
	return v
}

// See records that agent was shown the lines of seen of file. A version
// already remembered becomes the last seen and gains the lines; past the
// depth, the version least recently shown or used is forgotten.
func (v *Views) See(agent, file string, seen Seen) {
	version := seen.Version
	if version == "" {
		return
	}
	k := viewKey{agent, file}
	v.mu.Lock()
	defer v.mu.Unlock()
	v.tick++
	var e *viewEntry
	if el, ok := v.m[k]; ok {
		e = el.Value.(*viewEntry)
		v.ll.MoveToFront(el)
	} else {
		e = &viewEntry{key: k}
		v.m[k] = v.ll.PushFront(e)
		v.addAgent(k)
		v.bytes += e.size()
	}
	sv := seenVersion{Seen: Seen{Version: version}}
	for i := range e.seen {
		if e.seen[i].Version == version {
			sv.Seen = e.seen[i].Seen
			v.bytes -= e.seen[i].size()
			v.versions--
			v.release(version)
			e.seen = slices.Delete(e.seen, i, i+1)
			break
		}
	}
	sv.Lines, sv.Moved, sv.used = addLines(sv.Lines, seen.Lines), addLines(sv.Moved, seen.Moved), v.tick
	e.seen = slices.Insert(e.seen, 0, sv)
	v.bytes += sv.size()
	v.versions++
	v.held[version]++
	for len(e.seen) > v.depth {
		// The least recently used version other than the one just seen.
		j := 1
		for i := 2; i < len(e.seen); i++ {
			if e.seen[i].used < e.seen[j].used {
				j = i
			}
		}
		v.bytes -= e.seen[j].size()
		v.versions--
		v.release(e.seen[j].Version)
		e.seen = slices.Delete(e.seen, j, j+1)
	}
	for v.ll.Len() > 1 && (v.ll.Len() > v.max || v.bytes > v.maxBytes) {
		v.drop(v.ll.Back())
		v.evictions++
	}
}

// drop forgets the pair of el. v.mu is held.
func (v *Views) drop(el *list.Element) {
	old := el.Value.(*viewEntry)
	v.ll.Remove(el)
	delete(v.m, old.key)
	v.removeAgent(old.key)
	v.bytes -= old.size()
	v.versions -= len(old.seen)
	for i := range old.seen {
		v.release(old.seen[i].Version)
	}
}

func (v *Views) addAgent(k viewKey) {
	a := v.agents[k.file]
	if a == nil {
		a = make(map[string]struct{})
		v.agents[k.file] = a
	}
	a[k.agent] = struct{}{}
}

func (v *Views) removeAgent(k viewKey) {
	if a := v.agents[k.file]; a != nil {
		delete(a, k.agent)
		if len(a) == 0 {
			delete(v.agents, k.file)
		}
	}
}

// Move gives every agent's view of file from to file to, as when the file
// was renamed: the versions and lines an agent saw there are what it saw
// of the file now at to, so its references keep working after the move.
// Views of a file that was at to (replaced by the move) are forgotten.
func (v *Views) Move(from, to string) {
	if from == to {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	v.forgetLocked(to)
	for agent := range v.agents[from] {
		el := v.m[viewKey{agent, from}]
		e := el.Value.(*viewEntry)
		v.bytes -= e.size()
		delete(v.m, e.key)
		v.removeAgent(e.key)
		e.key = viewKey{agent, to}
		v.m[e.key] = el
		v.addAgent(e.key)
		v.bytes += e.size()
	}
}

// Forget drops every agent's view of file, as when it was deleted.
func (v *Views) Forget(file string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.forgetLocked(file)
}

func (v *Views) forgetLocked(file string) {
	for agent := range v.agents[file] {
		v.drop(v.m[viewKey{agent, file}])
	}
}

// release drops one pair's hold on version.
func (v *Views) release(version string) {
	if v.held[version]--; v.held[version] <= 0 {
		delete(v.held, version)
	}
}

// Holds reports whether some pair remembers version: whether an agent may
// still make references against it.
func (v *Views) Holds(version string) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.held[version] > 0
}

// addLines is old with lines added, within MaxViewSpans: when the union
// is over the bound, the older lines are forgotten and the newer kept (as
// many as fit).
func addLines(old, lines Lines) Lines {
	u := old.Union(lines)
	if len(u) <= MaxViewSpans {
		return u
	}
	if len(lines) > MaxViewSpans {
		return slices.Clone(lines[:MaxViewSpans])
	}
	return lines
}

// Use records that an edit of agent's was read against version of file
// (rebased from it), so that it is kept over versions shown since but not
// used. A version not remembered is left so.
func (v *Views) Use(agent, file, version string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	el, ok := v.m[viewKey{agent, file}]
	if !ok {
		return
	}
	v.ll.MoveToFront(el)
	e := el.Value.(*viewEntry)
	for i := range e.seen {
		if e.seen[i].Version == version {
			v.tick++
			e.seen[i].used = v.tick
		}
	}
}

// Seen returns the version of file that agent saw last, and whether it saw
// any (and it is still remembered).
func (v *Views) Seen(agent, file string) (string, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	el, ok := v.m[viewKey{agent, file}]
	if !ok {
		return "", false
	}
	v.ll.MoveToFront(el)
	return el.Value.(*viewEntry).seen[0].Version, true
}

// History returns the versions of file agent was shown that are still
// remembered, the most recently shown first; none if it saw none.
func (v *Views) History(agent, file string) []Seen {
	v.mu.Lock()
	defer v.mu.Unlock()
	el, ok := v.m[viewKey{agent, file}]
	if !ok {
		return nil
	}
	v.ll.MoveToFront(el)
	e := el.Value.(*viewEntry)
	out := make([]Seen, len(e.seen))
	for i := range e.seen {
		out[i] = e.seen[i].Seen // Lines are never changed in place
	}
	return out
}

// Stats returns the current counters.
func (v *Views) Stats() ViewStats {
	v.mu.Lock()
	defer v.mu.Unlock()
	return ViewStats{Entries: v.ll.Len(), Versions: v.versions, Bytes: v.bytes, Evictions: v.evictions, MaxEntries: v.max, MaxBytes: v.maxBytes}
}
