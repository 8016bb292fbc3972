package vms_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/winconform/winconform/config"
	"github.com/winconform/winconform/infra/vms"
	"github.com/winconform/winconform/testing/configtest"
	"github.com/winconform/winconform/testing/vmstest"
)

// env is the environment the files below are loaded in.
func env(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
}

// other is another provider, whose block takes an inventory.
type other struct {
	Inventory string `yaml:"inventory"`
}

func (*other) Check(*vms.File, *field.Path) field.ErrorList { return nil }

func init() {
	vms.Register(config.Provider{Name: "other", Summary: "another provider"},
		func(context.Context, *vms.File, *other) (vms.Provider, error) { return nil, errors.New("not for use") })
}

// parse parses a VM file named vms.yaml.
func parse(src string) (*vms.File, error) {
	return config.Parse[config.Machines]("vms.yaml", []byte(src), stdEnv)
}

var stdEnv = env(map[string]string{"WIN_PW": "s3cret-w1n", "FAKE_TOKEN": "t0ken-value"})

const good = `provider: fake
connection:
  endpoint: fake://lab
  credentials:
    token: {env: FAKE_TOKEN}
image: golden-2022
count: 2
cpus: 4
memory: 8Gi
machine:
  user: Administrator
  passwordFrom: {env: WIN_PW}
  labels: {topology.kubernetes.io/zone: lab-1}
fake:
  label: nightly
`

func TestParseGood(t *testing.T) {
	f, err := parse(good)
	if err != nil {
		t.Fatal(err)
	}
	if f.Provider != "fake" || f.Image != "golden-2022" || f.Count != 2 || f.CPUs != 4 || f.MemoryMiB != 8192 || f.NamePrefix != "win" {
		t.Errorf("decoded %+v", f)
	}
	if got := f.Connection.Credentials["token"].Secret.Reveal(); got != "t0ken-value" {
		t.Errorf("token = %q", got)
	}
	if s, ok := f.Block.(*vmstest.Settings); !ok || s.Label != "nightly" {
		t.Errorf("block = %#v, want the fake's", f.Block)
	}
	// The inventory made from it is one config loads, with the machine
	// block as every machine's defaults.
	data, _, err := f.Inventory("machines.yaml", []config.Machine{{Name: "win-r1-1", Address: "10.0.0.5"}, {Name: "win-r1-2", Address: "10.0.0.6"}})
	if err != nil {
		t.Fatal(err)
	}
	inv, err := config.Parse[config.Inventory]("machines.yaml", data, stdEnv)
	if err != nil {
		t.Fatalf("the inventory made does not load: %v\n%s", err, data)
	}
	if len(inv.Machines) != 2 || inv.Machines[1].Address != "10.0.0.6" || inv.Machines[0].User != "Administrator" ||
		inv.Machines[0].PasswordFrom.Secret.Reveal() != "s3cret-w1n" || inv.Machines[1].Labels["topology.kubernetes.io/zone"] != "lab-1" {
		t.Errorf("inventory %+v", inv.Machines)
	}
	if strings.Contains(string(data), "s3cret") {
		t.Errorf("the inventory holds the password:\n%s", data)
	}
}

// Relative paths of the machine block are from the VM file's directory,
// and stay so in the inventory written elsewhere.
func TestInventoryPathsAreAbsolute(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "pw"), []byte("pw-from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	src := strings.Replace(good, "passwordFrom: {env: WIN_PW}", "passwordFrom: {file: ./pw}", 1)
	f, err := config.Parse[config.Machines](filepath.Join(dir, "vms.yaml"), []byte(src), stdEnv)
	if err != nil {
		t.Fatal(err)
	}
	data, _, err := f.Inventory("machines.yaml", []config.Machine{{Name: "win-r1-1", Address: "10.0.0.5"}})
	if err != nil {
		t.Fatal(err)
	}
	other := t.TempDir()
	inv, err := config.Parse[config.Inventory](filepath.Join(other, "machines.yaml"), data, stdEnv)
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	if got := inv.Machines[0].PasswordFrom.Secret.Reveal(); got != "pw-from-file" {
		t.Errorf("password %q", got)
	}
}

