package kwok

import (
	"errors"
	"os"
	"syscall"
)

// sysProcAttr puts kwok in its own process group and has the kernel kill it
// when the harness dies, so that a killed harness leaves no kwok behind.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

func terminate(p *os.Process) { _ = syscall.Kill(-p.Pid, syscall.SIGTERM) }

func forceKill(p *os.Process) { _ = syscall.Kill(-p.Pid, syscall.SIGKILL) }

func pidAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
