//go:build !unix

package checkers

import (
	"os"
	"os/exec"
)

// account is the user a command runs as; elsewhere than on Unix commands
// run as the server's user.
type account struct{}

func runAs() (*account, error) { return nil, nil }

func (a *account) own(string) error { return nil }

// group makes the command's cancellation kill it; its children are not
// reached on this platform.
func group(cmd *exec.Cmd, _ *account) {}

func killGroup(int) {}

func signaled(*exec.ExitError) string { return "" }

// environ is a command's whole environment: PATH, the system root and its
// private directory as HOME, TEMP and TMP.
func environ(dir string) []string {
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "TEMP=" + dir, "TMP=" + dir, "USERPROFILE=" + dir}
	if r := os.Getenv("SystemRoot"); r != "" {
		env = append(env, "SystemRoot="+r)
	}
	return env
}

// CheckDir refuses dir as the place of the runs' private directories; on
// this platform commands run as the server's user, who made it.
func CheckDir(dir string) error { return nil }
