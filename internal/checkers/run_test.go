//go:build unix

package checkers

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// stickyDir is a directory like the system's /tmp: every user may create
// entries in it, and only an entry's owner may move or remove it.
func stickyDir(t *testing.T) string {
	t.Helper()
	dir := sharedDir(t)
	if err := os.Chmod(dir, 0o777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	return dir
}

// entries is what dir holds, by name.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// TestRootNeverWritesThroughALinkTheCommandsUserPlanted: whatever the
// user commands run as plants in a run's directory once it may write
// there (a link in place of the copy of the content, a link to a
// directory in place of the directory itself), the server writes nothing
// through it: the file a link names is left as it was. A server running
// as root must not be made to write where the command's user may not.
func TestRootNeverWritesThroughALinkTheCommandsUserPlanted(t *testing.T) {
	t.Parallel()
	runs := stickyDir(t)
	victimDir := t.TempDir()
	victim := filepath.Join(victimDir, "victim")
	if err := os.WriteFile(victim, []byte("the server's own file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	planted := false
	o := Options{TempDir: runs, handedOver: func(work string) {
		// As the command's user could: its run directory is its own, so
		// it may replace anything in it.
		copyPath := filepath.Join(work, "a.txt")
		if err := os.Remove(copyPath); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Error(err)
		}
		if err := os.Symlink(victim, copyPath); err != nil {
			t.Error(err)
		}
		planted = true
	}}
	r := rule(t, "*.txt=cat {}")
	out := r.run(context.Background(), "a.txt", []byte("the agent's content\n"), o, true, 0)
	if !planted {
		t.Fatal("the hook did not run")
	}
	if b, err := os.ReadFile(victim); err != nil || string(b) != "the server's own file\n" {
		t.Errorf("the file a planted link names now holds %q (%v): the server wrote through the link", b, err)
	}
	if got := entries(t, runs); len(got) != 0 {
		t.Errorf("the run left %q", got)
	}
	_ = out
}

// TestRunDirectoryIsRemoved: the run's directory goes with everything in
// it however the command ends and whatever it did to it: moved it,
// locked a directory in it, left a child running, ran out of time.
func TestRunDirectoryIsRemoved(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, rule string }{
		{"moved", `*=sh -c 'mv "$HOME" "$HOME.moved"; echo moved'`},
		{"locked", `*=sh -c 'mkdir -p "$HOME/sub/deeper" && touch "$HOME/sub/deeper/f" && chmod 0 "$HOME/sub/deeper" "$HOME/sub"'`},
		{"child left", `*=sh -c 'sleep 60 > /dev/null 2>&1 &'`},
		{"timed out", `*=sh -c 'touch "$HOME/x"; sleep 60'`},
		{"a copy", `*=sh -c 'cp {} "$HOME/copy"; chmod 0 "$HOME"'`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			runs := stickyDir(t)
			r := rule(t, tt.rule)
			r.run(context.Background(), "a.txt", []byte("x\n"), Options{TempDir: runs, Timeout: 300 * time.Millisecond}, true, 0)
			if got := entries(t, runs); len(got) != 0 {
				t.Errorf("the run left %q in its temporary directory", got)
			}
		})
	}
}

// TestCommandsRunInASessionOfTheirOwn: a command has no controlling
// terminal of the server's (it could push input into the operator's
// shell through it) and leads a session, and so a process group, of its
// own.
func TestCommandsRunInASessionOfTheirOwn(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/self/stat")
	}
	r := rule(t, `*=sh -c 'cut -d" " -f6 /proc/self/stat'`)
	out := r.run(context.Background(), "a", nil, Options{TempDir: sharedDir(t)}, true, 0)
	if out.failed != "" || out.exit != 0 {
		t.Fatalf("%+v", out)
	}
	sid, err := unix.Getsid(0)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(out.output)); got == "" || got == "0" || got == itoa(sid) {
		t.Errorf("the command's session is %q, the server's %d: want one of its own", got, sid)
	}
}

func itoa(n int) string {
	b := []byte{}
	for {
		b = append([]byte{byte('0' + n%10)}, b...)
		if n /= 10; n == 0 {
			return string(b)
		}
	}
}

