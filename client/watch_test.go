package client_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
)

func TestWatch(t *testing.T) {
	addr, stop := startServer(t.TempDir())
	defer stop()
	watcher, err := client.Dial(addr, client.WithAgentID("watcher"))
	if err != nil {
		t.Fatal(err)
	}
	defer watcher.Close()
	writer, err := client.Dial(addr, client.WithAgentID("writer"))
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	t.Run("events arrive until the context is cancelled", func(t *testing.T) {
		wctx, stopWatch := context.WithCancel(ctx)
		defer stopWatch()
		events := make(chan *hashlinev1.WatchResponse, 100)
		done := make(chan error, 1)
		go func() {
			done <- watcher.Watch(wctx, &hashlinev1.WatchRequest{Path: "sub"}, func(ev *hashlinev1.WatchResponse) error {
				events <- ev
				return nil
			})
		}()
		// The subscription goes live asynchronously: write until it shows.
		written := map[string]bool{}
		var ev *hashlinev1.WatchResponse
		for i := 0; ev == nil; i++ {
			if _, err := writer.Write(ctx, &hashlinev1.WriteRequest{Path: "other.txt", Content: fmt.Sprint(i, "\n")}); err != nil {
				t.Fatal(err)
			}
			w, err := writer.Write(ctx, &hashlinev1.WriteRequest{Path: "sub/f.txt", Content: fmt.Sprint(i, "\n")})
			if err != nil {
				t.Fatal(err)
			}
			written[w.GetVersion()] = true
			select {
			case ev = <-events:
			case <-time.After(50 * time.Millisecond):
			case <-ctx.Done():
				t.Fatal("no event within the test's deadline")
			}
		}
		if ev.GetPath() != "sub/f.txt" || ev.GetAgent() != "writer" || ev.GetExternal() || !written[ev.GetNewVersion()] {
			t.Errorf("event %v: want sub/f.txt by writer, not external, with the version of one of the writes", ev)
		}
		stopWatch()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("Watch after cancel returned %v, want context.Canceled", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Watch did not return after its context was cancelled")
		}
	})

	t.Run("an error from fn ends the watch and is returned", func(t *testing.T) {
		errStop := errors.New("seen enough")
		done := make(chan error, 1)
		go func() {
			done <- watcher.Watch(ctx, &hashlinev1.WatchRequest{}, func(*hashlinev1.WatchResponse) error { return errStop })
		}()
		for i := 0; ; i++ {
			if _, err := writer.Write(ctx, &hashlinev1.WriteRequest{Path: "g.txt", Content: fmt.Sprint(i, "\n")}); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-done:
				if err != errStop {
					t.Fatalf("Watch returned %v, want fn's error", err)
				}
				return
			case <-time.After(50 * time.Millisecond):
			case <-ctx.Done():
				t.Fatal("Watch did not return fn's error within the test's deadline")
			}
		}
	})

	t.Run("a path outside the root is refused with its reason", func(t *testing.T) {
		err := watcher.Watch(ctx, &hashlinev1.WatchRequest{Path: "../elsewhere"}, func(*hashlinev1.WatchResponse) error { return nil })
		if !errors.Is(err, &client.Error{Reason: "OUTSIDE_ROOT"}) {
			t.Errorf("err = %v, want reason OUTSIDE_ROOT", err)
		}
	})
}
