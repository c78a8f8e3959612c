package history

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// crashCopy copies the log's files as they are on disk now into a new
// directory: what a kill -9 of the process would leave (records waiting in
// memory are not there).
func crashCopy(t *testing.T, dir string) string {
	t.Helper()
	to := t.TempDir()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, de := range des {
		b, err := os.ReadFile(filepath.Join(dir, de.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, de.Name()), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return to
}

func seqs(cs []Change) []uint64 {
	out := []uint64{}
	for _, c := range cs {
		out = append(out, c.ID.seq)
	}
	return out
}

// shownIDs lists the changes History shows, oldest first.
func shownIDs(t *testing.T, l *Log) []uint64 {
	t.Helper()
	got := ids(allPages(t, l, Query{}))
	for i, j := 0, len(got)-1; i < j; i, j = i+1, j-1 {
		got[i], got[j] = got[j], got[i]
	}
	return got
}

// A prepared change is shown only once resolved as made; one resolved as
// not made never is, and its id is unknown. A reopened log remembers both.
func TestAPreparedChangeIsShownOnlyOnceResolvedAsMade(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l := openLog(t, dir, Options{})
	a, err := l.Append(smallChange())
	if err != nil {
		t.Fatal(err)
	}
	made, err := l.Prepare(smallChange(), true)
	if err != nil {
		t.Fatal(err)
	}
	notMade, err := l.Prepare(smallChange(), false)
	if err != nil {
		t.Fatal(err)
	}
	if got := shownIDs(t, l); !reflect.DeepEqual(got, []uint64{a.ID.seq}) {
		t.Fatalf("History shows %v before the changes are resolved, want only the appended one", got)
	}
	if _, err := l.Get(made.ID.String()); !errors.Is(err, ErrUnknown) {
		t.Fatalf("Get of a pending change: %v, want ErrUnknown", err)
	}
	if spans, err := l.Blame(a.Files[0].Path, 50); err != nil || spans[1].ID != a.ID {
		t.Fatalf("Blame sees a pending change: %+v, %v", spans, err)
	}
	if st := l.Stats(); st.Pending != 2 || st.Changes != 1 {
		t.Fatalf("stats %+v, want 2 pending and 1 change", st)
	}
	if err := errors.Join(l.Resolve(made.ID, true), l.Resolve(notMade.ID, false)); err != nil {
		t.Fatal(err)
	}
	check := func(l *Log, when string) {
		t.Helper()
		if got := shownIDs(t, l); !reflect.DeepEqual(got, []uint64{a.ID.seq, made.ID.seq}) {
			t.Fatalf("%s: History shows %v, want %d and %d", when, got, a.ID.seq, made.ID.seq)
		}
		if got, err := l.Get(made.ID.String()); err != nil || got.ID != made.ID || !reflect.DeepEqual(got.Files, made.Files) {
			t.Fatalf("%s: Get of the change made: %+v, %v", when, got, err)
		}
		if _, err := l.Get(notMade.ID.String()); !errors.Is(err, ErrUnknown) {
			t.Fatalf("%s: Get of the change not made: %v, want ErrUnknown", when, err)
		}
		if spans, err := l.Blame(a.Files[0].Path, 50); err != nil || spans[1].ID != made.ID {
			t.Fatalf("%s: Blame: %+v, %v", when, spans, err)
		}
		if st := l.Stats(); st.Pending != 0 || st.Changes != 2 {
			t.Fatalf("%s: stats %+v", when, st)
		}
		if cs, err := l.Unresolved(); err != nil || len(cs) != 0 {
			t.Fatalf("%s: unresolved %v, %v", when, seqs(cs), err)
		}
	}
	check(l, "resolved")
	if err := l.Resolve(made.ID, false); err != nil {
		t.Fatal(err)
	}
	check(l, "resolved again (no effect)")
	l.Close()
	check(openLog(t, dir, Options{}), "reopened")
}

// What a crash leaves at each moment of a change prepared, made and
// resolved: a prepared change written to the file survives the process;
// until its outcome is written, it is pending after a reopen (Unresolved),
// and once another record or a note carries the outcome, it is not.
func TestAPreparedChangeSurvivesACrashAndIsResolvedByTheNextRecord(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l := openLog(t, dir, Options{})
	first, err := l.Prepare(smallChange(), true)
	if err != nil {
		t.Fatal(err)
	}
	unresolved := func(when string, want ...uint64) *Log {
		t.Helper()
		l2 := openLog(t, crashCopy(t, dir), Options{})
		cs, err := l2.Unresolved()
		if err != nil || !reflect.DeepEqual(seqs(cs), append([]uint64{}, want...)) {
			t.Fatalf("%s: unresolved after a crash: %v, %v; want %v", when, seqs(cs), err, want)
		}
		return l2
	}
	l2 := unresolved("prepared", first.ID.seq)
	if cs, _ := l2.Unresolved(); !reflect.DeepEqual(summary(cs[0]), summary(first)) || cs[0].Files[0].Path != first.Files[0].Path {
		t.Fatalf("the unresolved change read back: %+v, want %+v", cs[0], first)
	}
	// Resolved after a crash: shown, and the outcome written with the
	// log's next record.
	if err := l2.Resolve(first.ID, true); err != nil {
		t.Fatal(err)
	}
	if err := l2.Sync(); err != nil {
		t.Fatal(err)
	}
	if got := shownIDs(t, l2); !reflect.DeepEqual(got, []uint64{first.ID.seq}) {
		t.Fatalf("after the recovery's Resolve: %v", got)
	}

	// The outcome waits in memory until a record or a note carries it;
	// hold the note back so that a slow machine cannot write it before
	// the crash copy is taken.
	holdNotes(l, time.Hour)
	if err := l.Resolve(first.ID, true); err != nil {
		t.Fatal(err)
	}
	unresolved("resolved, the outcome in memory", first.ID.seq)
	second, err := l.Prepare(smallChange(), true)
	if err != nil {
		t.Fatal(err)
	}
	l3 := unresolved("the next prepared", second.ID.seq)
	if got := shownIDs(t, l3); !reflect.DeepEqual(got, []uint64{first.ID.seq}) {
		t.Fatalf("the first change's outcome went with the second's record: History shows %v", got)
	}
	holdNotes(l, flushDelay)
	if err := l.Resolve(second.ID, false); err != nil {
		t.Fatal(err)
	}
	// No record follows: a note carries the outcome within flushDelay.
	waitWritten(t, l)
	l4 := unresolved("resolved, a note written")
	if got := shownIDs(t, l4); !reflect.DeepEqual(got, []uint64{first.ID.seq}) {
		t.Fatalf("after the note: History shows %v", got)
	}
	if _, err := l4.Get(second.ID.String()); !errors.Is(err, ErrUnknown) {
		t.Fatalf("the change not made: %v, want ErrUnknown", err)
	}
}

// A change carried by a change set's intent record is restored with its
// id and time when the history lost it (its record was never written),
// with the numbers before it that were never changes skipped, once only;
// one the history holds pending is resolved; one of another log (the
// history started afresh) gets a new id.
func TestRestoreRecordsALostChangeWithItsIDOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l := openLog(t, dir, Options{})
	kept, err := l.Append(smallChange())
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	// What follows waits in memory until l.Write, however slow the machine.
	holdNotes(l, time.Hour)
	lostSingle, err := l.Prepare(smallChange(), false) // a single change that never got to its write
	if err != nil {
		t.Fatal(err)
	}
	set, err := l.Prepare(smallChange(), false) // a set whose record carries its entry
	if err != nil {
		t.Fatal(err)
	}
	enc := Encode(set)
	if dec, err := Decode(enc); err != nil || !reflect.DeepEqual(dec, set) {
		t.Fatalf("Decode(Encode(c)) = %+v, %v; want %+v", dec, err, set)
	}

	crashed := crashCopy(t, dir)
	l2 := openLog(t, crashed, Options{})
	if st := l2.Stats(); st.Next != lostSingle.ID.seq {
		t.Fatalf("after the crash the log ends before %d, want it to end before the lost changes (%d)", st.Next, lostSingle.ID.seq)
	}
	for range 2 {
		got, err := l2.Restore(enc)
		if err != nil || got.ID != set.ID {
			t.Fatalf("Restore: %v, %v; want %v", got.ID, err, set.ID)
		}
	}
	check := func(l *Log, when string) {
		t.Helper()
		if got := shownIDs(t, l); !reflect.DeepEqual(got, []uint64{kept.ID.seq, set.ID.seq}) {
			t.Fatalf("%s: History shows %v", when, got)
		}
		got, err := l.Get(set.ID.String())
		if err != nil || !reflect.DeepEqual(got, set) {
			t.Fatalf("%s: Get of the restored change: %+v, %v; want %+v", when, got, err, set)
		}
		if _, err := l.Get(lostSingle.ID.String()); !errors.Is(err, ErrUnknown) {
			t.Fatalf("%s: the skipped number: %v, want ErrUnknown", when, err)
		}
	}
	check(l2, "restored")
	l2.Close()
	l3 := openLog(t, crashed, Options{})
	check(l3, "restored and reopened")
	next, err := l3.Append(smallChange())
	if err != nil || next.ID.seq != set.ID.seq+1 {
		t.Fatalf("the change after the restored one: %v, %v", next.ID, err)
	}

	// Held pending (the record was written): resolved as made.
	if err := l.Write(); err != nil {
		t.Fatal(err)
	}
	l4 := openLog(t, crashCopy(t, dir), Options{})
	if got, err := l4.Restore(enc); err != nil || got.ID != set.ID {
		t.Fatalf("Restore of a pending change: %v, %v", got.ID, err)
	}
	if cs, err := l4.Unresolved(); err != nil || !reflect.DeepEqual(seqs(cs), []uint64{lostSingle.ID.seq}) {
		t.Fatalf("unresolved after the restore: %v, %v", seqs(cs), err)
	}
	if got := shownIDs(t, l4); !reflect.DeepEqual(got, []uint64{kept.ID.seq, set.ID.seq}) {
		t.Fatalf("History after the restore of a pending change: %v", got)
	}

	// Another log's change: a new id.
	l5 := openLog(t, t.TempDir(), Options{})
	got, err := l5.Restore(enc)
	if err != nil || got.ID.log != l5.log || got.ID.seq != 1 {
		t.Fatalf("Restore into another log: %v, %v", got.ID, err)
	}
}

// Outcomes carried past a segment's end go with the record that starts
// the next one; a log of a million changes prepared and resolved, as the
// engine records them, stays within its bound like one of changes
// appended.
func TestOutcomesSurviveSegmentsAndTheBound(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const bound = 64 << 10
	l := openLog(t, dir, Options{MaxBytes: bound, SegmentBytes: 4 << 10})
	var last Change
	for i := range 2000 {
		c, err := l.Prepare(smallChange(), i%2 == 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Resolve(c.ID, i%3 != 0); err != nil {
			t.Fatal(err)
		}
		if n := logBytes(t, l, dir); n > bound {
			t.Fatalf("after %d changes the log is %d bytes", i+1, n)
		}
		last = c
	}
	st := l.Stats()
	l.Close()
	l2 := openLog(t, dir, Options{MaxBytes: bound, SegmentBytes: 4 << 10})
	st2 := l2.Stats()
	if st2.Pending != 0 || st2.Changes != st.Changes || st2.Next != last.ID.seq+1 {
		t.Fatalf("reopened: %+v, was %+v", st2, st)
	}
	for _, c := range allPages(t, l2, Query{}) {
		if (c.ID.seq-1)%3 == 0 {
			t.Fatalf("change %d was resolved as not made and is shown", c.ID.seq)
		}
	}
}

// A log whose segments are of format 1 (before pending changes) is read,
// and its new records go to a new segment of format 2.
func TestASegmentOfFormat1IsReadAndNotWrittenTo(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l := openLog(t, dir, Options{})
	a, err := l.Append(smallChange())
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	segs := segFiles(t, dir)
	b, err := os.ReadFile(segs[0])
	if err != nil {
		t.Fatal(err)
	}
	copy(b, segMagicV1)
	binary.LittleEndian.PutUint32(b[len(segMagic)+12:], crc32.Checksum(b[:len(segMagic)+12], castagnoli()))
	if err := os.WriteFile(segs[0], b, 0o600); err != nil {
		t.Fatal(err)
	}
	l2 := openLog(t, dir, Options{})
	if got, err := l2.Get(a.ID.String()); err != nil || got.ID != a.ID {
		t.Fatalf("a change of a format 1 segment: %v, %v", got.ID, err)
	}
	c, err := l2.Prepare(smallChange(), true)
	if err != nil {
		t.Fatal(err)
	}
	if err := l2.Resolve(c.ID, true); err != nil {
		t.Fatal(err)
	}
	l2.Close()
	after := segFiles(t, dir)
	if len(after) != 2 {
		t.Fatalf("segments %v, want the format 1 one and a new one", after)
	}
	if b2, _ := os.ReadFile(after[0]); string(b2) != string(b) {
		t.Fatal("the format 1 segment was written to")
	}
	if got := shownIDs(t, openLog(t, dir, Options{})); !reflect.DeepEqual(got, []uint64{a.ID.seq, c.ID.seq}) {
		t.Fatalf("History: %v", got)
	}
}

// validPathBytes, which Open checks a record's paths with, agrees with
// validPath, which Append checks them with.
func TestValidPathBytesAgreesWithValidPath(t *testing.T) {
	t.Parallel()
	for _, p := range []string{"", ".", "..", "/", "a", "a/b", "a/", "/a", "a//b", "./a", "a/.", "a/./b", "a/..", "../a", "a/../b",
		"...", "a/...", ".a", "a.", "a/.b/c", "a\x00b", "é/ü", "a b/c", "a\\b", "//", "a/b/"} {
		if got, want := validPathBytes([]byte(p)), validPath(p); got != want {
			t.Errorf("%q: validPathBytes %v, validPath %v", p, got, want)
		}
	}
	long := make([]byte, maxPathBytes+1)
	for i := range long {
		long[i] = 'a'
	}
	if validPathBytes(long) || validPathBytes(long[:maxPathBytes]) != validPath(string(long[:maxPathBytes])) {
		t.Error("the length bound differs")
	}
}

// A prepared change whose write fails is returned with its id and the
// error: it is in the log, pending, and its caller can still resolve it.
func TestAPreparedChangeWhoseWriteFailsCanStillBeResolved(t *testing.T) {
	t.Parallel()
	l := openLog(t, t.TempDir(), Options{})
	s := l.segs[len(l.segs)-1]
	s.f.Close() // every write fails
	c, err := l.Prepare(smallChange(), true)
	if err == nil || c.ID.IsZero() {
		t.Fatalf("Prepare with its write failing: %v, %v; want the change and an error", c.ID, err)
	}
	if err := l.Resolve(c.ID, true); err != nil {
		t.Fatal(err)
	}
	if got, err := l.Get(c.ID.String()); err != nil || got.ID != c.ID {
		t.Fatalf("Get after Resolve: %v, %v", got.ID, err)
	}
	// The file is open again for Close.
	l.mu.Lock()
	s.f, err = os.OpenFile(s.path, os.O_RDWR, 0)
	l.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
}

// holdNotes sets how long l keeps what waits in memory before writing it,
// and re-arms a write already waiting.
func holdNotes(l *Log, d time.Duration) {
	for {
		l.mu.Lock()
		if l.flushArmed && !l.flushTimer.Stop() {
			// The timer fired and its flush waits for the lock: it would
			// write what is held after this returns. Let it run first.
			l.mu.Unlock()
			time.Sleep(time.Millisecond)
			continue
		}
		l.flushAfter = d
		if l.flushArmed {
			l.flushTimer.Reset(d)
		}
		l.mu.Unlock()
		return
	}
}

// waitWritten waits until nothing of l waits in memory: every record and
// outcome is in the file.
func waitWritten(t *testing.T, l *Log) {
	t.Helper()
	waitLog(t, l, "the outcome is not in the file", func() bool { return len(l.outs)+len(l.wbuf) == 0 })
}

// waitDisarmed waits until l's timer that writes what waits in memory has
// fired.
func waitDisarmed(t *testing.T, l *Log) {
	t.Helper()
	waitLog(t, l, "the log's timer has not fired", func() bool { return !l.flushArmed })
}

// waitLog waits up to 10s until done, called with l's lock held, is true.
func waitLog(t *testing.T, l *Log, failure string, done func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		l.mu.Lock()
		ok := done()
		l.mu.Unlock()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(failure + " after 10s")
		}
		time.Sleep(time.Millisecond)
	}
}

