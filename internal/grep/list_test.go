package grep

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"testing"
)

// listTree is a tree of n files in directories of ten files each, two
// levels deep: enough directories for List to read several batches ahead.
func listTree(t *testing.T, n int) string {
	t.Helper()
	files := map[string]string{}
	for i := range n {
		files[fmt.Sprintf("d%02d/e%02d/f%04d", i/100, i/10%10, i)] = "x\n"
	}
	dir := t.TempDir()
	writeTree(t, dir, files)
	return dir
}

func TestListStoppedEarlyKeepsOrderAndClosesEverything(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("no /proc/self/fd")
	}
	openFDs := func() int {
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Fatal(err)
		}
		return len(ents)
	}
	dir := listTree(t, 3000)
	fsys := rootFS(t, dir)
	var all []string
	if err := List(context.Background(), fsys, ListOptions{Path: ".", Recursive: true}, func(e ListEntry) error {
		all = append(all, e.Key())
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if want := 3000 + 30 + 300; len(all) != want {
		t.Fatalf("listed %d entries, want %d", len(all), want)
	}
	if !slices.IsSorted(all) {
		t.Fatalf("entries not in key order: %q...", all[:20])
	}
	boom := errors.New("boom")
	before := openFDs()
	for _, at := range []int{1, 7, 500, 1650, len(all) - 1} {
		for _, how := range []string{"ErrStop", "an error", "a cancelled context"} {
			t.Run(fmt.Sprintf("a listing stopped by %s after %d entries closes every directory it read ahead", how, at), func(t *testing.T) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				var got []string
				err := List(ctx, fsys, ListOptions{Path: ".", Recursive: true}, func(e ListEntry) error {
					got = append(got, e.Key())
					if len(got) < at {
						return nil
					}
					switch how {
					case "ErrStop":
						return ErrStop
					case "an error":
						return boom
					}
					cancel()
					return nil
				})
				switch how {
				case "ErrStop":
					if err != nil {
						t.Errorf("List = %v, want nil", err)
					}
				case "an error":
					if !errors.Is(err, boom) {
						t.Errorf("List = %v, want the emit error", err)
					}
				default:
					// Unless the entries of the last directory were all
					// emitted: the context is checked at each directory.
					if err != nil && !errors.Is(err, context.Canceled) {
						t.Errorf("List = %v, want context.Canceled", err)
					}
				}
				if len(got) < at || !slices.Equal(got, all[:len(got)]) {
					t.Errorf("got %d entries, not the first of the full listing", len(got))
				}
				if after := openFDs(); after != before {
					t.Errorf("%d descriptors open after List, %d before", after, before)
				}
			})
		}
	}
	for name, fsys := range map[string]fs.FS{"an os.Root": fsys, "a generic fs.FS": plainFS{fsys}} {
		t.Run("a listing of "+name+" resumed after an entry gives the rest of the full listing", func(t *testing.T) {
			for _, i := range []int{-1, 0, 9, 10, 330, 1651, len(all) - 2} {
				after := ""
				if i >= 0 {
					after = all[i]
				}
				var got []string
				if err := List(context.Background(), fsys, ListOptions{Path: ".", Recursive: true, After: after}, func(e ListEntry) error {
					got = append(got, e.Key())
					return nil
				}); err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got, all[i+1:]) {
					t.Errorf("after %q: got %d entries, want the %d after it", after, len(got), len(all)-i-1)
				}
			}
		})
	}
}
