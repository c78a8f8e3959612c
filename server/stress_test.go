package server_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/workspace"
)

// TestConcurrentAgentsLoseNoEdit runs N agents making M edits each on one
// file and on several, through the real server, every agent retrying on
// STALE_REF from the fresh tags of the error. At the end every file holds
// exactly the lines the log of accepted edits says: each accepted edit once,
// no rejected one. It runs three fixed seeds and one new random seed each
// time (HASHLINE_STRESS_SEED replaces the random one); a failure prints the
// command that repeats its seed. The seed decides what each agent does;
// the scheduler still decides the interleaving.
func TestConcurrentAgentsLoseNoEdit(t *testing.T) {
	seeds := []uint64{1, 2, 3, uint64(time.Now().UnixNano()) % 1_000_000}
	if s, err := strconv.ParseUint(os.Getenv("HASHLINE_STRESS_SEED"), 10, 64); err == nil {
		seeds[len(seeds)-1] = s
	}
	agents, edits := 8, 20
	if testing.Short() {
		agents, edits = 4, 10
	}
	for _, seed := range seeds {
		for _, files := range []int{1, 4} {
			t.Run(fmt.Sprintf("seed=%d/files=%d", seed, files), func(t *testing.T) {
				defer func() {
					if t.Failed() {
						t.Logf("repeat with: HASHLINE_STRESS_SEED=%d go test -race -run 'TestConcurrentAgentsLoseNoEdit/seed=%d/files=%d' ./server/", seed, seed, files)
					}
				}()
				runStress(t, seed, files, agents, edits)
			})
		}
	}
}

// Kinds of stress edits.
const (
	opInsert       = "insert"        // a new line after or before any line
	opReplaceOrig  = "replace-orig"  // an original line, which others may take too
	opReplaceOwn   = "replace-own"   // a line this agent inserted earlier
	opDeleteOwn    = "delete-own"    // a line this agent inserted earlier
	maxStressTries = 30              // per edit, before giving up on it
	originalLines  = 12              // per file
	stressTimeout  = 2 * time.Minute // for the whole run, -race included
)

// accepted is one edit the server applied.
type accepted struct {
	agent, k int
	file     string
	op       string
	old, new string // the line replaced or deleted (content), the new content
}

type stressLog struct {
	mu       sync.Mutex
	accepted []accepted
	rejected []string // contents of edits abandoned after a conflict
	rebased  int
	stale    int
}

func (l *stressLog) add(f func(l *stressLog)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f(l)
}

func runStress(t *testing.T, seed uint64, files, agents, edits int) {
	// Durability is not what this test is about; fsync would only slow it.
	e := newEnvWS(t, []workspace.Option{workspace.WithFsync(false)})
	ctx, cancel := context.WithTimeout(e.ctx, stressTimeout)
	defer cancel()
	var names []string
	for f := range files {
		name := fmt.Sprintf("f%d.txt", f)
		var b strings.Builder
		for j := range originalLines {
			fmt.Fprintf(&b, "%s line %d\n", name, j)
		}
		e.write(name, b.String())
		names = append(names, name)
	}
	log := &stressLog{}
	var wg sync.WaitGroup
	for a := range agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ag := &stressAgent{
				t: t, ctx: ctx, id: a, log: log, files: names,
				c:        e.agent("agent" + strconv.Itoa(a)),
				r:        rand.New(rand.NewPCG(seed, uint64(a))),
				explicit: a%2 == 0, // half pass baseVersion, half rely on their view
				copies:   map[string]*hashlinev1.ReadResponse{},
			}
			for k := range edits {
				if ctx.Err() != nil || t.Failed() {
					return
				}
				ag.edit(k)
			}
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		t.Fatalf("the run did not finish within %v", stressTimeout)
	}
	checkStress(t, e, names, log)
	t.Logf("%d accepted (%d rebased), %d abandoned, %d STALE_REF answers", len(log.accepted), log.rebased, len(log.rejected), log.stale)
	if files == 1 && log.rebased == 0 {
		t.Error("no edit was rebased: the test did not exercise concurrency")
	}
}

// stressAgent is one agent with its own copy of each file.
type stressAgent struct {
	t        *testing.T
	ctx      context.Context
	id       int
	c        *client.Client
	r        *rand.Rand
	log      *stressLog
	files    []string
	explicit bool
	copies   map[string]*hashlinev1.ReadResponse // the version each copy is
	own      map[string][]string                 // per file, this agent's live lines
}

func (ag *stressAgent) read(file string) *hashlinev1.ReadResponse {
	r, err := ag.c.Read(ag.ctx, &hashlinev1.ReadRequest{Path: file})
	if err != nil {
		ag.t.Errorf("agent %d: read %s: %v", ag.id, file, err)
		return nil
	}
	ag.copies[file] = r
	return r
}

