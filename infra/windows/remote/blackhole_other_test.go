//go:build !linux

package remote_test

import "testing"

// blackholePort needs Linux's listen-queue behaviour.
func blackholePort(t *testing.T) int {
	t.Skip("a loopback black hole needs Linux")
	return 0
}
