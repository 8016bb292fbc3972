package main

import (
	"os"
	"path/filepath"
	"testing"
)

func saves(m map[string]string) func(string) string {
	return func(c string) string { return m[c] }
}

func TestDetect(t *testing.T) {
	for _, tc := range []struct {
		name  string
		saves map[string]string
		want  string
	}{
		{"empty tables default to legacy, as kind decides", nil, "legacy"},
		{"more nft rules", map[string]string{
			"iptables-nft-save":    "*nat\n:DOCKER_OUTPUT - [0:0]\n-A OUTPUT -d 127.0.0.11/32 -j DOCKER_OUTPUT\n-A POSTROUTING -j X\nCOMMIT\n",
			"iptables-legacy-save": "*filter\n-A INPUT -j ACCEPT\n",
		}, "nft"},
		{"more legacy rules", map[string]string{
			"iptables-legacy-save": "-A A\n-A B\n",
			"ip6tables-nft-save":   "-A C\n",
		}, "legacy"},
		{"kubelet hint wins over counts", map[string]string{
			"iptables-legacy-save": "-A A\n-A B\n-A C\n",
			"iptables-nft-save":    "*mangle\n:KUBE-IPTABLES-HINT - [0:0]\nCOMMIT\n",
		}, "nft"},
		{"legacy kubelet canary", map[string]string{
			"ip6tables-legacy-save": "*mangle\n:KUBE-KUBELET-CANARY - [0:0]\n",
			"iptables-nft-save":     "-A A\n-A B\n",
		}, "legacy"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := detect(saves(tc.saves)); got != tc.want {
				t.Fatalf("detect = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestRelinkPointsPlainNamesAtMode(t *testing.T) {
	dir := t.TempDir()
	for _, n := range plainNames {
		if err := os.Symlink("iptables-wrapper", filepath.Join(dir, n)); err != nil {
			t.Fatal(err)
		}
	}
	relink(dir, "nft")
	for _, n := range plainNames {
		got, err := os.Readlink(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		if got != "xtables-nft-multi" {
			t.Errorf("%s -> %s, want xtables-nft-multi", n, got)
		}
	}
}
