//go:build !unix

package suiterun

import (
	"os"
	"os/exec"
)

func ownGroup(*exec.Cmd)      {}
func interrupt(cmd *exec.Cmd) { _ = cmd.Process.Signal(os.Interrupt) }
func kill(cmd *exec.Cmd)      { _ = cmd.Process.Kill() }
