// Command standin serves the WS-Management stand-in (wsmantest) on a
// network address, as the WinRM service of a simulated machine: the init of
// the libvirt provider's stand-in guest (infra/vms/libvirt/standin) runs it
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

	"github.com/winconform/winconform/infra/windows/internal/wsmantest"
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

// hostnameScript is a script that prints the machine's name: hostname
// (hostname.exe, in cmd or PowerShell) or $env:COMPUTERNAME.
var hostnameScript = regexp.MustCompile(`(?i)^\s*(hostname(\.exe)?|\$env:COMPUTERNAME|\[System\.Net\.Dns\]::GetHostName\(\))\s*;?\s*$`)

// reply is the simulated machine's answer to one command: its name for a
// script that asks for it (Windows prints NetBIOS names in upper case for
// $env:COMPUTERNAME, the DNS host name as set for hostname), nothing for an
// empty script, and an error naming the command for anything else.
func reply(name string, c *wsmantest.Call) wsmantest.Reply {
	script := strings.TrimSpace(c.Script)
	if !c.PowerShell {
		script = strings.TrimSpace(c.CommandLine())
	}
	switch {
	case script == "":
		return wsmantest.Reply{}
	case hostnameScript.MatchString(script):
		if strings.Contains(strings.ToLower(script), "computername") {
			return wsmantest.Reply{Stdout: strings.ToUpper(name) + "\r\n"}
		}
		return wsmantest.Reply{Stdout: name + "\r\n"}
	}
	return wsmantest.Reply{
		Stderr:   fmt.Sprintf("the stand-in guest runs only hostname and $env:COMPUTERNAME, not %q\r\n", script),
		ExitCode: 1,
	}
}
