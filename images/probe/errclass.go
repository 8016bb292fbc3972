package main

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
)

// Error classes of a connect result.
const (
	classTimeout       = "timeout"
	classRefused       = "refused"
	classReset         = "reset"
	classUnreachable   = "unreachable" // no route, host or network unreachable
	classDNS           = "dns"         // the name did not resolve
	classHTTPStatus    = "http-status" // answered, but not 2xx
	classMismatch      = "mismatch"    // answered, but not what was expected
	classUnsupported   = "unsupported" // the OS or our privileges forbid the check
	classInvalidTarget = "invalid-target"
	classOther         = "other"
)

// errnoClass maps an OS error number to an error class; errnoClasses, the
// per-OS table, lives in errno_windows.go and errno_other.go.
type errnoClass struct {
	errno syscall.Errno
	class string
}

// classedError is an error whose class a check decided itself rather than
// one derived from the underlying system error.
type classedError struct {
	class string
	err   error
}

func (e *classedError) Error() string { return e.err.Error() }
func (e *classedError) Unwrap() error { return e.err }

func withClass(class string, err error) error { return &classedError{class: class, err: err} }

// classify returns the error class of err, "" for nil.
func classify(err error) string {
	if err == nil {
		return ""
	}
	var ce *classedError
	if errors.As(err, &ce) {
		return ce.class
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		if dnsErr.IsTimeout {
			return classTimeout
		}
		return classDNS
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) {
		return classTimeout
	}
	for _, ec := range errnoClasses {
		if errors.Is(err, ec.errno) {
			return ec.class
		}
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return classTimeout
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		// The peer closed the connection without answering.
		return classReset
	}
	if errors.Is(err, errors.ErrUnsupported) {
		return classUnsupported
	}
	return classOther
}
