//go:build !windows

package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
)

// resolvConfPath is the resolver configuration file; tests point it elsewhere.
var resolvConfPath = "/etc/resolv.conf"

// readDNSConfig reads the name servers and the search list of resolvConfPath.
func readDNSConfig() (dnsConfig, error) {
	f, err := os.Open(resolvConfPath)
	if err != nil {
		return dnsConfig{}, err
	}
	defer f.Close()
	servers, search, err := parseResolvConf(f)
	if err != nil {
		return dnsConfig{}, fmt.Errorf("reading %s: %w", resolvConfPath, err)
	}
	return dnsConfig{Servers: servers, Search: search, Source: resolvConfPath}, nil
}

// parseResolvConf reads resolv.conf(5) as the C library does: every
// nameserver line adds a server, and the last search or domain line sets the
// search list (domain d is the list d). Comments start with # or ;.
func parseResolvConf(r io.Reader) (servers, search []string, err error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if i := strings.IndexAny(line, "#;"); i >= 0 {
			line = line[:i]
		}
		fields := strings.Fields(line)
		if len(fields) < 2 {
			continue
		}
		switch fields[0] {
		case "nameserver":
			servers = append(servers, fields[1])
		case "search":
			search = fields[1:]
		case "domain":
			search = fields[1:2]
		}
	}
	return servers, search, sc.Err()
}
