package vsphere

import "time"

// SetKeepAliveIdle sets how often an idle session is kept alive, for the
// providers opened until the returned function restores it.
func SetKeepAliveIdle(d time.Duration) (restore func()) {
	old := keepAliveIdle
	keepAliveIdle = d
	return func() { keepAliveIdle = old }
}
