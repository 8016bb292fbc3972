//go:build !windows

package main

import "syscall"

var errnoClasses = []errnoClass{
	{syscall.ECONNREFUSED, classRefused},
	{syscall.ECONNRESET, classReset},
	{syscall.ECONNABORTED, classReset},
	{syscall.EPIPE, classReset},
	{syscall.ENETUNREACH, classUnreachable},
	{syscall.EHOSTUNREACH, classUnreachable},
	{syscall.ENETDOWN, classUnreachable},
	{syscall.EHOSTDOWN, classUnreachable},
	{syscall.ETIMEDOUT, classTimeout},
}
