//go:build !unix

package checkers

import (
	"os"
	"os/exec"
)

// account is the user a command runs as; elsewhere than on Unix commands
// run as the server's user.
type account struct{ uid, gid uint32 }

func runAs() (*account, error) { return nil, nil }

func (a *account) own(*os.File) error { return nil }

// procAttr: on this platform a command runs as the server's user, and
// only the command itself, not what it started, is killed.
func procAttr(*exec.Cmd, *account) {}

func killGroup(p *os.Process) { _ = p.Kill() }

func signaled(*exec.ExitError) string { return "" }

// defaultPath is the PATH of a server that has none.
const defaultPath = ""

// environ is a command's whole environment: PATH, the system root and its
// private directory as HOME, TEMP and TMP.
func environ(dir string) []string {
	env := []string{"PATH=" + absolutePath(), "HOME=" + dir, "TEMP=" + dir, "TMP=" + dir, "USERPROFILE=" + dir}
	if r := os.Getenv("SystemRoot"); r != "" {
		env = append(env, "SystemRoot="+r)
	}
	return env
}

// CheckDir refuses dir as the place of the runs' private directories; on
// this platform commands run as the server's user, who made it.
func CheckDir(dir string) error { return nil }
