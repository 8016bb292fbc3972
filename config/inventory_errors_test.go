package config

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// machineYAML is the valid machine win-a with extra lines added to it (each
// indented as a field of the machine).
func machineYAML(extra string) string {
	return validMachineYML + extra
}

// problemCase is an inventory with exactly one problem.
type problemCase struct {
	name    string
	yaml    string
	env     map[string]string // nil: the usual variables
	setup   func(f *fixture)  // extra files
	machine string            // "machines[0].", or "" for a problem outside machines
	field   string            // the field the problem names
	want    []string          // in the problem's message or fix
	line    int               // the problem's line, 0 for any
}

var problemCases = []problemCase{
	{
		name:  "malformed YAML",
		yaml:  "machines:\n- name: win-a\n  address: 192.168.56.20\n   user: Administrator\n",
		field: "yaml",
		want:  []string{"not valid YAML", "indent with spaces"},
		line:  4,
	},
	{
		name:    "unknown machine field",
		yaml:    machineYAML("  colour: blue\n"),
		machine: defaultMachine,
		field:   "colour",
		want:    []string{"is not a field of machines", "the fields of machines are name, address, nodeIP, winrm"},
		line:    6,
	},
	{
		name:    "node address a name",
		yaml:    machineYAML("  nodeIP: win-a.lab\n"),
		machine: defaultMachine,
		field:   "nodeIP",
		want:    []string{`"win-a.lab" is a name, not an IP address`, "the IP address the machine has on the cluster's network"},
		line:    6,
	},
	{
		name:    "node address loopback",
		yaml:    machineYAML("  nodeIP: 127.0.0.1\n"),
		machine: defaultMachine,
		field:   "nodeIP",
		want:    []string{`"127.0.0.1" is not an address another node can reach`},
	},
	{
		name:    "node addresses listed",
		yaml:    machineYAML("  nodeIP: 10.0.0.20,fd00::20\n"),
		machine: defaultMachine,
		field:   "nodeIP",
		want:    []string{"is a list", "write one IP address"},
	},
	{
		name:  "node address in defaults",
		yaml:  "defaults: {nodeIP: 10.0.0.20}\n" + validMachineYML,
		field: "defaults.nodeIP",
		want:  []string{"cannot have a default: each machine has its own", "set nodeIP on each machine"},
	},
	{
		name:    "misspelt winrm field",
		yaml:    machineYAML("  winrm: {prot: 5986}\n"),
		machine: defaultMachine,
		field:   "winrm.prot",
		want:    []string{"is not a field of winrm", `did you mean "port"?`},
	},
	{
		name:  "unknown top-level field",
		yaml:  validMachineYML + "machine: []\n",
		field: "machine",
		want:  []string{"is not a field of Inventory", `did you mean "machines"?`},
	},
	{
		name:    "missing address",
		yaml:    "machines:\n- name: win-a\n  user: Administrator\n  passwordFrom: {env: WIN_A_PASSWORD}\n",
		machine: defaultMachine,
		field:   "address",
		want:    []string{"is missing", "set address: the machine's IP address or DNS name"},
		line:    2,
	},
	{
		name:    "address with a port",
		yaml:    strings.Replace(validMachineYML, "192.168.56.20", "192.168.56.20:5986", 1),
		machine: defaultMachine,
		field:   "address",
		want:    []string{"includes a port", "winrm.port: 5986"},
	},
	{
		name:    "port out of range",
		yaml:    machineYAML("  winrm: {port: 70000}\n"),
		machine: defaultMachine,
		field:   "winrm.port",
		want:    []string{"70000 is out of range", "from 1 to 65535"},
	},
	{
		name:    "port zero",
		yaml:    machineYAML("  winrm: {port: 0}\n"),
		machine: defaultMachine,
		field:   "winrm.port",
		want:    []string{"0 is out of range"},
	},
	{
		name:    "port not a number",
		yaml:    machineYAML("  winrm: {port: https}\n"),
		machine: defaultMachine,
		field:   "winrm.port",
		want:    []string{`"https" is not a port`, "from 1 to 65535"},
	},
	{
		name:    "password variable unset",
		yaml:    validMachineYML,
		env:     map[string]string{},
		machine: defaultMachine,
		field:   "passwordFrom.env",
		want:    []string{"the variable WIN_A_PASSWORD is not set", "export WIN_A_PASSWORD="},
	},
	{
		name:    "password variable empty",
		yaml:    validMachineYML,
		env:     map[string]string{"WIN_A_PASSWORD": ""},
		machine: defaultMachine,
		field:   "passwordFrom.env",
		want:    []string{"WIN_A_PASSWORD is set but empty"},
	},
	{
		name:    "password file missing",
		yaml:    strings.Replace(validMachineYML, "{env: WIN_A_PASSWORD}", "{file: ./secrets/absent}", 1),
		machine: defaultMachine,
		field:   "passwordFrom.file",
		want:    []string{`"./secrets/absent"`, "does not exist", "relative path is from the file's directory"},
	},
	{
		name:    "password file empty",
		yaml:    strings.Replace(validMachineYML, "{env: WIN_A_PASSWORD}", "{file: secrets/empty}", 1),
		setup:   func(f *fixture) { f.write("secrets/empty", "\r\n") },
		machine: defaultMachine,
		field:   "passwordFrom.file",
		want:    []string{`"secrets/empty"`, "is empty", "write the secret in it"},
	},
	{
		name:    "password file with two lines",
		yaml:    strings.Replace(validMachineYML, "{env: WIN_A_PASSWORD}", "{file: secrets/two}", 1),
		setup:   func(f *fixture) { f.write("secrets/two", "# the password\n"+passwordFileB+"\n") },
		machine: defaultMachine,
		field:   "passwordFrom.file",
		want:    []string{"more than one line"},
	},
	{
		name: "password file open to others",
		yaml: strings.Replace(validMachineYML, "{env: WIN_A_PASSWORD}", "{file: secrets/open}", 1),
		setup: func(f *fixture) {
			if runtime.GOOS == "windows" {
				f.t.Skip("Windows files have no such mode")
			}
			if err := os.Chmod(f.write("secrets/open", passwordFileB+"\n"), 0o644); err != nil {
				f.t.Fatal(err)
			}
		},
		machine: defaultMachine,
		field:   "passwordFrom.file",
		want:    []string{`"secrets/open"`, "is open to others (mode 0644)", "chmod 600 "},
	},
	{
		name:    "password file is a directory",
		yaml:    strings.Replace(validMachineYML, "{env: WIN_A_PASSWORD}", "{file: secrets}", 1),
		machine: defaultMachine,
		field:   "passwordFrom.file",
		want:    []string{`"secrets"`, "is a directory, not a file"},
	},
	{
		name:    "passwordFrom with env and file",
		yaml:    strings.Replace(validMachineYML, "{env: WIN_A_PASSWORD}", "{env: WIN_A_PASSWORD, file: secrets/win-b}", 1),
		machine: defaultMachine,
		field:   "passwordFrom",
		want:    []string{"sets both env and file", "keep one"},
	},
	{
		name:    "inline password on a machine",
		yaml:    machineYAML("  password: " + passwordInline + "\n"),
		machine: defaultMachine,
		field:   "password",
		want:    []string{"inline secret is refused", "{env: VARIABLE}", "{file: PATH}", "passwordFrom"},
	},
	{
		name:    "inline password in passwordFrom",
		yaml:    strings.Replace(validMachineYML, "{env: WIN_A_PASSWORD}", "{password: "+passwordInline+"}", 1),
		machine: defaultMachine,
		field:   "passwordFrom.password",
		want:    []string{"inline secret is refused"},
	},
	{
		name:  "inline password in defaults",
		yaml:  "defaults:\n  winrm: {Password: " + passwordInline + "}\n" + validMachineYML,
		field: "defaults.winrm.Password",
		want:  []string{"inline secret is refused"},
	},
	{
		name:    "caBundle missing",
		yaml:    machineYAML("  winrm: {https: true, caBundle: ./certs/absent.pem}\n"),
		machine: defaultMachine,
		field:   "winrm.caBundle",
		want:    []string{`"./certs/absent.pem"`, "does not exist"},
	},
	{
		name:    "caBundle not PEM",
		yaml:    machineYAML("  winrm: {https: true, caBundle: ca.cer}\n"),
		setup:   func(f *fixture) { f.write("ca.cer", "\x30\x82\x01\x0a not PEM at all") },
		machine: defaultMachine,
		field:   "winrm.caBundle",
		want:    []string{`"ca.cer"`, "holds no PEM certificate", "openssl x509 -inform der"},
	},
	{
		name: "caBundle with a private key",
		yaml: machineYAML("  winrm: {https: true, caBundle: ca-and-key.pem}\n"),
		setup: func(f *fixture) {
			f.write("ca-and-key.pem", string(f.ca)+"-----BEGIN EC PRIVATE KEY-----\nMHcCAQEE\n-----END EC PRIVATE KEY-----\n")
		},
		machine: defaultMachine,
		field:   "winrm.caBundle",
		want:    []string{"holds a private key"},
	},
	{
		name:    "caBundle with insecure",
		yaml:    machineYAML("  winrm: {https: true, caBundle: ./ca.pem, insecure: true}\n"),
		machine: defaultMachine,
		field:   "winrm.insecure",
		want:    []string{"are exclusive", "drop insecure", "drop caBundle"},
	},
	{
		name:    "insecure with HTTP",
		yaml:    machineYAML("  winrm: {https: false, insecure: true}\n"),
		machine: defaultMachine,
		field:   "winrm.insecure",
		want:    []string{"insecure only applies to HTTPS", "set https: true"},
	},
	{
		name:    "caBundle with HTTP",
		yaml:    machineYAML("  winrm: {https: false, caBundle: ./ca.pem}\n"),
		machine: defaultMachine,
		field:   "winrm.caBundle",
		want:    []string{"only applies to HTTPS"},
	},
	{
		name:    "HTTPS port from defaults on an HTTP machine",
		yaml:    "defaults:\n  winrm: {port: 5986}\n" + machineYAML("  winrm: {https: false}\n"),
		machine: defaultMachine,
		field:   "winrm.port",
		want:    []string{"5986 (from defaults) is WinRM's HTTPS port", "set port: 5985"},
	},
	{
		name:    "caBundle with the default, HTTP",
		yaml:    machineYAML("  winrm: {caBundle: ./ca.pem}\n"),
		machine: defaultMachine,
		field:   "winrm.caBundle",
		want:    []string{"with HTTP", "only applies to HTTPS", "set https: true"},
	},
	{
		// A stock WinRM refuses Basic over HTTP (AllowUnencrypted=false),
		// and Basic would send the password in clear.
		name:    "basic over HTTP",
		yaml:    machineYAML("  winrm: {auth: basic}\n"),
		machine: defaultMachine,
		field:   "winrm.auth",
		want:    []string{"auth: basic over HTTP is refused", "use auth: ntlm", "https: true", "caBundle"},
	},
	{
		name:    "basic from defaults on an HTTP machine",
		yaml:    "defaults:\n  winrm: {https: true, auth: basic}\n" + machineYAML("  winrm: {https: false}\n"),
		machine: defaultMachine,
		field:   "winrm.auth",
		want:    []string{"auth: basic (from defaults) over HTTP is refused", "use auth: ntlm"},
	},
	{
		name:    "auth not basic or ntlm",
		yaml:    machineYAML("  winrm: {auth: kerberos}\n"),
		machine: defaultMachine,
		field:   "winrm.auth",
		want:    []string{`"kerberos" is not an authentication method`, "basic", "ntlm"},
	},
	{
		name:    "auth in upper case",
		yaml:    machineYAML("  winrm: {auth: NTLM}\n"),
		machine: defaultMachine,
		field:   "winrm.auth",
		want:    []string{"write it in lower case: ntlm"},
	},
	{
		name:    "two machines with one name",
		yaml:    validMachineYML + "- {name: win-a, address: 192.168.56.21, user: Administrator, passwordFrom: {env: WIN_A_PASSWORD}}\n",
		machine: "machines[1].",
		field:   "name",
		want:    []string{`"win-a" is also the name of machine #1`, "its own name"},
	},
	{
		name:    "two machines at one address",
		yaml:    validMachineYML + "- {name: win-b, address: 192.168.56.20, user: Administrator, passwordFrom: {env: WIN_A_PASSWORD}}\n",
		machine: "machines[1].",
		field:   "address",
		want:    []string{`"192.168.56.20" port 5985 is also machine #1`},
	},
	{
		name:    "name not a DNS label",
		yaml:    strings.Replace(validMachineYML, "name: win-a", "name: Win_A", 1),
		machine: defaultMachine,
		field:   "name",
		want:    []string{`"Win_A" is not a lower-case DNS label`, `such as "win-a"`},
	},
	{
		name:    "name too long",
		yaml:    strings.Replace(validMachineYML, "name: win-a", "name: "+strings.Repeat("w", 64), 1),
		machine: defaultMachine,
		field:   "name",
		want:    []string{"not a lower-case DNS label", "at most 63"},
	},
	{
		name:    "expectedBuild older than supported",
		yaml:    machineYAML("  expectedBuild: \"10.0.14393\"\n"),
		machine: defaultMachine,
		field:   "expectedBuild",
		want:    []string{"10.0.14393 is older than 10.0.17763 (Windows Server 2019)", "10.0.17763 (ltsc2019), 10.0.20348 (ltsc2022) or 10.0.26100 (ltsc2025)"},
	},
	{
		name:    "expectedBuild malformed",
		yaml:    machineYAML("  expectedBuild: 2022\n"),
		machine: defaultMachine,
		field:   "expectedBuild",
		want:    []string{`"2022" is not a Windows build of the form 10.0.NNNNN`},
	},
	{
		name:    "expectedBuild with a revision",
		yaml:    machineYAML("  expectedBuild: 10.0.20348.2113\n"),
		machine: defaultMachine,
		field:   "expectedBuild",
		want:    []string{`drop the revision: write "10.0.20348"`},
	},
	{
		name:    "bad label key",
		yaml:    machineYAML("  labels: {example.com/: x}\n"),
		machine: defaultMachine,
		field:   "labels[example.com/]",
		want:    []string{"is not a valid label key", "name part must be non-empty"},
	},
	{
		name:    "bad label value",
		yaml:    machineYAML("  labels: {zone: lab one}\n"),
		machine: defaultMachine,
		field:   "labels[zone]",
		want:    []string{`"lab one" is not a valid label value`},
	},
	{
		name:    "label the kubelet sets",
		yaml:    machineYAML("  labels: {node.kubernetes.io/windows-build: 10.0.20348}\n"),
		machine: defaultMachine,
		field:   "labels[node.kubernetes.io/windows-build]",
		want:    []string{"the kubelet sets this label itself", "expectedBuild"},
	},
	{
		name:    "bad taint effect",
		yaml:    machineYAML("  taints: [\"os=windows:NoSchedule\", \"os=windows:Sometimes\"]\n"),
		machine: defaultMachine,
		field:   "taints[1]",
		want:    []string{`"Sometimes", which is not a taint effect`},
	},
	{
		name:    "taint without effect",
		yaml:    machineYAML("  taints: [os=windows]\n"),
		machine: defaultMachine,
		field:   "taints[0]",
		want:    []string{"has no effect", "key=value:Effect or key:Effect"},
	},
	{
		name:    "bad taint key",
		yaml:    machineYAML("  taints: [\"bad key=x:NoExecute\"]\n"),
		machine: defaultMachine,
		field:   "taints[0]",
		want:    []string{`the key "bad key" is not valid`},
	},
	{
		name:    "binary source neither URL nor path",
		yaml:    machineYAML("  binaries: {containerd: ./containerd.zip}\n"),
		machine: defaultMachine,
		field:   "binaries[containerd]",
		want:    []string{"neither an http(s) URL nor an absolute path"},
	},
	{
		name:    "wrong type",
		yaml:    machineYAML("  defenderExclusions: yes\n"),
		machine: defaultMachine,
		field:   "defenderExclusions",
		want:    []string{`the string "yes", not true or false`, "write true or false"},
	},
	{
		name:    "field written twice",
		yaml:    machineYAML("  user: Other\n"),
		machine: defaultMachine,
		field:   "user",
		want:    []string{"is written twice (first at line 4)"},
	},
	{
		name:  "name in defaults",
		yaml:  "defaults: {name: win}\n" + validMachineYML,
		field: "defaults.name",
		want:  []string{"cannot have a default", "set name on each machine"},
	},
	{
		name:  "empty machines list",
		yaml:  "defaults: {user: Administrator}\nmachines: []\n",
		field: "machines",
		want:  []string{"is empty", "list at least one machine"},
	},
	{
		name:  "no machines key",
		yaml:  "defaults: {user: Administrator}\n",
		field: "machines",
		want:  []string{"is missing"},
	},
	{
		name:  "empty file",
		yaml:  "# nothing yet\n",
		field: "machines",
		want:  []string{"is missing"},
	},
	{
		name:  "two documents",
		yaml:  validMachineYML + "---\n" + validMachineYML,
		field: "yaml",
		want:  []string{"more than one YAML document"},
		line:  7,
	},
}

