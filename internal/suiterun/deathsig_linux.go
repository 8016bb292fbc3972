package suiterun

import "syscall"

// dieWithParent has the kernel interrupt the suite when the CLI that
// started it dies (SIGKILL, a crash): the suite then cleans up and reports
// as on Ctrl-C instead of running on unseen, with nobody to read it.
func dieWithParent(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGINT }
