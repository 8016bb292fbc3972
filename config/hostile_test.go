package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// hostileBlock is the block of the test's provider, "hostile".
type hostileBlock struct {
	Network string    `yaml:"network"`
	Token   SecretRef `yaml:"token"`
}

func (b *hostileBlock) Check(_ *Machines, p *field.Path) field.ErrorList {
	if b.Network == "" {
		return field.ErrorList{Missing(p.Child("network"), "set network")}
	}
	return nil
}

func init() {
	RegisterProvider[hostileBlock](Provider{Name: "hostile", Summary: "the tests' provider", Endpoint: Required, EndpointExample: "h://x",
		Credentials: []Credential{{Name: "password", Required: true}}})
}

// hostileSecret is what every variable holds: no error may show it.
const hostileSecret = "h0stile-S3cret"

// parseAny parses data as a file of kind.
func parseAny(kind, path string, data []byte) error {
	env := func(string) (string, bool) { return hostileSecret, true }
	var err error
	switch kind {
	case "Inventory":
		_, err = Parse[Inventory](path, data, env)
	case "Machines":
		_, err = Parse[Machines](path, data, env)
	case "Cluster":
		_, err = Parse[Cluster](path, data, env)
	case "GatePolicy":
		_, err = Parse[GatePolicy](path, data, env)
	default:
		_, err = Parse[ImageOverrides](path, data, env)
	}
	return err
}

var kinds = []string{"Inventory", "Machines", "Cluster", "GatePolicy", "ImageOverrides"}

// Every file refuses, at once and each with its field, line and fix:
// unknown keys at every level (the nearest known one suggested), keys
// written twice, values of the wrong type, secrets written inline, and an
// apiVersion or kind that is not its own. No secret is shown.
func TestHostileInput(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		kind, doc string
		want      []string // field: what the problem says
	}{
		{"Inventory", `apiVersion: winconform.io/v2
kind: Machines
defaults: {colour: red, password: ` + hostileSecret + `, winrm: {prot: 1}}
machines:
- name: win-a
  name: win-b
  address: [10.0.0.1]
  user: {name: a}
  passwordFrom: ` + hostileSecret + `
  winrm: {port: https, https: "yes", auth: {}}
  labels: {token: ` + hostileSecret + `, zone: [a]}
  taints: {a: b}
  underlay: {shape: routed, gateway: x}
- 5
machinez: []
`, []string{`apiVersion: "winconform.io/v2" is not an API version`, `kind: "Machines" is not the kind of this file`,
			`defaults.colour: is not a field of defaults`, "defaults.password: an inline secret is refused", `defaults.winrm.prot: is not a field of winrm; did you mean "port"?`,
			"machines[0].name: is written twice (first at line 5)", "machines[0].address: is a list, not a string", "machines[0].user: is a mapping, not a string",
			"machines[0].passwordFrom: an inline secret is refused", `machines[0].winrm.port: "https" is not a port`,
			`machines[0].winrm.https: is the string "yes", not true or false`, "machines[0].winrm.auth: is a mapping, not a string",
			"machines[0].labels[token]: an inline secret is refused", "machines[0].labels[zone]: is a list, not a string",
			"machines[0].taints: is a mapping, not a list", "machines[0].underlay.gateway: is not a field of underlay",
			"machines[1]: is the number 5, not a mapping", `machinez: is not a field of Inventory; did you mean "machines"?`}},
		{"Machines", `apiVersion: winconform.io/v1alpha1
kind: Inventory
provider: hostile
provider: hostile
connection: {endpoint: h://x, password: ` + hostileSecret + `, credentials: {password: ` + hostileSecret + `, pasword: {env: X}}}
image: [a]
count: "2"
memory: {a: b}
machine: {winrm: {https: 1}, passwordFrom: {env: A, file: b, secret: c}, nodeIP: 10.0.0.1}
hostile: {network: n, netwrok: m, token: ` + hostileSecret + `}
libvirt: {}
`, []string{`kind: "Inventory" is not the kind of this file`, "provider: is written twice", "connection.password: an inline secret is refused",
			"connection.credentials[password]: an inline secret is refused", `connection.credentials[pasword]: is not a credential of hostile; did you mean "password"?`,
			"image: is a list, not a string", `count: is the string "2", not a whole number`, "memory: is a mapping, not a single value",
			"machine.winrm.https: is the number 1, not true or false", "machine.passwordFrom.secret: an inline secret is refused",
			"machine.nodeIP: is set by the harness", `hostile.netwrok: is not a field of hostile; did you mean "network"?`,
			"hostile.token: an inline secret is refused", "libvirt: is not a field of the VM file"}},
		{"Cluster", "kind: Clustre\nname: a\nname: b\nnetworking: {podSubnet: [a], podCIDR: x}\ncni: {vni: vxlan}\nloadBalancer: {enabled: 1, token: x}\nworkers: 1.5\n",
			[]string{`kind: "Clustre" is not the kind of this file`, "name: is written twice", "networking.podSubnet: is a list, not a string",
				`networking.podCIDR: is not a field of networking`, `cni.vni: is the string "vxlan", not a whole number`,
				"loadBalancer.enabled: is the number 1, not true or false", "loadBalancer.token: an inline secret is refused", "workers: is the number 1.5, not a whole number"}},
		{"GatePolicy", "apiVersion: v1\nname: [x]\nrequired:\n- claims: NET-01\n  area: [NET]\nknownIssues: {claim: x}\nflakes: {tolerated: many, secret: x}\n",
			[]string{`apiVersion: "v1" is not an API version`, "name: is a list, not a string", "required[0].claims: is the string \"NET-01\", not a list",
				`required[0].area: is not a field of required; did you mean "areas"?`, "knownIssues: is a mapping, not a list",
				`flakes.tolerated: is the string "many", not a whole number`, "flakes.secret: an inline secret is refused"}},
		{"ImageOverrides", "kind: ImageOverride\nimages: {probe: [x], password: y}\nimages: {}\nregistrys: {}\ngcRegistry: {a: b}\n",
			[]string{`kind: "ImageOverride" is not the kind of this file`, "images[probe]: is a list, not a string", "images[password]: an inline secret is refused",
				"images: is written twice", `registrys: is not a field of ImageOverrides; did you mean "registries"?`, "gcRegistry: is a mapping, not a string"}},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			err := parseAny(tc.kind, filepath.Join(dir, "hostile.yaml"), []byte(tc.doc))
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v, want a *Error", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), ": "+w) {
					t.Errorf("no problem %q in:\n%v", w, err)
				}
			}
			for i, fe := range e.List {
				if e.Lines[i] == 0 && fe.Field != "" && !strings.HasSuffix(fe.Field, "password]") {
					t.Errorf("%s has no line: %v", fe.Field, Detail(fe))
				}
				if !strings.Contains(Detail(fe), "; ") {
					t.Errorf("%s: %q has no fix", fe.Field, Detail(fe))
				}
			}
			if strings.Contains(err.Error(), hostileSecret) {
				t.Errorf("the error shows a secret:\n%v", err)
			}
		})
	}
}

