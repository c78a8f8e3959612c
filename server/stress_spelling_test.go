package server_test

import (
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/workspace"
	"github.com/hashline/hashline/server"
)

// TestSpellingsThroughLiveAndDanglingLinksLoseNoChange runs agents that
// create, replace, delete and move files of two directories, each call
// naming a file by a random spelling: the directory's own name, a link to
// it, a chain of links, an absolute link. One directory does not exist at
// the start (its links dangle) and both are deleted when empty, so the
// links keep turning from live to dangling and back. Every change but a
// create names the version it replaces, so the changes acknowledged for
// one file must form one chain from no file to what the disk holds at the
// end: two acknowledged from one version (or two creates with no delete
// between) is a lost update. Sets naming one file twice, or a directory
// and a file in it, must be refused CONFLICTING_CHANGES.
func TestSpellingsThroughLiveAndDanglingLinksLoseNoChange(t *testing.T) {
	agents, ops := 4, 60
	if testing.Short() {
		agents, ops = 3, 20
	}
	e, _ := intentEnv(t)
	mkdir(e, "L")
	symlink(e, "L", "live")
	symlink(e, "D", "dang")
	symlink(e, "dang", "dang2")
	symlink(e, filepath.Join(e.root, "D"), "abs")
	spellings := map[string][]string{"D": {"D", "dang", "dang2", "abs"}, "L": {"L", "live"}}
	dirs, files := []string{"D", "L"}, []string{"f0", "f1"}

	type step struct{ from, to, what string } // versions; "" is no file
	var mu sync.Mutex
	acked := map[string][]step{} // "D/f0" -> its acknowledged changes
	ack := func(file, from, to, what string) {
		mu.Lock()
		acked[file] = append(acked[file], step{from, to, what})
		mu.Unlock()
	}
	unexpected := func(err error) bool {
		switch codeOf(err) {
		case codes.OK, codes.Internal, codes.Unknown, codes.DataLoss, codes.Unavailable, codes.DeadlineExceeded:
			return true
		}
		return false
	}

	// Each agent does its op of a round at once with the others, so that
	// the calls contend for a file while its directory may be missing.
	type agent struct {
		c   *client.Client
		rng *rand.Rand
	}
	all := make([]agent, agents)
	for a := range all {
		all[a] = agent{client.New(e.conn, client.WithAgentID(fmt.Sprintf("agent%d", a))), rand.New(rand.NewPCG(uint64(a), 11))}
	}
	do := func(a, op int) {
		c, rng := all[a].c, all[a].rng
		pick := func() (canon, spelled string) {
			d, f := dirs[rng.IntN(len(dirs))], files[rng.IntN(len(files))]
			sp := spellings[d]
			return d + "/" + f, sp[rng.IntN(len(sp))] + "/" + f
		}
		version := func(spelled string) (string, bool) {
			resp, err := c.Read(e.ctx, &hashlinev1.ReadRequest{Path: spelled})
			return resp.GetVersion(), err == nil
		}
		content := fmt.Sprintf("agent %d op %d\n", a, op)
		what := fmt.Sprintf("agent %d op %d", a, op)
		canon, spelled := pick()
		var err error
		switch rng.IntN(9) {
		case 0, 1: // create
			var resp *hashlinev1.WriteResponse
			resp, err = c.Write(e.ctx, &hashlinev1.WriteRequest{Path: spelled, Content: content, Mode: hashlinev1.WriteMode_WRITE_MODE_CREATE})
			if err == nil {
				if !resp.GetCreated() {
					t.Errorf("%s: a create of %s was acknowledged without creating it", what, spelled)
				}
				ack(canon, "", resp.GetVersion(), what+" create "+spelled)
			}
		case 2: // replace the version read
			v, ok := version(spelled)
			if !ok {
				return
			}
			var resp *hashlinev1.WriteResponse
			resp, err = c.Write(e.ctx, &hashlinev1.WriteRequest{Path: spelled, Content: content, Mode: hashlinev1.WriteMode_WRITE_MODE_REPLACE, ExpectedVersion: v})
			if err == nil {
				ack(canon, v, resp.GetVersion(), what+" replace "+spelled)
			}
		case 3, 7: // delete the version read
			v, ok := version(spelled)
			if !ok {
				return
			}
			if _, err = c.Delete(e.ctx, &hashlinev1.DeleteRequest{Path: spelled, ExpectedVersion: v}); err == nil {
				ack(canon, v, "", what+" delete "+spelled)
			}
		case 4: // move the version read to another file, by other spellings
			v, ok := version(spelled)
			if !ok {
				return
			}
			toCanon, to := pick()
			if toCanon == canon {
				return
			}
			if _, err = c.Move(e.ctx, &hashlinev1.MoveRequest{From: spelled, To: to, ExpectedVersion: v}); err == nil {
				ack(canon, v, "", what+" move to "+to)
				ack(toCanon, "", v, what+" move from "+spelled)
			}
		case 5: // create two files in one set, perhaps one file twice
			otherCanon, other := pick()
			var resp *hashlinev1.ApplyResponse
			resp, err = c.Apply(e.ctx, &hashlinev1.ApplyRequest{Changes: []*hashlinev1.Change{
				createChange(spelled, content), createChange(other, content+"2\n")}})
			switch {
			case otherCanon == canon && reasonOf(err) != server.ReasonConflictingChanges:
				t.Errorf("%s: a set creating %s and %s (one file) got %v, want CONFLICTING_CHANGES", what, spelled, other, err)
			case err == nil:
				ack(canon, "", resp.GetResults()[0].GetWrite().GetVersion(), what+" set create "+spelled)
				ack(otherCanon, "", resp.GetResults()[1].GetWrite().GetVersion(), what+" set create "+other)
			}
		case 6, 8: // delete a directory when empty; with a file in it, in one set, never
			d := strings.SplitN(canon, "/", 2)[0]
			if rng.IntN(2) == 0 {
				_, err = c.Delete(e.ctx, &hashlinev1.DeleteRequest{Path: d})
				break
			}
			_, err = c.Apply(e.ctx, &hashlinev1.ApplyRequest{Changes: []*hashlinev1.Change{
				createChange(spelled, content), createChange(d+".txt", content), deleteChange(d)}})
			if reasonOf(err) != server.ReasonConflictingChanges {
				t.Errorf("%s: a set deleting %s and creating %s got %v, want CONFLICTING_CHANGES", what, d, spelled, err)
			}
			err = nil
		}
		if err != nil && unexpected(err) {
			t.Errorf("%s (%s): %v", what, spelled, err)
		}
	}
	for op := range ops {
		var wg sync.WaitGroup
		for a := range agents {
			wg.Go(func() { do(a, op) })
		}
		wg.Wait()
	}

	for _, d := range dirs {
		for _, f := range files {
			canon := d + "/" + f
			final := ""
			if b, err := os.ReadFile(filepath.Join(e.root, d, f)); err == nil {
				final = workspace.Version(b)
			} else if !os.IsNotExist(err) {
				t.Fatal(err)
			}
			// One chain from no file to final: every version is left as
			// often as it is reached, but for its two ends.
			net := map[string]int{"": 0}
			for _, s := range acked[canon] {
				net[s.from]++
				net[s.to]--
			}
			net[""]--
			net[final]++
			for v, n := range net {
				if n != 0 {
					var log []string
					for _, s := range acked[canon] {
						log = append(log, s.what)
					}
					t.Errorf("%s: the acknowledged changes do not make one chain to what the disk holds (%q left %+d times more than reached):\n%s",
						canon, v, n, strings.Join(log, "\n"))
					break
				}
			}
		}
	}
	// Nothing else was written: no file by a spelling of its own, no link
	// replaced by a directory, no staged file left behind.
	links := map[string]bool{"live": true, "dang": true, "dang2": true, "abs": true}
	err := filepath.WalkDir(e.root, func(p string, de fs.DirEntry, err error) error {
		if err != nil || p == e.root {
			return err
		}
		rel, _ := filepath.Rel(e.root, p)
		rel = filepath.ToSlash(rel)
		switch {
		case links[rel]:
			if de.Type()&fs.ModeSymlink == 0 {
				t.Errorf("%s is no longer a link", rel)
			}
		case rel == "D" || rel == "L" || rel == "D.txt" || rel == "L.txt":
		case strings.HasPrefix(rel, "D/f") || strings.HasPrefix(rel, "L/f"):
			if !de.Type().IsRegular() || strings.Count(rel, "/") != 1 {
				t.Errorf("unexpected entry %s", rel)
			}
		default:
			t.Errorf("unexpected entry %s", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