// edit makes the agent's k-th edit, retrying from fresh tags on STALE_REF.
func (ag *stressAgent) edit(k int) {
	file := ag.files[ag.r.IntN(len(ag.files))]
	cp := ag.copies[file]
	if cp == nil {
		if cp = ag.read(file); cp == nil {
			return
		}
	}
	if ag.own == nil {
		ag.own = map[string][]string{}
	}
	content := fmt.Sprintf("a%de%d", ag.id, k)
	a := accepted{agent: ag.id, k: k, file: file, new: content}
	// Pick the edit and the line it refers to, in the agent's copy.
	pick := func(match func(string) bool) *hashlinev1.Line {
		var cands []*hashlinev1.Line
		for _, l := range cp.GetLines() {
			if match(l.GetContent()) {
				cands = append(cands, l)
			}
		}
		if len(cands) == 0 {
			return nil
		}
		return cands[ag.r.IntN(len(cands))]
	}
	own := func(s string) bool { return slices.Contains(ag.own[file], s) }
	var target *hashlinev1.Line
	switch n := ag.r.IntN(100); {
	case n < 25:
		a.op = opReplaceOrig
		target = pick(func(s string) bool { return strings.HasPrefix(s, file+" line ") })
		a.new = "R " + content
	case n < 45:
		a.op = opReplaceOwn
		target = pick(own)
	case n < 60:
		a.op, a.new = opDeleteOwn, ""
		target = pick(own)
	}
	if target == nil {
		a.op, a.new = opInsert, content
		target = cp.GetLines()[ag.r.IntN(len(cp.GetLines()))]
	}
	a.old = target.GetContent()
	before := ag.r.IntN(2) == 0
	ref, base := client.Ref(target), cp.GetVersion()
	for try := 0; try < maxStressTries; try++ {
		var fe *hashlinev1.FileEdit
		switch {
		case a.op == opInsert && before:
			fe = client.InsertBefore(ref, a.new)
		case a.op == opInsert:
			fe = client.InsertAfter(ref, a.new)
		case a.op == opDeleteOwn:
			fe = client.Delete(ref, "")
		default:
			fe = client.Replace(ref, "", a.new)
		}
		req := &hashlinev1.EditRequest{Path: file, Edits: []*hashlinev1.FileEdit{fe}, Full: true}
		if ag.explicit {
			req.BaseVersion = base
		}
		resp, err := ag.c.Edit(ag.ctx, req)
		if err == nil {
			ag.copies[file] = &hashlinev1.ReadResponse{Path: file, Version: resp.GetVersion(), Lines: resp.GetLines()}
			ag.log.add(func(l *stressLog) {
				l.accepted = append(l.accepted, a)
				if resp.GetRebasedFrom() != "" {
					l.rebased++
				}
			})
			switch a.op {
			case opInsert:
				ag.own[file] = append(ag.own[file], a.new)
			case opReplaceOwn:
				ag.own[file] = append(slices.DeleteFunc(ag.own[file], func(s string) bool { return s == a.old }), a.new)
			case opDeleteOwn:
				ag.own[file] = slices.DeleteFunc(ag.own[file], func(s string) bool { return s == a.old })
			}
			return
		}
		var stale client.StaleRefError
		if !errors.As(err, &stale) || len(stale.Refs) != 1 {
			ag.t.Errorf("agent %d edit %d (%s %s on %s): %v", ag.id, k, a.op, ref, file, err)
			return
		}
		ag.log.add(func(l *stressLog) { l.stale++ })
		sr := stale.Refs[0]
		base = sr.GetCurrentVersion()
		switch {
		case a.op == opInsert && sr.GetReason() == "CONFLICT":
			ref = sr.GetCurrentLine() // the anchor stands; insert next to it again
		case a.op == opInsert:
			ref = sr.GetFresh()[ag.r.IntN(len(sr.GetFresh()))] // the anchor went: take a fresh line
		case a.op == opReplaceOrig:
			// Another agent took this line first: abandon the edit.
			ag.log.add(func(l *stressLog) { l.rejected = append(l.rejected, a.new) })
			ag.read(file)
			return
		default:
			ag.t.Errorf("agent %d edit %d: only this agent touches %q, yet %v", ag.id, k, a.old, err)
			return
		}
	}
	ag.t.Errorf("agent %d edit %d (%s on %s): still conflicting after %d tries", ag.id, k, a.op, file, maxStressTries)
}

// checkStress compares every file with what the accepted log says it must
// hold: the original lines nobody replaced, each accepted replacement, and
// each agent's inserted lines as its own later edits left them.
func checkStress(t *testing.T, e *env, files []string, log *stressLog) {
	t.Helper()
	want := map[string]map[string]int{}
	for _, f := range files {
		want[f] = map[string]int{}
		for j := range originalLines {
			want[f][fmt.Sprintf("%s line %d", f, j)]++
		}
	}
	// Per agent, in that agent's order (the log is in acceptance order,
	// which keeps each agent's own order).
	for _, a := range log.accepted {
		w := want[a.file]
		switch a.op {
		case opInsert:
			w[a.new]++
		case opReplaceOrig, opReplaceOwn:
			w[a.old]--
			w[a.new]++
		case opDeleteOwn:
			w[a.old]--
		}
	}
	for _, f := range files {
		got := map[string]int{}
		text := e.read(f)
		for _, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
			got[l]++
		}
		for line, n := range want[f] {
			if n < 0 || n > 1 {
				t.Errorf("%s: the log wants %q %d times: an edit was accepted twice or against a line that was gone", f, line, n)
			}
			if got[line] != n {
				t.Errorf("%s: %q appears %d times, the log of accepted edits says %d", f, line, got[line], n)
			}
		}
		for line, n := range got {
			if _, ok := want[f][line]; !ok {
				t.Errorf("%s: %q appears %d times but no accepted edit wrote it", f, line, n)
			}
		}
		for _, r := range log.rejected {
			if strings.Contains(text, r+"\n") {
				t.Errorf("%s: the abandoned edit %q is in the file", f, r)
			}
		}
	}
}
