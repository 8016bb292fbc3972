package remote

import (
	"errors"
	"fmt"
	"testing"
)

// Unreached tells WinRM failing to reach or hear the machine from the
// machine's own answer.
func TestUnreached(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{&Error{Kind: ErrAuth}, true},
		{&Error{Kind: ErrTimeout, also: ErrUnreachable}, true},
		{fmt.Errorf("step: %w", &Error{Kind: ErrConnLost}), true},
		{&Error{Kind: ErrTLS}, true},
		{&Error{Kind: ErrRemote}, false},
		{&Error{Kind: ErrExit}, false},
		{errors.New("the machine said no"), false},
		{nil, false},
	} {
		if got := Unreached(tc.err); got != tc.want {
			t.Errorf("Unreached(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
