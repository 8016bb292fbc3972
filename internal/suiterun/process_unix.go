//go:build unix

package suiterun

import (
	"os"
	"os/exec"
	"syscall"
)

// ownGroup puts the suite in a process group of its own: the terminal's
// Ctrl-C then reaches the CLI only, which passes it on once. Where it can,
// the suite is interrupted when the CLI dies (dieWithParent).
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	dieWithParent(cmd.SysProcAttr)
}

// interrupt sends the suite SIGINT (Ginkgo's CLI passes it to its processes).
func interrupt(cmd *exec.Cmd) { _ = cmd.Process.Signal(os.Interrupt) }

// kill ends the suite's whole process group.
func kill(cmd *exec.Cmd) { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
