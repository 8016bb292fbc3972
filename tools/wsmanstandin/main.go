// Command wsmanstandin serves the WS-Management stand-in (wsmantest) on a
// network address, as the WinRM service of a simulated machine: the init of
// the libvirt provider's stand-in guest (testing/libvirtguest) runs it
// on 5985, so that a VM made from that image answers the harness as a stock
// Windows Server's WinRM listener does (the unauthenticated wsmid:Identify,
// then NTLM with sealed messages over HTTP).
//
// It is not Windows: it runs a fixed set of commands (see reply) and
// answers any other with an error, so a VM made from it supports, and never
// counts as evidence of, a claim about Windows machines.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"regexp"
	"strings"
	"syscall"

	"github.com/winconform/winconform/testing/wsmantest"
)

func main() {
	addr := flag.String("addr", ":5985", "the address to listen on (WinRM's HTTP port by default)")
	user := flag.String("user", wsmantest.DefaultUser, "the account WinRM accepts")
	name := flag.String("name", "", "the machine's name, what hostname and $env:COMPUTERNAME print (the host name when empty)")
	flag.Parse()
	password := os.Getenv("STANDIN_PASSWORD")
	if password == "" {
		password = wsmantest.DefaultPassword
	}
	if *name == "" {
		*name, _ = os.Hostname()
	}
	srv, err := wsmantest.Start(
		wsmantest.WithAddr(*addr),
		wsmantest.WithCredentials(*user, password),
		wsmantest.WithHandler(func(c *wsmantest.Call) wsmantest.Reply { return reply(*name, c) }),
	)
	if err != nil {
		log.Fatalf("standin: %v", err)
	}
	log.Printf("standin: WS-Management on %s as %s", srv.URL(), *name)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	srv.Close()
}

// The scripts that print the machine's name: its DNS host name as set
// (hostname.exe, [System.Net.Dns]::GetHostName()), or its NetBIOS name
// ($env:COMPUTERNAME, [Environment]::MachineName, which .NET documents as
// "the NetBIOS name of this local computer"): the host name in upper case,
// cut to NetBIOS's 15 characters. Sources: learn.microsoft.com's "Computer
// Names" (windows/win32/sysinfo/computer-names: NetBIOS names are up to 15
// bytes and "by convention, are represented in uppercase"),
// SetComputerNameEx (ComputerNamePhysicalDnsHostname truncates the NetBIOS
// name to MAX_COMPUTERNAME_LENGTH), and NLog's machinename layout renderer
// (NLog/NLog wiki: Environment.MachineName is "limited to
// MAX_COMPUTERNAME_LENGTH which is 15 for Windows").
var (
	dnsNameScript     = regexp.MustCompile(`(?i)^\s*(hostname(\.exe)?|\[System\.Net\.Dns\]::GetHostName\(\))\s*;?\s*$`)
	netbiosNameScript = regexp.MustCompile(`(?i)^\s*(\$env:COMPUTERNAME|\[(System\.)?Environment\]::MachineName)\s*;?\s*$`)
)

// netbiosMax is the longest NetBIOS computer name.
const netbiosMax = 15

// reply is the simulated machine's answer to one command: its name for a
// script that asks for it, nothing for an empty script, and an error naming
// the command for anything else.
func reply(name string, c *wsmantest.Call) wsmantest.Reply {
	script := strings.TrimSpace(c.Script)
	if !c.PowerShell {
		script = strings.TrimSpace(c.CommandLine())
	}
	switch {
	case script == "":
		return wsmantest.Reply{}
	case dnsNameScript.MatchString(script):
		return wsmantest.Reply{Stdout: name + "\r\n"}
	case netbiosNameScript.MatchString(script):
		nb := strings.ToUpper(name)
		if len(nb) > netbiosMax {
			nb = nb[:netbiosMax]
		}
		return wsmantest.Reply{Stdout: nb + "\r\n"}
	}
	return wsmantest.Reply{
		Stderr:   fmt.Sprintf("the stand-in guest runs only hostname, $env:COMPUTERNAME and [Environment]::MachineName, not %q\r\n", script),
		ExitCode: 1,
	}
}
