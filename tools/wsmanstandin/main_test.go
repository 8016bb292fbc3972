package main

import (
	"strings"
	"testing"

	"github.com/winconform/winconform/testing/wsmantest"
)

// TestReply: the stand-in guest answers the scripts that print a Windows
// machine's name as Windows does: hostname.exe and
// [System.Net.Dns]::GetHostName() the DNS host name as set;
// $env:COMPUTERNAME and [Environment]::MachineName the NetBIOS name, in
// upper case and at most 15 characters (.NET documents MachineName as "the
// NetBIOS name of this local computer"; NetBIOS names are 15 characters and
// Windows stores the computer's in upper case). Anything else fails,
// naming the script, so a test never takes the stand-in for Windows.
func TestReply(t *testing.T) {
	const name = "win-nightly-1234-1"
	for _, c := range []struct {
		call        wsmantest.Call
		out, err    string
		exitNonZero bool
	}{
		{call: wsmantest.Call{PowerShell: true, Script: "hostname"}, out: name + "\r\n"},
		{call: wsmantest.Call{Command: "hostname.exe"}, out: name + "\r\n"},
		{call: wsmantest.Call{PowerShell: true, Script: "[System.Net.Dns]::GetHostName()"}, out: name + "\r\n"},
		{call: wsmantest.Call{PowerShell: true, Script: "$env:COMPUTERNAME"}, out: "WIN-NIGHTLY-123\r\n"},
		{call: wsmantest.Call{PowerShell: true, Script: "[Environment]::MachineName"}, out: "WIN-NIGHTLY-123\r\n"},
		{call: wsmantest.Call{PowerShell: true, Script: "  "}, out: ""},
		{call: wsmantest.Call{PowerShell: true, Script: "Get-Service kubelet"}, err: "Get-Service kubelet", exitNonZero: true},
	} {
		r := reply(name, &c.call)
		if r.Stdout != c.out || (r.ExitCode != 0) != c.exitNonZero || !strings.Contains(r.Stderr, c.err) {
			t.Errorf("%q: stdout %q, stderr %q, exit %d; want stdout %q, an error naming %q: %v", c.call.Script+c.call.Command, r.Stdout, r.Stderr, r.ExitCode, c.out, c.err, c.exitNonZero)
		}
	}
}