// problemLine is the shape of every line of an *Error.
var problemLine = regexp.MustCompile(`^(\S+?)(:\d+)?: ([^ ]+): .+; .+$`)

func TestEachProblem(t *testing.T) {
	for _, tc := range problemCases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			if tc.setup != nil {
				tc.setup(f)
			}
			inv, err := f.load(tc.yaml, tc.env)
			if inv != nil || err == nil {
				t.Fatalf("loaded %v, %v; want an error alone", inv, err)
			}
			oneProblem(t, err, tc.machine+tc.field, tc.want...)
			msg := err.Error()
			if want := regexp.MustCompile(`^` + regexp.QuoteMeta(f.path(inventoryName)) + `(:\d+)?: ` + regexp.QuoteMeta(tc.machine+tc.field) + ": "); !want.MatchString(msg) {
				t.Errorf("error does not start with the file, line and field %s: %s", tc.machine+tc.field, msg)
			}
			if !problemLine.MatchString(msg) {
				t.Errorf("error is not `<file>:<line>: <field>: <problem>; <fix>`: %s", msg)
			}
			for _, secret := range []string{passwordA, passwordAdmin, passwordFileB, passwordInline} {
				if strings.Contains(msg, secret) {
					t.Errorf("error shows a password: %s", msg)
				}
			}
			if _, lines := problemsOf(t, err); tc.line != 0 && lines[0] != tc.line {
				t.Errorf("line = %d, want %d", lines[0], tc.line)
			}
		})
	}
}

