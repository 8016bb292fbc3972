//go:build !linux

package kwok

import (
	"os"
	"syscall"
)

func sysProcAttr() *syscall.SysProcAttr { return nil }

func terminate(p *os.Process) { _ = p.Kill() }

func forceKill(p *os.Process) { _ = p.Kill() }

// pidAlive cannot tell elsewhere; no node is taken for an orphan.
func pidAlive(int) bool { return true }
