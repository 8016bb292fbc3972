package main

import "syscall"

// Windows reports network failures as Winsock (WSAE*) or Win32 (ERROR_*)
// codes; the syscall.E* constants of package syscall are Go inventions on
// Windows that the network stack never returns.
const (
	errorNetnameDeleted     syscall.Errno = 64   // ERROR_NETNAME_DELETED
	errorSemTimeout         syscall.Errno = 121  // ERROR_SEM_TIMEOUT
	errorConnectionRefused  syscall.Errno = 1225 // ERROR_CONNECTION_REFUSED
	errorNetworkUnreachable syscall.Errno = 1231 // ERROR_NETWORK_UNREACHABLE
	errorHostUnreachable    syscall.Errno = 1232 // ERROR_HOST_UNREACHABLE
	errorProtocolUnreach    syscall.Errno = 1233 // ERROR_PROTOCOL_UNREACHABLE
	errorPortUnreachable    syscall.Errno = 1234 // ERROR_PORT_UNREACHABLE
	errorConnectionAborted  syscall.Errno = 1236 // ERROR_CONNECTION_ABORTED
	wsaeNetDown             syscall.Errno = 10050
	wsaeNetUnreach          syscall.Errno = 10051
	wsaeTimedOut            syscall.Errno = 10060
	wsaeConnRefused         syscall.Errno = 10061
	wsaeHostDown            syscall.Errno = 10064
	wsaeHostUnreach         syscall.Errno = 10065
)

var errnoClasses = []errnoClass{
	{wsaeConnRefused, classRefused},
	{errorConnectionRefused, classRefused},
	{errorPortUnreachable, classRefused},
	{syscall.WSAECONNRESET, classReset},
	{syscall.WSAECONNABORTED, classReset},
	{errorNetnameDeleted, classReset},
	{errorConnectionAborted, classReset},
	{wsaeNetUnreach, classUnreachable},
	{wsaeHostUnreach, classUnreachable},
	{wsaeNetDown, classUnreachable},
	{wsaeHostDown, classUnreachable},
	{errorNetworkUnreachable, classUnreachable},
	{errorHostUnreachable, classUnreachable},
	{errorProtocolUnreach, classUnreachable},
	{wsaeTimedOut, classTimeout},
	{errorSemTimeout, classTimeout},
}
