//go:build unix

package checkers

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
)

// account is the user a command runs as: nil for the server's own.
type account struct{ uid, gid uint32 }

// nobody is the account a server running as root runs commands as: the
// system's "nobody", or 65534 (its usual ids) where it has none.
var nobody = sync.OnceValue(func() *account {
	a := &account{uid: 65534, gid: 65534}
	if u, err := user.Lookup("nobody"); err == nil {
		if id, err := strconv.ParseUint(u.Uid, 10, 32); err == nil {
			a.uid = uint32(id)
		}
		if id, err := strconv.ParseUint(u.Gid, 10, 32); err == nil {
			a.gid = uint32(id)
		}
	}
	return a
})

// runAs is the account commands run as: a server running as root gives
// them none of its privileges, and runs them as nobody; any other runs
// them as itself (it has no other user to become).
func runAs() (*account, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	return nobody(), nil
}

// own hands the copy of the content, open in f, to the account.
func (a *account) own(f *os.File) error {
	if a == nil {
		return nil
	}
	return f.Chown(int(a.uid), int(a.gid))
}

// procAttr runs cmd as the account, leading a session (so a process
// group, and no controlling terminal: the server's could be made to type
// into the operator's shell) of its own.
func procAttr(cmd *exec.Cmd, a *account) {
	attr := &syscall.SysProcAttr{Setsid: true}
	if a != nil {
		attr.Credential = &syscall.Credential{Uid: a.uid, Gid: a.gid, Groups: []uint32{}}
	}
	cmd.SysProcAttr = attr
}

// killGroup kills every process of the group (the session) the command
// led. On Linux the leader is not reaped before (awaitExit), so its id is
// still its group's; elsewhere it was reaped, and the id is another's
// only if the system handed it out again in between.
func killGroup(p *os.Process) { _ = syscall.Kill(-p.Pid, syscall.SIGKILL) }

// signaled names the signal that ended the command, "" when it exited.
func signaled(e *exec.ExitError) string {
	if ws, ok := e.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return "signal " + ws.Signal().String()
	}
	return ""
}

// environ is a command's whole environment: the server's PATH (programs
// it runs find theirs), but for entries that are not absolute (which
// SearchPath refuses at start), and its private directory as HOME and
// TMPDIR; nothing else of the server's.
func environ(dir string) []string {
	return []string{"PATH=" + absolutePath(), "HOME=" + dir, "TMPDIR=" + dir}
}

// defaultPath is the PATH of a server that has none.
const defaultPath = "/usr/local/bin:/usr/bin:/bin"

// CheckDir refuses dir as the place of the runs' private directories
// when another user could move or replace what the server makes there,
// and so have it write the copy of a content, or give a command a path,
// somewhere else (every directory on the way must be root's or the
// server's user's, and writable by others only with the sticky bit, as
// /tmp is); or when the user commands run as cannot enter it: a server
// running as root runs them as nobody, for whom a directory private to
// root (a TMPDIR of mode 0700, say) is closed.
func CheckDir(dir string) error {
	a, err := runAs()
	if err != nil {
		return err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	euid := uint32(os.Geteuid())
	for p := abs; ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err != nil {
			return err
		}
		m := fi.Mode()
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok {
			return fmt.Errorf("%s: no owner to check", p)
		}
		switch {
		case st.Uid != 0 && st.Uid != euid:
			return fmt.Errorf("the temporary directory %s, where check and format commands get their private directories, lies in %s, which belongs to another user (uid %d), who could move what the server makes there: set TMPDIR to a directory of the server's user or root, such as /tmp", abs, p, st.Uid)
		case m.Perm()&0o022 != 0 && m&os.ModeSticky == 0:
			return fmt.Errorf("the temporary directory %s, where check and format commands get their private directories, lies in %s (mode %v), which others than its owner may write without the sticky bit, and so move what the server makes there: set TMPDIR to a directory such as /tmp", abs, p, m.Perm())
		}
		if a != nil {
			switch {
			case m.Perm()&0o001 != 0:
			case st.Uid == a.uid && m.Perm()&0o100 != 0:
			case st.Gid == a.gid && m.Perm()&0o010 != 0:
			default:
				return fmt.Errorf("check and format commands run as the user nobody (uid %d: the server runs as root, and gives them none of its privileges), who cannot enter %s (mode %v), where their private directories would be: set TMPDIR to a directory every user can enter, such as /tmp", a.uid, p, m.Perm())
			}
		}
		if filepath.Dir(p) == p {
			return nil
		}
	}
}