// TestOutputOfACommandThatEndedIsTaken: a command that ends on its own
// has its word taken, even when a process it started is still running
// with its output open: that process is killed with its group, and the
// output is the command's.
func TestOutputOfACommandThatEndedIsTaken(t *testing.T) {
	t.Parallel()
	r := rule(t, `*.txt=sh -c 'echo "-:1: found"; sleep 60 & exit 0'`)
	rep := r.Check(context.Background(), nil, "a.txt", nil, []byte("x\n"), Options{TempDir: sharedDir(t)})
	if rep.NotChecked != "" || len(rep.Findings) != 1 || rep.Findings[0].Message != "found" {
		t.Errorf("%+v, want the finding", rep)
	}
}

// TestOutputHeldOpenIsNotTrusted: a process the command started in a
// session of its own is out of the group killed when the command ends;
// when it keeps the command's output open, what the command printed may
// not be all of it, and the run is not taken.
func TestOutputHeldOpenIsNotTrusted(t *testing.T) {
	t.Parallel()
	// The escaped process prints until its output is closed; the command
	// ends once it is out of its group.
	r := rule(t, `*=sh -c 'setsid sh -c "touch ready; while echo x; do sleep 0.05; done" & while [ ! -e ready ]; do sleep 0.01; done'`)
	out := r.run(context.Background(), "a", nil, Options{TempDir: sharedDir(t)}, true, 0)
	if !strings.Contains(out.failed, "kept its output open") {
		t.Errorf("%+v, want the run not taken", out)
	}
}

// TestSearchPathRefusesRelativeEntries: a PATH entry that is empty, "."
// or relative would find a command's program, and the programs it runs,
// in the current directory: the server's at start (the workspace, often),
// the run's directory (where the content is) later. It is refused.
func TestSearchPathRefusesRelativeEntries(t *testing.T) {
	dir := t.TempDir()
	tool := filepath.Join(dir, "hashline-test-tool")
	if err := os.Mkdir(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{tool, filepath.Join(dir, "bin", "hashline-test-tool")} {
		if err := os.WriteFile(p, []byte("#!/bin/sh\ncat\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	for _, path := range []string{".:/usr/bin:/bin", ":/usr/bin:/bin", "/usr/bin::/bin", "/usr/bin:/bin:", "bin:/usr/bin"} {
		t.Setenv("PATH", path)
		r, err := Parse("*=hashline-test-tool")
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Resolve(); err == nil || !strings.Contains(err.Error(), "not an absolute directory") {
			t.Errorf("PATH=%s: Resolve: %v (program %q), want a refusal of the relative entry", path, err, r.Path)
		}
	}
	t.Setenv("PATH", "/usr/bin:/bin")
	r, _ := Parse("*=./hashline-test-tool")
	if err := r.Resolve(); err != nil || r.Path != tool {
		t.Errorf("an explicit path: %v, %q", err, r.Path)
	}
	if env := environ("/x"); !slices.Contains(env, "PATH=/usr/bin:/bin") {
		t.Errorf("environ %q", env)
	}
}

// TestCheckDirRefusesDirectoriesOthersCanChange: the runs' directories
// may be made only where no other user can move what the server makes:
// in directories of root's or the server's user's, writable by others
// only with the sticky bit.
func TestCheckDirRefusesDirectoriesOthersCanChange(t *testing.T) {
	t.Parallel()
	if err := CheckDir(stickyDir(t)); err != nil {
		t.Errorf("a sticky directory, as /tmp: %v", err)
	}
	if err := CheckDir(sharedDir(t)); err == nil || !strings.Contains(err.Error(), "sticky") {
		t.Errorf("a directory every user may write, not sticky: %v", err)
	}
	if os.Geteuid() == 0 {
		other := stickyDir(t)
		if err := os.Chown(other, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		if err := CheckDir(other); err == nil || !strings.Contains(err.Error(), "another user") {
			t.Errorf("a directory of another user's: %v", err)
		}
	}
}

// TestFileNamesAreNotOptions: the copy's path replaces {} whole and is
// absolute, so a file named like an option is read as a file.
func TestFileNamesAreNotOptions(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"-n", "--version", "-"} {
		r := rule(t, "*=cat {}")
		out := r.run(context.Background(), name, []byte("a\nb\n"), Options{TempDir: sharedDir(t)}, true, 0)
		if out.failed != "" || out.exit != 0 || string(out.output) != "a\nb\n" {
			t.Errorf("%q: %+v", name, out)
		}
	}
}
