package daemon

import (
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestListenUnixSocket covers what listen does with the socket file it is
// given: it creates it private, replaces one a dead server left, and
// refuses one a live server holds.
func TestListenUnixSocket(t *testing.T) {
	tests := []struct {
		name    string
		before  func(t *testing.T, path string) // what is at path first
		wantErr string                          // empty: listen succeeds
	}{
		{name: "nothing there", before: func(*testing.T, string) {}},
		{name: "left by a dead server", before: func(t *testing.T, path string) {
			l, err := net.Listen("unix", path)
			if err != nil {
				t.Fatal(err)
			}
			l.(*net.UnixListener).SetUnlinkOnClose(false)
			l.Close()
			if _, err := os.Lstat(path); err != nil {
				t.Fatalf("the dead socket file is gone already: %v", err)
			}
		}},
		{name: "held by a live server", wantErr: "another server is listening there", before: func(t *testing.T, path string) {
			l, err := net.Listen("unix", path)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { l.Close() })
			go func() {
				for {
					c, err := l.Accept()
					if err != nil {
						return
					}
					c.Close()
				}
			}()
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Short: socket paths are limited to about 100 bytes.
			dir, err := os.MkdirTemp("", "hl")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(dir) })
			path := filepath.Join(dir, "s.sock")
			tt.before(t, path)

			lis, closeLis, err := listen("unix://" + path)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("listen: %v, want an error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("listen: %v", err)
			}
			defer closeLis()
			if runtime.GOOS != "windows" {
				fi, err := os.Lstat(path)
				if err != nil {
					t.Fatal(err)
				}
				if m := fi.Mode().Perm(); m != 0o600 {
					t.Errorf("socket mode %v, want 0600", m)
				}
			}
			// The new socket is the one answering.
			accepted := make(chan error, 1)
			go func() {
				c, err := lis.Accept()
				if err == nil {
					c.Close()
				}
				accepted <- err
			}()
			c, err := net.Dial("unix", path)
			if err != nil {
				t.Fatalf("dial the new socket: %v", err)
			}
			c.Close()
			if err := <-accepted; err != nil {
				t.Fatalf("accept: %v", err)
			}
		})
	}
}

func TestListenBadAddress(t *testing.T) {
	for _, addr := range []string{"unix://", "256.0.0.1:0"} {
		if _, _, err := listen(addr); err == nil || !strings.HasPrefix(err.Error(), "--listen "+addr) {
			t.Errorf("listen(%q): %v, want an error naming the flag and address", addr, err)
		}
	}
}
