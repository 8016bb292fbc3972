package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"testing"
)

// dialError wraps err as net.Dial does.
func dialError(err error) error {
	return &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", err)}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"nil", nil, ""},
		{"no such host", &net.DNSError{Err: "no such host", Name: "x.invalid", IsNotFound: true}, classDNS},
		{"server failure", &net.DNSError{Err: "server misbehaving", Name: "x"}, classDNS},
		{"dns timeout", &net.DNSError{Err: "i/o timeout", Name: "x", IsTimeout: true}, classTimeout},
		{"dns inside dial", &net.OpError{Op: "dial", Err: &net.DNSError{Err: "no such host", IsNotFound: true}}, classDNS},
		{"context deadline", fmt.Errorf("get: %w", context.DeadlineExceeded), classTimeout},
		{"I/O deadline", &net.OpError{Op: "read", Err: os.ErrDeadlineExceeded}, classTimeout},
		{"http EOF", &url.Error{Op: "Get", URL: "http://x/", Err: io.EOF}, classReset},
		{"decided by the check", withClass(classMismatch, errors.New("wrong answer")), classMismatch},
		{"decided, wrapping a timeout", withClass(classHTTPStatus, os.ErrDeadlineExceeded), classHTTPStatus},
		{"unsupported", fmt.Errorf("raw socket: %w", errors.ErrUnsupported), classUnsupported},
		{"anything else", errors.New("boom"), classOther},
	}
	for _, tt := range tests {
		if got := classify(tt.err); got != tt.want {
			t.Errorf("%s: classify(%v) = %q, want %q", tt.name, tt.err, got, tt.want)
		}
	}
}

// TestClassifyErrnos checks this OS's table through the wrapping net.Dial
// applies, and that the table covers every network class.
func TestClassifyErrnos(t *testing.T) {
	covered := map[string]bool{}
	for _, ec := range errnoClasses {
		if got := classify(dialError(ec.errno)); got != ec.class {
			t.Errorf("errno %d (%v): class %q, want %q", uintptr(ec.errno), ec.errno, got, ec.class)
		}
		covered[ec.class] = true
	}
	for _, class := range []string{classRefused, classReset, classUnreachable, classTimeout} {
		if !covered[class] {
			t.Errorf("no errno maps to %s", class)
		}
	}
}