// Every bad file is refused before any machine work, each problem naming
// its field and the fix.
func TestParseRefuses(t *testing.T) {
	tests := []struct {
		name, src string
		field     string // the field the problem names
		want      string // in the message or fix
	}{
		{"unknown provider", strings.Replace(good, "provider: fake", "provider: fkae", 1), "provider", `did you mean "fake"`},
		{"no provider", strings.Replace(good, "provider: fake\n", "", 1), "provider", "is missing"},
		{"missing image", strings.Replace(good, "image: golden-2022\n", "", 1), "image", "golden image"},
		{"empty image", strings.Replace(good, "image: golden-2022", "image: ''", 1), "image", "is missing"},
		{"zero count", strings.Replace(good, "count: 2", "count: 0", 1), "count", "from 1 to"},
		{"negative count", strings.Replace(good, "count: 2", "count: -3", 1), "count", "-3 is not a number of machines"},
		{"count too big", strings.Replace(good, "count: 2", "count: 500", 1), "count", "more than"},
		{"count not a number", strings.Replace(good, "count: 2", "count: two", 1), "count", "not a whole number"},
		{"missing count", strings.Replace(good, "count: 2\n", "", 1), "count", "is missing"},
		{"zero cpus", strings.Replace(good, "cpus: 4", "cpus: 0", 1), "cpus", "not a number of CPUs"},
		{"memory without unit", strings.Replace(good, "memory: 8Gi", "memory: 4096", 1), "memory", "4096Mi"},
		{"memory not a quantity", strings.Replace(good, "memory: 8Gi", "memory: lots", 1), "memory", "not an amount of memory"},
		{"credential inline", strings.Replace(good, "token: {env: FAKE_TOKEN}", "token: hunter2", 1), "connection.credentials[token]", "inline secret is refused"},
		{"password in connection", strings.Replace(good, "  endpoint: fake://lab\n", "  endpoint: fake://lab\n  password: hunter2\n", 1), "connection.password", "inline secret is refused"},
		{"password at the top", good + "password: hunter2\n", "password", "inline secret is refused"},
		{"password in the machine", strings.Replace(good, "  user: Administrator\n", "  user: Administrator\n  password: hunter2\n", 1), "machine.password", "inline secret is refused"},
		{"password in the block", good + "  clientSecret: hunter2\n", "fake.clientSecret", "inline secret is refused"},
		{"credential unset", strings.Replace(good, "FAKE_TOKEN", "NOT_SET", 1), "connection.credentials[token].env", "NOT_SET is not set"},
		{"unknown credential", strings.Replace(good, "token: {env: FAKE_TOKEN}", "tokn: {env: FAKE_TOKEN}", 1), "connection.credentials[tokn]", `did you mean "token"`},
		{"no endpoint", strings.Replace(good, "  endpoint: fake://lab\n", "", 1), "connection.endpoint", "fake://name"},
		{"unknown field", good + "cpu: 3\n", "cpu", `did you mean "cpus"`},
		{"another provider's block", strings.Replace(good, "fake:\n  label: nightly\n", "other:\n  inventory: x.yaml\n", 1), "other", "block of provider other"},
		{"machine missing", strings.Replace(good, "machine:\n  user: Administrator\n  passwordFrom: {env: WIN_PW}\n  labels: {topology.kubernetes.io/zone: lab-1}\n", "", 1), "machine", "is missing"},
		{"machine names itself", strings.Replace(good, "  user: Administrator\n", "  user: Administrator\n  address: 10.0.0.1\n", 1), "machine.address", "set by the harness"},
		{"machine without password", strings.Replace(good, "  passwordFrom: {env: WIN_PW}\n", "", 1), "machine.passwordFrom", "is missing"},
		{"machine's bad port", strings.Replace(good, "  user: Administrator\n", "  user: Administrator\n  winrm: {port: 70000}\n", 1), "machine.winrm.port", "out of range"},
		{"machine's basic over http", strings.Replace(good, "  user: Administrator\n", "  user: Administrator\n  winrm: {auth: basic}\n", 1), "machine.winrm.auth", "basic"},
		{"bad name prefix", strings.Replace(good, "cpus: 4", "cpus: 4\nnamePrefix: Win_", 1), "namePrefix", "DNS label"},
		{"not yaml", "provider: [fake", "yaml", "not valid YAML"},
		{"empty file", "", "provider", "is missing"},
		{"fake block not a mapping", strings.Replace(good, "fake:\n  label: nightly\n", "fake: nightly\n", 1), "fake", "not a mapping"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parse(tc.src)
			configtest.Refused(t, err, tc.field, tc.want, "hunter2", "s3cret-w1n", "t0ken-value")
		})
	}
}

// A provider that does not answer is refused at Open, naming
// connection.endpoint, before any machine is made.
func TestOpenUnreachable(t *testing.T) {
	f, err := parse(good)
	if err != nil {
		t.Fatal(err)
	}
	_, err = vms.Open(t.Context(), f)
	configtest.Refused(t, err, "connection.endpoint", "connection refused")
	fake := vmstest.New()
	defer vmstest.Serve("lab", fake)()
	p, err := vms.Open(t.Context(), f)
	if err != nil || p != vms.Provider(fake) {
		t.Fatalf("Open = %v, %v, want the served fake", p, err)
	}
}

func TestFakeConforms(t *testing.T) {
	vmstest.Conformance(t, vmstest.New(), vms.Spec{Image: "golden"})
}
