package kind

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/winconform/winconform/infra/windows"
)

const hash = "sha256:2f8a61bb81c3b0b1ccabd8ba24a5bd6d0a5b54bff6b3b1b5a85e1bb91ed6a1b4"

func TestParseJoinCommand(t *testing.T) {
	for _, out := range []string{
		"kubeadm join winconform-control-plane:6443 --token abcdef.0123456789abcdef --discovery-token-ca-cert-hash " + hash + " \n",
		"kubeadm join winconform-control-plane:6443 --token abcdef.0123456789abcdef \\\n\t--discovery-token-ca-cert-hash " + hash + "\n",
		"W0101 warning line\nkubeadm join winconform-control-plane:6443 --token=abcdef.0123456789abcdef --discovery-token-ca-cert-hash=" + hash,
	} {
		jc, err := ParseJoinCommand(out)
		if err != nil {
			t.Fatalf("%q: %v", out, err)
		}
		if jc.Endpoint != "winconform-control-plane:6443" || jc.Token != "abcdef.0123456789abcdef" || !slices.Equal(jc.CACertHashes, []string{hash}) {
			t.Errorf("%q: %+v", out, jc)
		}
	}
	two, err := ParseJoinCommand("kubeadm join a:6443 --token abcdef.0123456789abcdef --discovery-token-ca-cert-hash " + hash + " --discovery-token-ca-cert-hash " + strings.Replace(hash, "2f", "3f", 1))
	if err != nil || len(two.CACertHashes) != 2 {
		t.Errorf("two hashes: %+v %v", two, err)
	}
	for _, bad := range []string{"", "error: token create failed", "kubeadm join a:6443 --token nope"} {
		if _, err := ParseJoinCommand(bad); err == nil {
			t.Errorf("%q parsed", bad)
		} else if strings.Contains(err.Error(), "0123456789abcdef") {
			t.Errorf("the error shows the token: %v", err)
		}
	}
	if _, err := ParseJoinCommand("kubeadm join a:6443 --token abcdef.0123456789abcdef"); !errors.Is(err, windows.ErrJoinCommand) {
		t.Errorf("no hash: %v", err)
	}
}

func TestWindowsEndpoint(t *testing.T) {
	cfg := DefaultConfig()
	for _, addr := range []string{"", "127.0.0.1", "::1"} {
		cfg.Networking.APIServerAddress = addr
		_, err := WindowsEndpoint(cfg, "https://127.0.0.1:40000")
		if err == nil || !strings.Contains(err.Error(), "set networking.apiServerAddress") || !strings.Contains(err.Error(), "cannot reach") {
			t.Errorf("address %q: %v", addr, err)
		}
	}
	cfg.Networking.APIServerAddress = "192.168.56.1"
	if got, err := WindowsEndpoint(cfg, "https://192.168.56.1:40000"); err != nil || got != "192.168.56.1:40000" {
		t.Errorf("the kubeconfig's port: %q %v", got, err)
	}
	cfg.Networking.APIServerPort = 6443
	if got, err := WindowsEndpoint(cfg, "https://192.168.56.1:40000"); err != nil || got != "192.168.56.1:6443" {
		t.Errorf("apiServerPort: %q %v", got, err)
	}
	cfg.Networking.APIServerAddress = "0.0.0.0"
	if _, err := WindowsEndpoint(cfg, ""); err == nil || !strings.Contains(err.Error(), "certSANs") {
		t.Errorf("0.0.0.0 without certSANs: %v", err)
	}
	cfg.Networking.CertSANs = []string{"winhost.lab", "127.0.0.1", "10.1.2.3"}
	if got, err := WindowsEndpoint(cfg, ""); err != nil || got != "10.1.2.3:6443" {
		t.Errorf("0.0.0.0 with certSANs: %q %v", got, err)
	}
	cfg.Networking.APIServerAddress, cfg.Networking.APIServerPort = "fd00::1", 0
	if got, err := WindowsEndpoint(cfg, "https://[fd00::1]:40001"); err != nil || got != "[fd00::1]:40001" {
		t.Errorf("IPv6: %q %v", got, err)
	}
	cfg.Networking.APIServerAddress = "192.168.56.1"
	if _, err := WindowsEndpoint(cfg, "https://192.168.56.1"); err == nil {
		t.Error("no port anywhere was accepted")
	}
}