func TestAllProblemsAreListed(t *testing.T) {
	f := newFixture(t)
	_, err := f.load(`
defaults:
  winrm: {auth: digest}
  passwordFrom: {env: WINDOWS_ADMIN_PASSWORD}
machines:
- name: win-a
  address: 192.168.56.20
  user: Administrator
  winrm: {port: 99999, insecure: true, https: false}
  expectedBuild: "10.0.14393"
- name: Win-B
  user: Administrator
  taints: [NoSchedule]
  colour: blue
`, map[string]string{"WINDOWS_ADMIN_PASSWORD": passwordAdmin})
	list, _ := problemsOf(t, err)
	want := []string{
		`:3: defaults.winrm.auth: "digest" is not an authentication method`,
		`:9: machines[0].winrm.port: 99999 is out of range`,
		`:9: machines[0].winrm.insecure: insecure: true with HTTP`,
		`:10: machines[0].expectedBuild: 10.0.14393 is older than`,
		`:11: machines[1].name: "Win-B" is not a lower-case DNS label`,
		`:11: machines[1].address: is missing`,
		`:13: machines[1].taints[0]: "NoSchedule" has no effect`,
		`:14: machines[1].colour: is not a field of machines`,
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != len(want) || len(list) != len(want) {
		t.Fatalf("want %d problems, got %d:\n%v", len(want), len(lines), err)
	}
	for i, line := range lines {
		if !strings.HasPrefix(line, f.path(inventoryName)+":") || !problemLine.MatchString(line) {
			t.Errorf("line %d is not `<file>:<line>: <field>: <problem>; <fix>`: %s", i, line)
		}
		if !strings.Contains(line, want[i]) {
			t.Errorf("line %d = %s\nwant it to hold %s", i, line, want[i])
		}
	}
}

func TestDefaultsProblemReportedOnce(t *testing.T) {
	f := newFixture(t)
	_, err := f.load(`
defaults:
  user: Administrator
  passwordFrom: {env: WINDOWS_ADMIN_PASSWORD}
  winrm: {https: true, caBundle: ./absent.pem}
machines:
- {name: win-a, address: 192.168.56.20}
- {name: win-b, address: 192.168.56.21}
- {name: win-c, address: 192.168.56.22, passwordFrom: {env: WIN_A_PASSWORD}, winrm: {caBundle: ""}}
`, map[string]string{"WIN_A_PASSWORD": passwordA})
	list, _ := problemsOf(t, err)
	want := []string{
		`:4: defaults.passwordFrom.env: the variable WINDOWS_ADMIN_PASSWORD is not set`,
		`:5: defaults.winrm.caBundle: "./absent.pem" (` + f.path("absent.pem") + `) does not exist`,
	}
	if len(list) != len(want) {
		t.Fatalf("want %d problems, got:\n%v", len(want), err)
	}
	for i, line := range strings.Split(err.Error(), "\n") {
		if !strings.Contains(line, want[i]) {
			t.Errorf("line %d = %s\nwant it to hold %s", i, line, want[i])
		}
	}
}

func TestProblemsNeverShowPasswords(t *testing.T) {
	f := newFixture(t)
	// Every password source is set, and the file has problems everywhere,
	// including an inline password.
	_, err := f.load(`
defaults:
  passwordFrom: {env: WINDOWS_ADMIN_PASSWORD}
  user: Administrator
  password: `+passwordInline+`
machines:
- name: win-a
  address: 192.168.56.20
  passwordFrom: {env: WIN_A_PASSWORD}
  winrm: {port: 0, password: "`+passwordInline+`"}
- name: win-b
  address: bad address
  passwordFrom: {file: secrets/win-b}
  labels: {password: `+passwordInline+`}
- name: win-c
  address: 192.168.56.22
  winrm: {auth: digest}
`, nil)
	if err == nil {
		t.Fatal("no error")
	}
	if list, _ := problemsOf(t, err); len(list) < 5 {
		t.Fatalf("want at least 5 problems, got %v", err)
	}
	msg := err.Error()
	for _, secret := range []string{passwordA, passwordAdmin, passwordFileB, passwordInline} {
		if strings.Contains(msg, secret) {
			t.Errorf("the error shows a password:\n%s", msg)
		}
	}
	if got := strings.Count(msg, "inline secret is refused"); got != 3 {
		t.Errorf("want 3 inline passwords refused, got %d:\n%s", got, msg)
	}
}

func TestLoadMissingFile(t *testing.T) {
	path := t.TempDir() + "/absent.yaml"
	_, err := Load[Inventory](path, mapEnv(nil))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("errors.Is(err, fs.ErrNotExist) = false for %v", err)
	}
	if err == nil || !strings.HasPrefix(err.Error(), path+": the file does not exist; check the path") {
		t.Errorf("error = %v", err)
	}
}