// FuzzLoad checks that the loader never panics on any file of any kind,
// says the fix of every problem, and never shows a secret it read.
func FuzzLoad(f *testing.F) {
	for _, name := range []string{"inventory.yaml"} {
		if data, err := os.ReadFile(filepath.Join("testdata", name)); err == nil {
			f.Add(uint8(0), data)
		}
	}
	for i, k := range kinds {
		f.Add(uint8(i), []byte("apiVersion: "+APIVersion+"\nkind: "+k+"\n"))
	}
	f.Add(uint8(1), []byte("provider: hostile\nconnection: {endpoint: h://x, credentials: {password: {env: P}}}\nimage: i\ncount: 1\nmachine: {user: u, passwordFrom: {file: f}}\nhostile: {network: n}\n"))
	f.Add(uint8(2), []byte("name: wc\nnetworking: {podSubnet: 10.244.0.0/16}\ncni: {backend: host-gw}\n"))
	f.Add(uint8(3), []byte("name: x\nrequired:\n- claims: [NET-01]\nknownIssues:\n- {claim: NET-01, reason: r, link: https://x.example, expires: 2026-01-01}\n"))
	f.Add(uint8(4), []byte("registries: {mcr.microsoft.com: mirror.example.com}\nimages: {probe: mirror.example.com/probe:1}\n"))
	f.Fuzz(func(t *testing.T, kind uint8, data []byte) {
		err := parseAny(kinds[int(kind)%len(kinds)], filepath.Join(t.TempDir(), "fuzz.yaml"), data)
		if err == nil {
			return
		}
		var e *Error
		if !errors.As(err, &e) || len(e.List) == 0 {
			t.Fatalf("error is not a *Error with problems: %v", err)
		}
		for _, fe := range e.List {
			if !strings.Contains(Detail(fe), "; ") {
				t.Errorf("a problem without its fix: %s: %q", fe.Field, Detail(fe))
			}
		}
		if !strings.Contains(string(data), hostileSecret) && strings.Contains(err.Error(), hostileSecret) {
			t.Errorf("the error shows a secret:\n%v", err)
		}
	})
}
