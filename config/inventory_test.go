package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
	corev1 "k8s.io/api/core/v1"
	sigsyaml "sigs.k8s.io/yaml"
)

// loadFull loads testdata/full.yaml from a fixture directory.
func loadFull(t *testing.T) (*fixture, *Inventory) {
	t.Helper()
	f := newFixture(t)
	f.write("secrets/win-2019-b", passwordFileB+"\n")
	data, err := os.ReadFile(filepath.Join("testdata", "inventory.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	inv, err := f.load(string(data), nil)
	if err != nil {
		t.Fatalf("full inventory: %v", err)
	}
	return f, inv
}

func TestFullInventory(t *testing.T) {
	f, inv := loadFull(t)
	if inv.Path != f.path(inventoryName) {
		t.Errorf("Path = %q", inv.Path)
	}
	ca := f.path("ca.pem")
	containerd := "https://example.com/containerd-2.1.0-windows-amd64.zip"
	want := []Machine{{
		Name:    "win-2022-a",
		Address: "192.168.56.20",
		WinRM: WinRM{Port: 15986, HTTPS: true, CABundle: PEMFile{Path: ca, PEM: f.ca},
			TLSServerName: "win-2022-a.lab", Auth: AuthNTLM},
		User:          `LAB\winconform`,
		PasswordFrom:  SecretRef{Env: "WIN_A_PASSWORD", Secret: passwordA},
		ExpectedBuild: Build{Major: 10, Minor: 0, Number: 20348},
		Labels: map[string]string{
			"topology.kubernetes.io/region": "lab", // from defaults
			"topology.kubernetes.io/zone":   "lab-1",
			"example.com/rack":              "12", // a number, taken as written
		},
		Taints: []Taint{
			{Key: "os", Value: "windows", Effect: corev1.TaintEffectNoSchedule},
			{Key: "example.com/gpu", Effect: corev1.TaintEffectNoExecute},
		},
		Binaries:           map[string]string{"containerd": containerd, "kubelet": `C:\install\kubelet.exe`},
		DefenderExclusions: false, // overrides defaults
	}, {
		Name:               "win-2019-b",
		Address:            "win-2019-b.lab.example",
		WinRM:              WinRM{Port: 5985, HTTPS: false, Auth: AuthNTLM},
		User:               "Administrator",
		PasswordFrom:       SecretRef{File: f.path("secrets/win-2019-b"), Secret: passwordFileB},
		ExpectedBuild:      Build{Major: 10, Minor: 0, Number: 17763},
		Labels:             map[string]string{"topology.kubernetes.io/region": "lab"},
		Binaries:           map[string]string{"containerd": containerd},
		DefenderExclusions: true,
	}, {
		Name:               "win-2025-c",
		Address:            "fd00::25",
		WinRM:              WinRM{Port: 5986, HTTPS: true, CABundle: PEMFile{Path: ca, PEM: f.ca}, Auth: AuthBasic},
		User:               "Administrator",
		PasswordFrom:       SecretRef{Env: "WINDOWS_ADMIN_PASSWORD", Secret: passwordAdmin},
		ExpectedBuild:      Build{Major: 10, Minor: 0, Number: 26100},
		Labels:             map[string]string{"topology.kubernetes.io/region": "lab"},
		Binaries:           map[string]string{"containerd": containerd},
		DefenderExclusions: true,
	}}
	if len(inv.Machines) != len(want) {
		t.Fatalf("%d machines, want %d", len(inv.Machines), len(want))
	}
	for i, got := range inv.Machines {
		if !reflect.DeepEqual(got, want[i]) {
			t.Errorf("machine %d:\n got %+v\nwant %+v", i, got, want[i])
		}
		if got.PasswordFrom.Secret.Reveal() != want[i].PasswordFrom.Secret.Reveal() {
			t.Errorf("machine %d: wrong password", i) // %+v above shows none
		}
	}

	a, ok := inv.Machine("win-2022-a")
	if !ok {
		t.Fatal("Machine(win-2022-a) not found")
	}
	if got := a.ExpectedBuild.ReleaseName(); got != "ltsc2022" {
		t.Errorf("release = %q", got)
	}
	if b, _ := inv.Machine("win-2019-b"); len(b.WinRM.CABundle.PEM) != 0 {
		t.Error("a CA bundle dropped with caBundle: \"\" is still there")
	}
	if _, ok := inv.Machine("absent"); ok {
		t.Error("Machine(absent) found")
	}
}

func TestPasswordsNeverPrinted(t *testing.T) {
	_, inv := loadFull(t)
	secrets := []string{passwordA, passwordAdmin, passwordFileB}
	for i, m := range inv.Machines {
		if m.PasswordFrom.Secret.Reveal() != secrets[[]int{0, 2, 1}[i]] {
			t.Fatalf("machine %s: Reveal() does not return its password", m.Name)
		}
	}

	var slogText, slogJSON bytes.Buffer
	slog.New(slog.NewTextHandler(&slogText, nil)).Info("loaded", "inventory", inv, "password", inv.Machines[0].PasswordFrom.Secret)
	slog.New(slog.NewJSONHandler(&slogJSON, nil)).Info("loaded", "inventory", inv, "password", inv.Machines[0].PasswordFrom.Secret)
	jsonOut, err := json.Marshal(inv)
	if err != nil {
		t.Fatal(err)
	}
	yamlOut, err := yaml.Marshal(inv)
	if err != nil {
		t.Fatal(err)
	}
	sigsOut, err := sigsyaml.Marshal(inv)
	if err != nil {
		t.Fatal(err)
	}
	m, pw := inv.Machines[0], inv.Machines[0].PasswordFrom.Secret
	// Verbs that do not suit a struct, in a variable for vet's sake: a
	// Secret must stay hidden under them too.
	oddVerbs := "%s %q %x %X %d"
	outputs := map[string]string{
		"%v %+v %#v of the inventory": fmt.Sprintf("%v %+v %#v", inv, inv, inv),
		"%v %+v %#v of *inv":          fmt.Sprintf("%v %+v %#v", *inv, *inv, *inv),
		"%s %q %x %X %d of *inv":      fmt.Sprintf(oddVerbs, *inv, *inv, *inv, *inv, *inv),
		"%v %+v %#v %s of a machine":  fmt.Sprintf("%v %+v %#v ", m, m, m) + fmt.Sprintf(oddVerbs, m, m, m, m, m),
		"%+v %#v of a reference":      fmt.Sprintf("%+v %#v", m.PasswordFrom, m.PasswordFrom),
		"fmt.Print of the machines":   fmt.Sprint(inv.Machines) + fmt.Sprintln(m),
		"json.Marshal":                string(jsonOut),
		"yaml.Marshal":                string(yamlOut),
		"sigs.k8s.io/yaml Marshal":    string(sigsOut),
		"slog text":                   slogText.String(),
		"slog JSON":                   slogJSON.String(),
	}
	// The Secret itself prints as "********".
	redacted := map[string]string{
		"every verb of the Secret":     fmt.Sprintf("%v %+v %#v %s %q %x %X %d %10s %-8v", pw, pw, pw, pw, pw, pw, pw, pw, pw, pw),
		"Secret.String and GoString":   pw.String() + pw.GoString(),
		"a pointer to the Secret":      fmt.Sprintf("%v %s", &pw, &pw),
		"Secret in a map and a slice":  fmt.Sprintf("%v %v", map[string]Secret{"p": pw}, []Secret{pw}),
		"Secret in an anonymous field": fmt.Sprintf("%+v", struct{ Secret }{pw}),
		"slog of the Secret":           slogText.String() + slogJSON.String(),
	}
	maps.Copy(outputs, redacted)
	for what, out := range outputs {
		for _, s := range secrets {
			if strings.Contains(out, s) {
				t.Errorf("%s shows a password:\n%s", what, out)
			}
		}
		if _, ok := redacted[what]; ok && !strings.Contains(out, "********") {
			t.Errorf("%s shows no redacted password:\n%s", what, out)
		}
	}
	if got := fmt.Sprintf("%s", pw); got != "********" {
		t.Errorf("%%s of a Secret = %q", got)
	}
	if got := fmt.Sprintf("%#v", pw); got != `config.Secret("********")` {
		t.Errorf("%%#v of a Secret = %q", got)
	}
}

func TestParseUsesTheEnvironment(t *testing.T) {
	f := newFixture(t)
	t.Setenv("WIN_A_PASSWORD", passwordA)
	path := f.write(inventoryName, validMachineYML)
	inv, err := Load[Inventory](path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := inv.Machines[0].PasswordFrom.Secret.Reveal(); got != passwordA {
		t.Errorf("Load with the process's environment: wrong password")
	}
	// Parse takes the file's name for errors and relative paths, and a nil
	// env is the process's environment.
	data := strings.Replace(validMachineYML, "{env: WIN_A_PASSWORD}", "{file: secrets/win-b}", 1)
	inv, err = Parse[Inventory](path, []byte(data), nil)
	if err != nil {
		t.Fatal(err)
	}
	m := inv.Machines[0]
	if m.PasswordFrom.Secret.Reveal() != passwordFileB || m.PasswordFrom.File != f.path("secrets/win-b") {
		t.Errorf("password file not read from beside the inventory: %+v", m.PasswordFrom)
	}
	if got := m.PasswordFrom.String(); got != "file "+f.path("secrets/win-b") {
		t.Errorf("PasswordFrom.String() = %q", got)
	}
	// The built-in defaults reach a stock Windows Server: HTTP on 5985, NTLM.
	if !reflect.DeepEqual(m.WinRM, WinRM{Port: 5985, HTTPS: false, Auth: AuthNTLM}) {
		t.Errorf("built-in defaults: %+v", m.WinRM)
	}
}

func TestYAMLAnchorsAndMergeKeys(t *testing.T) {
	f := newFixture(t)
	inv, err := f.load(`
machines:
- &a
  name: win-a
  address: 192.168.56.20
  winrm: &lab {port: 15986, https: true, auth: ntlm, caBundle: ca.pem}
  user: Administrator
  passwordFrom: &pw {env: WIN_A_PASSWORD}
- {name: win-b, address: 192.168.56.21, winrm: *lab, user: Administrator, passwordFrom: *pw}
- <<: *a
  name: win-c
  address: 192.168.56.22
  winrm: {<<: *lab, auth: basic}
`, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range inv.Machines {
		if m.WinRM.Port != 15986 || m.WinRM.CABundle.Path != f.path("ca.pem") || m.User != "Administrator" || m.PasswordFrom.Secret.Reveal() != passwordA {
			t.Errorf("%s: anchors not followed: %+v", m.Name, m)
		}
	}
	if got := []string{inv.Machines[0].WinRM.Auth, inv.Machines[1].WinRM.Auth, inv.Machines[2].WinRM.Auth}; !reflect.DeepEqual(got, []string{AuthNTLM, AuthNTLM, AuthBasic}) {
		t.Errorf("auth = %v: a key written beside a merge key must win", got)
	}
}

func TestDroppingDefaults(t *testing.T) {
	f := newFixture(t)
	inv, err := f.load(`
defaults:
  winrm: {https: true, caBundle: ca.pem, tlsServerName: lab.example, port: 15986}
  user: Administrator
  passwordFrom: {env: WIN_A_PASSWORD}
  taints: ["os=windows:NoSchedule"]
machines:
- {name: win-a, address: 192.168.56.20, winrm: {caBundle: "", insecure: true}}
- {name: win-b, address: 192.168.56.21, winrm: {https: false, caBundle: "", tlsServerName: "", port: ~}, taints: ~}
`, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, b := inv.Machines[0], inv.Machines[1]
	if !reflect.DeepEqual(a.WinRM, WinRM{Port: 15986, HTTPS: true, Insecure: true, TLSServerName: "lab.example", Auth: AuthNTLM}) || len(a.Taints) != 1 {
		t.Errorf("win-a: %+v", a)
	}
	if !reflect.DeepEqual(b.WinRM, WinRM{Port: 5985, Auth: AuthNTLM}) || b.Taints != nil {
		t.Errorf("win-b: %+v", b)
	}
}

// The node's address on the cluster's network, for a machine with several
// network interfaces, is the machine's own: it is read as written, and a
// machine without one leaves the choice to the kubelet.
func TestNodeIP(t *testing.T) {
	f := newFixture(t)
	inv, err := f.load(validMachineYML+"- name: win-b\n  address: win-b.lab\n  nodeIP: 10.0.0.21\n  user: Administrator\n  passwordFrom: {env: WIN_A_PASSWORD}\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := inv.Machines[0].NodeIP, inv.Machines[1].NodeIP; a != "" || b != "10.0.0.21" {
		t.Errorf("nodeIP: win-a %q, win-b %q; want none and 10.0.0.21", a, b)
	}
}
