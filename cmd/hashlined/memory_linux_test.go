package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/binarytest"
)

// The memory test's shape: the budget, and what the server may use beside
// it (the runtime, its binary, and the small bounds the test gives its
// caches), as VmHWM counts it.
const (
	// The process must stay under memCap resident; its calls get
	// memBudget of it, the rest is the runtime, the binary and what the
	// collector has not yet returned (measured at 30 to 70 MiB on the
	// 2-core machine under load).
	memCap     = 256 << 20
	memBudget  = 160 << 20
	smallBound = 1 << 20 // --view-bytes, --request-id-bytes, --grep-bytes
	bigFile    = 40 << 20
	bigFiles   = 12
	bigReads   = 36
	bigApplies = 3
)

// TestMemoryBudgetBoundsTheServer runs the real hashlined (built without
// the race detector, whose shadow memory would swamp the measure) with a
// 256 MiB --memory-budget, and 3 Applies of 12 appends to 40 MB files and
// 36 Reads of 40 MB files at once: the server's peak resident memory
// (VmHWM) stays under the budget plus 64 MiB for the runtime and its
// caches' small bounds; every call succeeds or is refused with a reason
// that says why, and a refused one leaves the disk as it was.
func TestMemoryBudgetBoundsTheServer(t *testing.T) {
	// Most of its time is spent waiting on its own server: it overlaps with
	// the other tests that do.
	t.Parallel()
	bin, err := binarytest.Build(binarytest.Hashlined)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	line := []byte(strings.Repeat("m", 59) + "\n")
	body := bytes.Repeat(line, bigFile/len(line))
	sums := map[string][32]byte{}
	for i := range bigFiles {
		name := "big" + strconv.Itoa(i) + ".txt"
		content := append([]byte(name+"\n"), body...)
		if err := os.WriteFile(filepath.Join(root, name), content, 0o644); err != nil {
			t.Fatal(err)
		}
		sums[name] = sha256.Sum256(content)
	}
	small := strconv.Itoa(smallBound)
	cmd, addr, _ := startBinary(t, bin, nil, "--root", root, "--listen", "127.0.0.1:0",
		"--memory-budget", strconv.Itoa(memBudget), "--cache-bytes", "0", "--state-bytes", "0",
		"--view-bytes", small, "--request-id-bytes", small, "--grep-bytes", small, "--fsync=false")
	c, ctx := dial(t, addr)
	ctx, cancel := context.WithTimeout(ctx, 50*time.Second)
	defer cancel()

	var wg sync.WaitGroup
	errs := make(chan error, bigReads+bigApplies)
	for i := range bigApplies {
		wg.Go(func() {
			var changes []*hashlinev1.Change
			for j := range bigFiles {
				changes = append(changes, &hashlinev1.Change{Change: &hashlinev1.Change_Edit{Edit: &hashlinev1.EditRequest{
					Path: "big" + strconv.Itoa(j) + ".txt", Edits: []*hashlinev1.FileEdit{client.Append(fmt.Sprint("apply ", i))}}}})
			}
			_, err := c.Apply(ctx, &hashlinev1.ApplyRequest{Changes: changes})
			var ce *client.Error
			if !errors.As(err, &ce) || ce.Reason != "TOO_LARGE" {
				errs <- fmt.Errorf("apply %d: %v, want TOO_LARGE (12 files of 40 MB are over the set limit and the budget)", i, err)
			}
		})
	}
	for i := range bigReads {
		wg.Go(func() {
			name := "big" + strconv.Itoa(i%bigFiles) + ".txt"
			resp, err := c.Read(ctx, &hashlinev1.ReadRequest{Path: name, Limit: 10})
			if err != nil {
				errs <- fmt.Errorf("read %d of %s: %v, want it read (it fits in the budget, in turn)", i, name, err)
				return
			}
			if resp.GetTotalLines() != int32(bigFile/len(line))+1 {
				errs <- fmt.Errorf("read %d of %s: %d lines", i, name, resp.GetTotalLines())
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	hwm := procStatus(t, cmd.Process.Pid, "VmHWM")
	t.Logf("peak resident memory %d MiB, cap %d MiB", hwm>>20, memCap>>20)
	if hwm > memCap {
		t.Errorf("the server peaked at %d MiB resident, over the %d MiB it was given (--memory-budget %d MiB)", hwm>>20, memCap>>20, memBudget>>20)
	}
	for name, sum := range sums {
		b, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		if sha256.Sum256(b) != sum {
			t.Errorf("%s changed, though every Apply was refused", name)
		}
	}
}

// procStatus is the field key of /proc/PID/status of process pid, a size
// in kB (VmHWM, the peak resident set size; RssAnon, the resident
// anonymous memory), in bytes.
func procStatus(t *testing.T, pid int, key string) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for l := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(l, key+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no %s in /proc/%d/status", key, pid)
	return 0
}

// TestIdleServerReturnsMemory runs the real hashlined (without the race
// detector, as TestMemoryBudgetBoundsTheServer) with its default runtime
// tuning, has 5 agents read 100 files of 64 KB, and waits for the server
// to go quiet: the heap its collector let grow during the reads must come
// back to the operating system without any call to prompt it, its
// anonymous resident memory falling at least half way back to what it
// was before the reads.
func TestIdleServerReturnsMemory(t *testing.T) {
	t.Parallel()
	bin, err := binarytest.Build(binarytest.Hashlined)
	if err != nil {
		t.Fatal(err)
	}
	const files, agents = 100, 5
	root := t.TempDir()
	line := strings.Repeat("q", 63) + "\n"
	for i := range files {
		if err := os.WriteFile(filepath.Join(root, fmt.Sprintf("f%03d.txt", i)), []byte(strings.Repeat(line, 1024)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd, addr, _ := startBinary(t, bin, nil, "--root", root, "--listen", "127.0.0.1:0")
	pid := cmd.Process.Pid
	before := procStatus(t, pid, "RssAnon")
	var wg sync.WaitGroup
	for a := range agents {
		c, ctx := dial(t, addr, client.WithAgentID(fmt.Sprint("agent-", a)))
		wg.Go(func() {
			for i := range files {
				if _, err := c.Read(ctx, &hashlinev1.ReadRequest{Path: fmt.Sprintf("f%03d.txt", i)}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	busy := procStatus(t, pid, "RssAnon")
	want := before + (busy-before)/2
	t.Logf("anonymous resident memory: %d MiB before the reads, %d MiB after", before>>20, busy>>20)
	// However loaded the machine, the server goes quiet once the reads
	// are over; the deadline is only there to end a test that fails.
	deadline := time.Now().Add(time.Minute)
	for {
		now := procStatus(t, pid, "RssAnon")
		if now <= want {
			t.Logf("%d MiB once quiet", now>>20)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("anonymous resident memory still %d MiB a minute after the reads, want at most %d MiB (%d MiB before them, %d MiB after)", now>>20, want>>20, before>>20, busy>>20)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