func TestEmptyMachineItem(t *testing.T) {
	f := newFixture(t)
	_, err := f.load(validMachineYML+"-\n", nil)
	want := f.path(inventoryName) + `:6: machines[1]: is empty; write the machine's fields`
	if err == nil || !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "\n") {
		t.Errorf("error = %v\nwant one line starting %s", err, want)
	}
}

func TestMergeKeyBomb(t *testing.T) {
	// Each level merges the one before it ten times over: expanded, the last
	// one would bring in 10^8 entries.
	var b strings.Builder
	b.WriteString("defaults:\n  labels:\n    l0: &l0 {a: b}\n")
	for i := 1; i <= 8; i++ {
		fmt.Fprintf(&b, "    l%d: &l%d {<<: [", i, i)
		for j := 0; j < 10; j++ {
			if j > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "*l%d", i-1)
		}
		b.WriteString("]}\n")
	}
	b.WriteString("machines:\n- {name: win-a, address: 192.168.56.20, user: u, passwordFrom: {env: WIN_A_PASSWORD}, labels: {<<: *l8}}\n")
	f := newFixture(t)
	start := time.Now()
	_, err := f.load(b.String(), nil)
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Errorf("took %v", elapsed)
	}
	if err == nil || !strings.Contains(err.Error(), "expand to more than 100000 values") {
		t.Errorf("error = %v", err)
	}
}

// A problem found after the file was loaded (a provider's) says its field,
// what is wrong and the fix as the loader's do; its *field.Error and its
// cause are reachable.
func TestProblem(t *testing.T) {
	cause := fmt.Errorf("dial: %w", context.DeadlineExceeded)
	err := Problem(field.NewPath("connection", "endpoint"), "cannot reach the host", "check the endpoint", cause)
	if got, want := err.Error(), "connection.endpoint: cannot reach the host; check the endpoint"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	var fe *field.Error
	if !errors.As(err, &fe) || fe.Field != "connection.endpoint" || fe.Detail != "cannot reach the host; check the endpoint" {
		t.Errorf("errors.As(*field.Error) = %+v", fe)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("the cause is not reachable from %v", err)
	}
	if errors.Is(Problem(field.NewPath("image"), "is missing", "set image", nil), context.DeadlineExceeded) {
		t.Error("a Problem without a cause has one")
	}
}
