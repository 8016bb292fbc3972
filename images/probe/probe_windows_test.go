package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

// These tests run on Windows only (the Windows runners of
// .github/workflows/windows.yml): the probe's Windows files against the
// runner's own network stack, resolver settings and Winsock errors.

// ownIPv4 returns an IPv4 address of an interface of this machine that is
// up and not loopback.
func ownIPv4(t *testing.T) net.IP {
	t.Helper()
	ifaces, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	for _, iface := range ifaces {
		if iface.Flags&net.FlagUp == 0 || iface.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, _ := iface.Addrs()
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil {
				return n.IP.To4()
			}
		}
	}
	t.Fatal("no IPv4 address on an interface that is up")
	return nil
}

func TestWindowsICMPEchoesLoopbackAndOwnAddress(t *testing.T) {
	for _, ip := range []net.IP{net.IPv4(127, 0, 0, 1), ownIPv4(t)} {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		err := echoICMP(ctx, ip, newNonce())
		cancel()
		if err != nil {
			t.Errorf("ICMP echo to %s: %v (class %s)", ip, err, classify(err))
		}
	}
}

func TestWindowsConnectICMP(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"connect", "--timeout", "3s", "icmp://127.0.0.1", "icmp://" + ownIPv4(t).String()}, strings.NewReader(""), &out, &errOut)
	if code != exitOK {
		t.Fatalf("probe connect exited %d: %s", code, errOut.String())
	}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var r result
		if err := json.Unmarshal([]byte(line), &r); err != nil || !r.OK || r.Detail == nil || r.Detail.Remote == "" {
			t.Errorf("result %s: %+v, %v", line, r, err)
		}
	}
}

func TestWindowsICMPStatusClasses(t *testing.T) {
	ip := net.IPv4(192, 0, 2, 1)
	for status, want := range map[uint32]string{
		ipReqTimedOut: classTimeout, ipDestHostUnreachable: classUnreachable, ipDestNetUnreachable: classUnreachable,
		ipTTLExpiredTransit: classUnreachable, errorAccessDenied: classUnsupported, 99999: classOther,
	} {
		if got := classify(ipStatusError(status, ip)); got != want {
			t.Errorf("status %d: class %q, want %q", status, got, want)
		}
	}
}

// TestWindowsDNSConfigIsTheResolvers: the servers the probe reads are among
// those Windows's own cmdlet lists for the machine's adapters.
func TestWindowsDNSConfigIsTheResolvers(t *testing.T) {
	c, err := readDNSConfig()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("probe dnsconfig: %+v", c)
	if c.Source != "windows" || len(c.Servers) == 0 {
		t.Fatalf("dnsconfig %+v: want servers from Windows", c)
	}
	out, err := exec.Command("powershell.exe", "-NoProfile", "-NonInteractive", "-Command",
		"Get-DnsClientServerAddress | ForEach-Object { $_.ServerAddresses }").Output()
	if err != nil {
		t.Fatalf("Get-DnsClientServerAddress: %v", err)
	}
	listed := strings.Fields(string(out))
	for _, s := range c.Servers {
		if net.ParseIP(s) == nil {
			t.Errorf("server %q is not an IP address", s)
		}
		if !slices.Contains(listed, s) {
			t.Errorf("server %s is not one Get-DnsClientServerAddress lists (%v)", s, listed)
		}
	}
	var outJSON bytes.Buffer
	if code := run(context.Background(), []string{"dnsconfig"}, nil, &outJSON, &bytes.Buffer{}); code != exitOK || !strings.Contains(outJSON.String(), `"source":"windows"`) {
		t.Errorf("probe dnsconfig exited %d: %s", code, outJSON.String())
	}
}

// TestWindowsRefusedConnectionIsClassified: a TCP connection to a closed
// local port fails with Winsock's error, which the probe classes refused.
func TestWindowsRefusedConnectionIsClassified(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, err = net.DialTimeout("tcp", addr, 10*time.Second)
	if err == nil {
		t.Fatalf("a connection to the closed port %s succeeded", addr)
	}
	if got := classify(err); got != classRefused {
		t.Errorf("%v: class %q, want %q", err, got, classRefused)
	}
}
