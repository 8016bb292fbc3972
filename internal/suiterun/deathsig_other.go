//go:build unix && !linux

package suiterun

import "syscall"

// dieWithParent: only Linux can signal a child when its parent dies.
func dieWithParent(*syscall.SysProcAttr) {}
