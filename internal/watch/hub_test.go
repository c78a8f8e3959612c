package watch

import (
	"fmt"
	"math"
	"reflect"
	"runtime"
	"sync"
	"testing"
	"time"
)

func TestMatch(t *testing.T) {
	for _, tc := range []struct {
		prefix, path string
		want         bool
	}{
		{"", "a/b.txt", true},
		{".", "a/b.txt", true},
		{"a", "a", true},
		{"a", "a/x", true},
		{"a", "a/x/y", true},
		{"a", "ab/x", false},
		{"a", "ab", false},
		{"a/b.txt", "a/b.txt", true},
		{"a/b.txt", "a/b.txt2", false},
		{"a/b", "a", false},
	} {
		t.Run(fmt.Sprintf("%q matches %q: %v", tc.prefix, tc.path, tc.want), func(t *testing.T) {
			if got := Match(tc.prefix, tc.path); got != tc.want {
				t.Errorf("Match(%q, %q) = %v", tc.prefix, tc.path, got)
			}
		})
	}
}

func text(version, content string) State {
	return State{Version: version, Text: []byte(content), HasText: true}
}

func ptr[T any](v T) *T { return &v }

// drain takes every queued event.
func drain(s *Subscription) []Event {
	var out []Event
	for {
		ev, ok := s.Next()
		if !ok {
			return out
		}
		ev.Time = time.Time{}
		out = append(out, ev)
	}
}