// Prepare arms the timer that writes the outcome, so that Resolve need
// not: an outcome resolved while that timer is armed is written when it
// fires, and one resolved after it fired (a change slower to make than
// the delay) arms it again. Either way a crash after finds the change
// resolved, with no record after it.
func TestAnOutcomeIsWrittenWhetherPreparesTimerFiredOrNot(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		fired     bool // Resolve once Prepare's timer has fired
		applied   bool
		wantShown []uint64
	}{
		{name: "resolved before the timer fires, made", applied: true, wantShown: []uint64{1}},
		{name: "resolved before the timer fires, not made", wantShown: []uint64{}},
		{name: "resolved after the timer fired, made", fired: true, applied: true, wantShown: []uint64{1}},
		{name: "resolved after the timer fired, not made", fired: true, wantShown: []uint64{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			l := openLog(t, dir, Options{})
			p, err := l.Prepare(smallChange(), true)
			if err != nil {
				t.Fatal(err)
			}
			// Its record written, only its outcome's timer can have made
			// one (armed, or fired since).
			l.mu.Lock()
			timer := l.flushTimer
			l.mu.Unlock()
			if timer == nil {
				t.Fatal("Prepare armed no timer to write its outcome")
			}
			if tc.fired {
				waitDisarmed(t, l)
			}
			if err := l.Resolve(p.ID, tc.applied); err != nil {
				t.Fatal(err)
			}
			waitWritten(t, l)
			l2 := openLog(t, crashCopy(t, dir), Options{})
			if cs, err := l2.Unresolved(); err != nil || len(cs) != 0 {
				t.Fatalf("unresolved after a crash: %v, %v; want none", seqs(cs), err)
			}
			if got := shownIDs(t, l2); !reflect.DeepEqual(got, tc.wantShown) {
				t.Fatalf("after a crash History shows %v, want %v", got, tc.wantShown)
			}
		})
	}
}
