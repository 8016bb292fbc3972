package main

import (
	"encoding/json"
	"fmt"
	"io"
)

// dnsConfig is the resolver configuration the pod's containers get, as
// `probe dnsconfig` prints it: the name servers, the search list, and where
// they were read ("/etc/resolv.conf" on Linux, "windows" on Windows). A spec
// compares it with what the cluster should set (the cluster DNS Service and
// <namespace>.svc.<domain>, svc.<domain>, <domain>).
type dnsConfig struct {
	Servers []string `json:"servers"`
	Search  []string `json:"search"`
	Source  string   `json:"source"`
}

// runDNSConfig prints the pod's resolver configuration as one JSON object.
func runDNSConfig(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("dnsconfig")
	err := fs.Parse(args)
	if err == nil && fs.NArg() > 0 {
		err = fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if err != nil {
		return reportArgsError("dnsconfig", err, stdout, stderr)
	}
	c, err := readDNSConfig()
	if err != nil {
		fmt.Fprintf(stderr, "probe dnsconfig: %v\n", err)
		return exitFailure
	}
	// Empty lists print as [], not null.
	if c.Servers == nil {
		c.Servers = []string{}
	}
	if c.Search == nil {
		c.Search = []string{}
	}
	if err := json.NewEncoder(stdout).Encode(c); err != nil {
		fmt.Fprintf(stderr, "probe dnsconfig: %v\n", err)
		return exitFailure
	}
	return exitOK
}