func TestPublish(t *testing.T) {
	for _, tc := range []struct {
		name    string
		changes []Change
		want    []Event
	}{
		{
			name: "an edit with known old content is modified with ranges",
			changes: []Change{
				{Path: "f", Agent: "x", Old: ptr(text("v1", "a\nb\n")), New: text("v2", "a\nB\n")},
			},
			want: []Event{{Path: "f", Kind: Modified, Agent: "x", OldVersion: "v1", NewVersion: "v2", Changed: []Range{{2, 1, 2, 1}}}},
		},
		{
			name: "a created file has all new lines",
			changes: []Change{
				{Path: "f", Agent: "x", Old: &State{}, New: text("v1", "a\n")},
			},
			want: []Event{{Path: "f", Kind: Created, Agent: "x", NewVersion: "v1", Changed: []Range{{0, 0, 1, 1}}}},
		},
		{
			name: "the watcher seeing the server's own write again publishes nothing",
			changes: []Change{
				{Path: "f", Agent: "x", Old: ptr(text("v1", "a\n")), New: text("v2", "b\n")},
				{Path: "f", External: true, New: text("v2", "b\n")},
			},
			want: []Event{{Path: "f", Kind: Modified, Agent: "x", OldVersion: "v1", NewVersion: "v2", Changed: []Range{{1, 1, 1, 1}}}},
		},
		{
			name: "an external change after a known one has ranges from the remembered content",
			changes: []Change{
				{Path: "f", Agent: "x", Old: ptr(text("v1", "a\n")), New: text("v2", "b\n")},
				{Path: "f", External: true, New: text("v3", "b\nc\n")},
			},
			want: []Event{
				{Path: "f", Kind: Modified, Agent: "x", OldVersion: "v1", NewVersion: "v2", Changed: []Range{{1, 1, 1, 1}}},
				{Path: "f", Kind: Modified, External: true, OldVersion: "v2", NewVersion: "v3", Changed: []Range{{1, 0, 2, 1}}},
			},
		},
		{
			name: "an external change of an unknown file has no old version and no ranges",
			changes: []Change{
				{Path: "f", External: true, New: text("v1", "a\n")},
			},
			want: []Event{{Path: "f", Kind: Modified, External: true, NewVersion: "v1"}},
		},
		{
			name: "an unknown file seen to appear is created",
			changes: []Change{
				{Path: "f", External: true, New: text("v1", "a\n"), Created: true},
			},
			want: []Event{{Path: "f", Kind: Created, External: true, NewVersion: "v1"}},
		},
		{
			name: "an unknown file that came and went is not reported",
			changes: []Change{
				{Path: "f", External: true, New: State{}, Created: true},
			},
		},
		{
			name: "a deleted known file has its old lines as a range",
			changes: []Change{
				{Path: "f", Agent: "x", Old: &State{}, New: text("v1", "a\nb\n")},
				{Path: "f", External: true, New: State{}},
			},
			want: []Event{
				{Path: "f", Kind: Created, Agent: "x", NewVersion: "v1", Changed: []Range{{0, 0, 1, 2}}},
				{Path: "f", Kind: Deleted, External: true, OldVersion: "v1", Changed: []Range{{1, 2, 0, 0}}},
			},
		},
		{
			name: "a server edit over an unreported external change reports the external change first",
			changes: []Change{
				{Path: "f", Agent: "x", Old: ptr(text("v1", "a\n")), New: text("v2", "b\n")},
				// v2 -> v3 happened outside; the server read v3 and wrote v4.
				{Path: "f", Agent: "y", Old: ptr(text("v3", "b\nc\n")), New: text("v4", "b\nC\n")},
			},
			want: []Event{
				{Path: "f", Kind: Modified, Agent: "x", OldVersion: "v1", NewVersion: "v2", Changed: []Range{{1, 1, 1, 1}}},
				{Path: "f", Kind: Modified, External: true, OldVersion: "v2", NewVersion: "v3", Changed: []Range{{1, 0, 2, 1}}},
				{Path: "f", Kind: Modified, Agent: "y", OldVersion: "v3", NewVersion: "v4", Changed: []Range{{2, 1, 2, 1}}},
			},
		},
		{
			name: "a binary side has no ranges",
			changes: []Change{
				{Path: "f", Agent: "x", Old: &State{Version: "v1"}, New: text("v2", "a\n")},
			},
			want: []Event{{Path: "f", Kind: Modified, Agent: "x", OldVersion: "v1", NewVersion: "v2"}},
		},
		{
			name: "a change's id is carried by its event, not by the unreported change before it",
			changes: []Change{
				{Path: "f", Agent: "x", Old: ptr(text("v1", "a\n")), New: text("v2", "b\n"), ChangeID: "c1-0000000a"},
				{Path: "f", External: true, New: text("v3", "c\n"), ChangeID: "c2-0000000a"},
				{Path: "f", Agent: "y", Old: ptr(text("v4", "d\n")), New: text("v5", "e\n"), ChangeID: "c4-0000000a"},
				{Path: "g", From: "f", Agent: "y", Old: ptr(text("v5", "e\n")), New: text("v5", "e\n"), ChangeID: "c5-0000000a"},
			},
			want: []Event{
				{Path: "f", Kind: Modified, Agent: "x", OldVersion: "v1", NewVersion: "v2", Changed: []Range{{1, 1, 1, 1}}, ChangeID: "c1-0000000a"},
				{Path: "f", Kind: Modified, External: true, OldVersion: "v2", NewVersion: "v3", Changed: []Range{{1, 1, 1, 1}}, ChangeID: "c2-0000000a"},
				{Path: "f", Kind: Modified, External: true, OldVersion: "v3", NewVersion: "v4", Changed: []Range{{1, 1, 1, 1}}},
				{Path: "f", Kind: Modified, Agent: "y", OldVersion: "v4", NewVersion: "v5", Changed: []Range{{1, 1, 1, 1}}, ChangeID: "c4-0000000a"},
				{Path: "g", From: "f", Kind: Moved, Agent: "y", OldVersion: "v5", NewVersion: "v5", Changed: []Range{}, ChangeID: "c5-0000000a"},
			},
		},
		{
			name: "only the version changed: ranges known and empty",
			changes: []Change{
				{Path: "f", Agent: "x", Old: ptr(text("v1", "a\n")), New: text("v2", "a\n")},
			},
			want: []Event{{Path: "f", Kind: Modified, Agent: "x", OldVersion: "v1", NewVersion: "v2", Changed: []Range{}}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := NewHub()
			s, err := h.Subscribe("")
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			for _, c := range tc.changes {
				h.Publish(c)
			}
			got := drain(s)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("events:\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestSubscriptionPrefixes(t *testing.T) {
	h := NewHub()
	dir, _ := h.Subscribe("a")
	file, _ := h.Subscribe("a/b.txt")
	all, _ := h.Subscribe("")
	for _, p := range []string{"a/b.txt", "a/c/d.txt", "ab/x.txt", "a"} {
		h.Publish(Change{Path: p, Agent: "x", Old: &State{}, New: text("v", "x\n")})
	}
	paths := func(s *Subscription) []string {
		var out []string
		for _, ev := range drain(s) {
			out = append(out, ev.Path)
		}
		return out
	}
	for _, tc := range []struct {
		name string
		s    *Subscription
		want []string
	}{
		{"a directory prefix gets what is under it, not its siblings sharing a prefix", dir, []string{"a/b.txt", "a/c/d.txt", "a"}},
		{"a file prefix gets the file only", file, []string{"a/b.txt"}},
		{"the empty prefix gets everything", all, []string{"a/b.txt", "a/c/d.txt", "ab/x.txt", "a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := paths(tc.s); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestSlowSubscriberLosesOldestAndIsTold(t *testing.T) {
	h := NewHub(WithBuffer(4))
	slow, _ := h.Subscribe("")
	fast, _ := h.Subscribe("")
	var fastGot []Event
	for i := range 10 {
		h.Publish(Change{Path: "f", Agent: "x", Old: &State{Version: fmt.Sprint("v", i)}, New: State{Version: fmt.Sprint("v", i+1)}})
		fastGot = append(fastGot, drain(fast)...)
	}
	if len(fastGot) != 10 {
		t.Fatalf("a subscriber that keeps up got %d events, want 10", len(fastGot))
	}
	got := drain(slow)
	if len(got) != 4 {
		t.Fatalf("slow subscriber got %d events, want the 4 its buffer holds", len(got))
	}
	if got[0].Dropped != 6 || got[0].NewVersion != "v7" {
		t.Errorf("first event after the loss: dropped %d, new version %s; want 6 dropped and the newest 4 events kept (v7..v10)", got[0].Dropped, got[0].NewVersion)
	}
	for _, ev := range got[1:] {
		if ev.Dropped != 0 {
			t.Errorf("event %s: dropped %d, want 0 after the count was reported", ev.NewVersion, ev.Dropped)
		}
	}
}

// change is the i-th change of path f: version i to i+1, no content.
func change(path string, i int) Change {
	return Change{Path: path, Agent: "x", Old: &State{Version: fmt.Sprint("v", i)}, New: State{Version: fmt.Sprint("v", i+1)}}
}

func TestPublishNeverBlocksOnStalledSubscribers(t *testing.T) {
	const subs, events, buffer = 1000, 10000, 64
	h := NewHub(WithBuffer(buffer))
	stalled := make([]*Subscription, subs)
	for i := range stalled {
		stalled[i], _ = h.Subscribe("") // nobody reads these until the end
		defer stalled[i].Close()
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range events {
			h.Publish(change("f", i))
		}
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("publishing to subscribers that never read blocked")
	}
	// Each one, reading at last, skips to the oldest event kept and is
	// told how many it missed; what it reads then is the newest events,
	// in order.
	for i, s := range stalled {
		got := drain(s)
		if len(got) != buffer || got[0].Dropped != events-buffer || got[0].NewVersion != fmt.Sprint("v", events-buffer+1) || got[buffer-1].NewVersion != fmt.Sprint("v", events) {
			t.Fatalf("subscriber %d read %d events, the first %+v; want the newest %d, the first with %d dropped", i, len(got), got[0], buffer, events-buffer)
		}
	}
}

// The writer's cost must not depend on the subscribers: publishing to a
// thousand subscribers that fell thousands of events behind allocates
// what publishing to one that keeps up does (there is no per-subscriber
// work left to allocate for). Allocations are counted over many publishes
// rather than with testing.AllocsPerRun, which rounds its average down:
// the race detector adds a fraction of an allocation per call, at random.
func TestPublishCostDoesNotDependOnSubscribersOrBacklog(t *testing.T) {
	perPublish := func(stalled int) float64 {
		h := NewHub(WithBuffer(256))
		reader, _ := h.Subscribe("")
		defer reader.Close()
		for range stalled {
			s, _ := h.Subscribe("")
			defer s.Close()
		}
		i := 0
		for ; i < 10000; i++ { // a backlog far past the ring
			h.Publish(change("f", i))
		}
		drain(reader)
		const runs = 10000
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range runs {
			h.Publish(change("f", i))
			i++
			reader.Next()
		}
		runtime.ReadMemStats(&after)
		return float64(after.Mallocs-before.Mallocs) / runs
	}
	one, many := perPublish(0), perPublish(1000)
	if math.Abs(many-one) > 0.5 {
		t.Errorf("a publish allocates %.2f times with 1,000 stalled subscribers and %.2f without: the writer does work per subscriber", many, one)
	}
}

// A subscription holds a cursor into the hub's ring, not a queue of its
// own: subscribing costs the same whatever the buffer.
func TestSubscriptionMemoryDoesNotGrowWithTheBuffer(t *testing.T) {
	h := NewHub(WithBuffer(1 << 16))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const n = 100
	subs := make([]*Subscription, n)
	for i := range subs {
		subs[i], _ = h.Subscribe("")
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / n; per > 1024 {
		t.Errorf("a subscription allocates %d bytes with a buffer of 65,536 events: it holds a queue of its own", per)
	}
	for _, s := range subs {
		s.Close()
	}
}

// A subscriber reading concurrently with a writer, waiting on Ready when
// it has read everything, gets every event once, in order: no wake-up is
// lost between its last Next and its wait.
func TestSubscriberReceivesEveryEventInOrder(t *testing.T) {
	const events = 20000
	h := NewHub(WithBuffer(events))
	s, _ := h.Subscribe("d")
	defer s.Close()
	got := make(chan []Event, 1)
	go func() {
		var evs []Event
		for len(evs) < events {
			<-s.Ready()
			for {
				ev, ok := s.Next()
				if !ok {
					break
				}
				evs = append(evs, ev)
			}
		}
		got <- evs
	}()
	for i := range events {
		h.Publish(change("other/f", i)) // not for s: never wakes it
		h.Publish(change("d/f", i))
	}
	var evs []Event
	select {
	case evs = <-got:
	case <-time.After(60 * time.Second):
		t.Fatal("the subscriber never received every event: a wake-up was lost")
	}
	for i, ev := range evs {
		if ev.Path != "d/f" || ev.NewVersion != fmt.Sprint("v", i+1) || ev.Dropped != 0 {
			t.Fatalf("event %d = %+v, want d/f at v%d, none dropped", i, ev, i+1)
		}
	}
}

func TestReadyIsClosedOnlyByEventsForTheSubscriber(t *testing.T) {
	closed := func(c <-chan struct{}) bool {
		select {
		case <-c:
			return true
		default:
			return false
		}
	}
	h := NewHub()
	a, _ := h.Subscribe("a")
	both, _ := h.Subscribe("a", "b")
	h.Publish(change("ab/x", 0))
	if closed(a.Ready()) {
		t.Error("a subscriber of a was woken by a change of ab/x")
	}
	if !closed(both.Ready()) {
		t.Error("a subscriber of several prefixes waits on the whole workspace, and was not woken")
	}
	if _, ok := both.Next(); ok {
		t.Error("a subscriber of a and b was given a change of ab/x")
	}
	h.Publish(change("a/x", 0))
	if !closed(a.Ready()) {
		t.Fatal("a subscriber of a was not woken by a change of a/x")
	}
	if ev, ok := a.Next(); !ok || ev.Path != "a/x" {
		t.Errorf("Next = %+v, %v; want the change of a/x", ev, ok)
	}
	if _, ok := a.Next(); ok || closed(a.Ready()) {
		t.Error("after reading everything, the subscriber still has something to read")
	}
	a.Close()
	both.Close()
	if h.Active() || len(h.topics) != 0 {
		t.Errorf("after the last Close: active %v, %d prefixes waited on", h.Active(), len(h.topics))
	}
}

// A subscriber that fell behind cannot know which of the events it
// skipped were for its files: the count covers them all, and errs on the
// side of "read again".
func TestLaggedPrefixSubscriberCountsEverySkippedEvent(t *testing.T) {
	h := NewHub(WithBuffer(4))
	s, _ := h.Subscribe("a")
	other, _ := h.Subscribe("b")
	defer other.Close()
	for i := range 5 {
		h.Publish(change("a/f", i))
		h.Publish(change("b/f", i))
	}
	got := drain(s)
	// Kept: a/f v4, b/f v4, a/f v5, b/f v5; skipped: the 6 before.
	if len(got) != 2 || got[0].NewVersion != "v4" || got[0].Dropped != 6 || got[1].NewVersion != "v5" || got[1].Dropped != 0 {
		t.Errorf("got %+v; want a/f v4 with 6 dropped, then a/f v5", got)
	}
}

func TestLostMarksEverySubscriber(t *testing.T) {
	h := NewHub()
	s, _ := h.Subscribe("")
	h.Publish(Change{Path: "f", Agent: "x", Old: &State{}, New: text("v1", "a\n")})
	h.Lost()
	h.Publish(Change{Path: "f", External: true, New: text("v2", "b\n")})
	got := drain(s)
	if len(got) != 2 {
		t.Fatalf("got %d events, want 2", len(got))
	}
	// The loss is told with the first event after it.
	if got[0].Dropped != 0 || got[1].Dropped != 1 {
		t.Errorf("dropped counts %d, %d; want 0 then 1 (the overflow came between)", got[0].Dropped, got[1].Dropped)
	}
	// What the hub knew is forgotten: the next change has no old version.
	if got[1].OldVersion != "" || got[1].Changed != nil {
		t.Errorf("after a loss the old version %q and ranges %v should be unknown", got[1].OldVersion, got[1].Changed)
	}
}

func TestCloseEndsSubscriptions(t *testing.T) {
	h := NewHub()
	s, _ := h.Subscribe("")
	h.Close()
	select {
	case <-s.Done():
	default:
		t.Fatal("subscription not done after Close")
	}
	if _, err := h.Subscribe(""); err != ErrClosed {
		t.Errorf("Subscribe after Close: err %v, want ErrClosed", err)
	}
	if h.Active() {
		t.Error("hub still active after Close")
	}
}

func TestNoSubscribersNothingRemembered(t *testing.T) {
	h := NewHub()
	h.Publish(Change{Path: "f", Agent: "x", Old: &State{}, New: text("v1", "a\n")})
	s, _ := h.Subscribe("")
	h.Publish(Change{Path: "f", External: true, New: text("v2", "b\n")})
	got := drain(s)
	if len(got) != 1 || got[0].OldVersion != "" {
		t.Fatalf("got %+v; a change published with nobody listening must not be remembered (it could be stale by now)", got)
	}
}

func TestStoreBounds(t *testing.T) {
	st := newStore(3, 10)
	st.put("a", text("va", "12345"))
	st.put("b", text("vb", "12345"))
	st.put("c", text("vc", "12345")) // over 10 bytes: a's text goes first
	if got, _ := st.get("a"); got.HasText || got.Version != "va" {
		t.Errorf("a = %+v, want its version kept and its text forgotten", got)
	}
	if got, _ := st.get("c"); !got.HasText {
		t.Errorf("the newest text was forgotten")
	}
	st.put("d", text("vd", "x"))
	if _, ok := st.get("b"); ok {
		t.Errorf("b still known past the 3-path limit (least recently used)")
	}
	st.put("big", text("vbig", "0123456789abc"))
	if got, _ := st.get("big"); got.HasText || got.Version != "vbig" {
		t.Errorf("content over the whole budget = %+v, want only the version", got)
	}
	if st.text > st.maxText {
		t.Errorf("store holds %d bytes of text, over %d", st.text, st.maxText)
	}
}

func TestConcurrentPublishAndSubscribe(t *testing.T) {
	h := NewHub(WithBuffer(16))
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 500 {
				p := fmt.Sprintf("d%d/f", w)
				h.Publish(Change{Path: p, Agent: "x", Old: ptr(text(fmt.Sprint(i), "a\n")), New: text(fmt.Sprint(i+1), "b\n")})
			}
		}()
	}
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				s, err := h.Subscribe("")
				if err != nil {
					t.Error(err)
					return
				}
				drain(s)
				s.Close()
			}
		}()
	}
	wg.Wait()
}

func TestSnapshotsFillForgottenContent(t *testing.T) {
	snap := map[string]string{"v1": "a\nb\n"}
	var asked []string
	h := NewHub(WithMaxTextBytes(0), WithSnapshots(func(v string) ([]byte, bool) {
		asked = append(asked, v)
		s, ok := snap[v]
		return []byte(s), ok
	}))
	s, _ := h.Subscribe("")
	// The hub keeps no content at all (budget 0): the old side of the
	// external change comes from the snapshots, by version.
	h.Publish(Change{Path: "f", Agent: "x", Old: &State{}, New: text("v1", "a\nb\n")})
	h.Publish(Change{Path: "f", External: true, New: text("v2", "a\nB\n")})
	// Without a snapshot of v2 there are no ranges.
	h.Publish(Change{Path: "f", External: true, New: text("v3", "c\n")})
	got := drain(s)
	if len(got) != 3 {
		t.Fatalf("got %d events, want 3", len(got))
	}
	if r := got[1].Changed; !reflect.DeepEqual(r, []Range{{2, 1, 2, 1}}) {
		t.Errorf("ranges from the snapshot of v1 = %v, want [{2 1 2 1}]", r)
	}
	if got[2].Changed != nil || got[2].OldVersion != "v2" {
		t.Errorf("v2 -> v3 without a snapshot: old %q, ranges %v; want v2 and no ranges", got[2].OldVersion, got[2].Changed)
	}
	if !reflect.DeepEqual(asked, []string{"v1", "v2"}) {
		t.Errorf("snapshots asked for %v, want v1 then v2", asked)
	}
}
