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

// own hands the private directory, or the copy in it, to the account.
func (a *account) own(path string) error {
	if a == nil {
		return nil
	}
	return os.Lchown(path, int(a.uid), int(a.gid))
}

// group runs cmd in a process group of its own, as the account, and makes
// its cancellation kill the whole group.
func group(cmd *exec.Cmd, a *account) {
	attr := &syscall.SysProcAttr{Setpgid: true}
	if a != nil {
		attr.Credential = &syscall.Credential{Uid: a.uid, Gid: a.gid, Groups: []uint32{}}
	}
	cmd.SysProcAttr = attr
	cmd.Cancel = func() error {
		killGroup(cmd.Process.Pid)
		return nil
	}
}

// killGroup kills every process of the group the command led. Its id is
// not handed to another process while the group has members, so after
// the leader is reaped this reaches only what it left behind.
func killGroup(pid int) { _ = syscall.Kill(-pid, syscall.SIGKILL) }

// signaled names the signal that ended the command, "" when it exited.
func signaled(e *exec.ExitError) string {
	if ws, ok := e.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return "signal " + ws.Signal().String()
	}
	return ""
}

// environ is a command's whole environment: the server's PATH (programs
// it runs find theirs) and its private directory as HOME and TMPDIR;
// nothing else of the server's.
func environ(dir string) []string {
	path := os.Getenv("PATH")
	if path == "" {
		path = "/usr/local/bin:/usr/bin:/bin"
	}
	return []string{"PATH=" + path, "HOME=" + dir, "TMPDIR=" + dir}
}

// CheckDir refuses dir as the place of the runs' private directories
// when the user commands run as cannot enter it: a server running as root
// runs them as nobody, for whom a directory private to root (a TMPDIR of
// mode 0700, say) is closed.
func CheckDir(dir string) error {
	a, err := runAs()
	if a == nil || err != nil {
		return err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	for p := abs; ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err != nil {
			return err
		}
		m := fi.Mode().Perm()
		st, _ := fi.Sys().(*syscall.Stat_t)
		switch {
		case m&0o001 != 0:
		case st != nil && st.Uid == a.uid && m&0o100 != 0:
		case st != nil && st.Gid == a.gid && m&0o010 != 0:
		default:
			return fmt.Errorf("check and format commands run as the user nobody (uid %d: the server runs as root, and gives them none of its privileges), who cannot enter %s (mode %v), where their private directories would be: set TMPDIR to a directory every user can enter, such as /tmp", a.uid, p, fi.Mode().Perm())
		}
		if filepath.Dir(p) == p {
			return nil
		}
	}
}
