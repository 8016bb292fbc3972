package hyperv

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/winconform/winconform/config"
	"github.com/winconform/winconform/infra/vms"
	"github.com/winconform/winconform/testing/configtest"
)

var testEnv = func(k string) (string, bool) {
	v, ok := map[string]string{"HYPERV_PASSWORD": "hv-Passw0rd", "WIN_PW": "w1n-Passw0rd"}[k]
	return v, ok
}

// vmFile is a VM file for the provider with the connection conn and the
// hyperv block's lines block.
func vmFile(conn, block string) string {
	return "provider: hyperv\nconnection:\n" + conn + `image: 'D:\golden\win2022.vhdx'
count: 1
machine:
  user: Administrator
  passwordFrom: {env: WIN_PW}
hyperv:
` + block
}

const (
	goodConn  = "  endpoint: hv01.lab\n  user: LAB\\winconform\n  credentials:\n    password: {env: HYPERV_PASSWORD}\n"
	goodBlock = "  switch: k8s\n  vhdxDir: 'D:\\winconform'\n"
)

// parse parses a VM file named vms.yaml.
func parse(src string) (*vms.File, error) {
	return config.Parse[config.Machines]("vms.yaml", []byte(src), testEnv)
}

func TestSettingsDefaults(t *testing.T) {
	f, err := parse(vmFile(goodConn, goodBlock))
	if err != nil {
		t.Fatal(err)
	}
	s := f.Block.(*Settings)
	want := Settings{Switch: "k8s", VHDXDir: `D:\winconform`, Generation: 2, SecureBootTemplate: "MicrosoftWindows",
		WinRM: config.WinRM{Port: 5985, Auth: "ntlm"}}
	if s.Switch != want.Switch || s.VHDXDir != want.VHDXDir || s.Generation != want.Generation || s.SecureBootTemplate != want.SecureBootTemplate ||
		s.WinRM.Port != 5985 || s.WinRM.HTTPS || s.WinRM.Auth != "ntlm" {
		t.Errorf("settings %+v, want %+v", s, want)
	}
	if f.Connection.Endpoint != "hv01.lab" || f.Connection.User != `LAB\winconform` || f.Connection.Credentials["password"].Secret.Reveal() != "hv-Passw0rd" {
		t.Errorf("connection %+v", f.Connection)
	}
}

func TestSettingsHTTPS(t *testing.T) {
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, testCA(t), 0o600); err != nil {
		t.Fatal(err)
	}
	block := goodBlock + "  generation: 1\n  winrm: {https: true, caBundle: '" + ca + "', tlsServerName: hv01.lab.example, auth: basic}\n"
	f, err := parse(vmFile(goodConn, block))
	if err != nil {
		t.Fatal(err)
	}
	s := f.Block.(*Settings)
	if !s.WinRM.HTTPS || s.WinRM.Port != 5986 || s.WinRM.Auth != "basic" || len(s.WinRM.CABundle.PEM) == 0 || s.WinRM.TLSServerName != "hv01.lab.example" ||
		s.Generation != 1 || s.SecureBootTemplate != "" {
		t.Errorf("settings %+v", s)
	}
}

// Bad input is refused when the file loads, before anything reaches the
// host: each problem names its field, and says the fix.
func TestSettingsBadInput(t *testing.T) {
	for _, tc := range []struct {
		name, conn, block string
		field, says       string
	}{
		{"no switch", goodConn, "  vhdxDir: 'D:\\winconform'\n", "hyperv.switch", "is missing"},
		{"no vhdxDir", goodConn, "  switch: k8s\n", "hyperv.vhdxDir", "is missing"},
		{"vhdxDir on a share", goodConn, "  switch: k8s\n  vhdxDir: '\\\\files\\vms'\n", "hyperv.vhdxDir", "is a network path"},
		{"vhdxDir relative", goodConn, "  switch: k8s\n  vhdxDir: vms\n", "hyperv.vhdxDir", "is not an absolute folder on the host"},
		{"vhdxDir a drive", goodConn, "  switch: k8s\n  vhdxDir: 'D:\\'\n", "hyperv.vhdxDir", "is not an absolute folder on the host"},
		{"vhdxDir a Linux path", goodConn, "  switch: k8s\n  vhdxDir: /var/vms\n", "hyperv.vhdxDir", "is not an absolute folder on the host"},
		{"generation 3", goodConn, goodBlock + "  generation: 3\n", "hyperv.generation", "3 is out of range (1 to 2)"},
		{"bad template", goodConn, goodBlock + "  secureBootTemplate: Windows\n", "hyperv.secureBootTemplate", `"Windows" is not a secure boot template`},
		{"template on generation 1", goodConn, goodBlock + "  generation: 1\n  secureBootTemplate: MicrosoftWindows\n", "hyperv.secureBootTemplate", "is for generation 2 VMs"},
		{"basic over HTTP", goodConn, goodBlock + "  winrm: {auth: basic}\n", "hyperv.winrm.auth", "basic over HTTP is refused"},
		{"auth in capitals", goodConn, goodBlock + "  winrm: {auth: NTLM}\n", "hyperv.winrm.auth", `"NTLM" is not an authentication method`},
		{"port out of range", goodConn, goodBlock + "  winrm: {port: 70000}\n", "hyperv.winrm.port", "70000 is out of range"},
		{"CA bundle missing", goodConn, goodBlock + "  winrm: {caBundle: ./nothing.pem}\n", "hyperv.winrm.caBundle", "does not exist"},
		{"CA bundle over HTTP", goodConn, goodBlock + "  winrm: {caBundle: CA}\n", "hyperv.winrm.caBundle", "only applies to HTTPS"},
		{"unknown key", goodConn, goodBlock + "  vhdDir: 'D:\\x'\n", "hyperv.vhdDir", `did you mean "vhdxDir"?`},
		{"password inline", goodConn, goodBlock + "  password: hunter2\n", "hyperv.password", "an inline secret is refused"},
		{"endpoint with port", "  endpoint: hv01.lab:5985\n  user: admin\n  credentials:\n    password: {env: HYPERV_PASSWORD}\n", goodBlock,
			"connection.endpoint", "includes a port"},
		{"endpoint a URL", "  endpoint: https://hv01.lab:5986/wsman\n  user: admin\n  credentials:\n    password: {env: HYPERV_PASSWORD}\n", goodBlock,
			"connection.endpoint", "is a URL"},
		{"no user", "  endpoint: hv01.lab\n  credentials:\n    password: {env: HYPERV_PASSWORD}\n", goodBlock, "connection.user", "is missing"},
		{"no password", "  endpoint: hv01.lab\n  user: admin\n", goodBlock, "connection.credentials[password]", "is missing"},
		{"password unset", "  endpoint: hv01.lab\n  user: admin\n  credentials:\n    password: {env: HV_PW_UNSET}\n", goodBlock,
			"connection.credentials[password].env", "the variable HV_PW_UNSET is not set"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ca := filepath.Join(t.TempDir(), "ca.pem")
			if err := os.WriteFile(ca, testCA(t), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := parse(vmFile(tc.conn, strings.Replace(tc.block, "{caBundle: CA}", "{caBundle: '"+ca+"'}", 1)))
			configtest.Refused(t, err, tc.field, tc.says, "hv-Passw0rd", "w1n-Passw0rd")
		})
	}
}

// testCA is a self-signed CA certificate, PEM.
func testCA(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "hyperv test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}
