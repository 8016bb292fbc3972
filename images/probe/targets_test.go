package main

import (
	"net"
	"testing"
)

func TestParseTarget(t *testing.T) {
	tests := []struct {
		in   string
		want target
	}{
		{"tcp://10.0.0.1:8081", target{kind: kindTCP, host: "10.0.0.1", port: "8081"}},
		{"TCP://web.default.svc:80", target{kind: kindTCP, host: "web.default.svc", port: "80"}},
		{"udp://[fd00::1]:53", target{kind: kindUDP, host: "fd00::1", port: "53"}},
		{"http://web:8080/json", target{kind: kindHTTP, host: "web", port: "8080", url: "http://web:8080/json"}},
		{"http://web", target{kind: kindHTTP, host: "web", port: "80", url: "http://web"}},
		{"http://10.0.0.1/env?name=A", target{kind: kindHTTP, host: "10.0.0.1", port: "80", url: "http://10.0.0.1/env?name=A"}},
		{"dns://kubernetes.default", target{kind: kindDNS, host: "kubernetes.default"}},
		{"dns://web.ns.svc.cluster.local.?expect=10.96.0.10", target{kind: kindDNS, host: "web.ns.svc.cluster.local.", expect: net.ParseIP("10.96.0.10")}},
		{"icmp://10.0.0.1", target{kind: kindICMP, host: "10.0.0.1"}},
		{"icmp://node-1", target{kind: kindICMP, host: "node-1"}},
	}
	for _, tt := range tests {
		got, err := parseTarget(tt.in)
		if err != nil {
			t.Errorf("parseTarget(%q): %v", tt.in, err)
			continue
		}
		if got.kind != tt.want.kind || got.host != tt.want.host || got.port != tt.want.port ||
			got.url != tt.want.url || !got.expect.Equal(tt.want.expect) {
			t.Errorf("parseTarget(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}

func TestParseTargetRejects(t *testing.T) {
	for _, in := range []string{
		"",
		"10.0.0.1:80",
		"tcp:10.0.0.1:80",
		"tcp://10.0.0.1",
		"tcp://10.0.0.1:",
		"tcp://10.0.0.1:0",
		"tcp://10.0.0.1:65536",
		"tcp://10.0.0.1:http",
		"tcp://:80",
		"tcp://10.0.0.1:80/path",
		"tcp://10.0.0.1:80?x=1",
		"tcp://10.0.0.1:80#id",
		"udp://user@10.0.0.1:53",
		"http://",
		"http://web:0/",
		"http://web/#frag",
		"https://web/",
		"dns://",
		"dns://web:53",
		"dns://web/path",
		"dns://web?expect=not-an-ip",
		"dns://web?expect=10.0.0.1&expect=10.0.0.2",
		"dns://web?other=1",
		"icmp://10.0.0.1:7",
		"icmp://[fd00::1]",
		"icmp://10.0.0.1/x",
		" tcp://10.0.0.1:80",
		"tcp://[::1:80",
	} {
		if got, err := parseTarget(in); err == nil {
			t.Errorf("parseTarget(%q) = %+v, want an error", in, got)
		}
	}
}
