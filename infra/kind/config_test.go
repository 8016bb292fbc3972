package kind

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
	"sigs.k8s.io/yaml"

	"github.com/winconform/winconform/config"
	"github.com/winconform/winconform/infra/cni"
	"github.com/winconform/winconform/infra/kubeletconfig"
	"github.com/winconform/winconform/internal/kubelines"
	"github.com/winconform/winconform/internal/text"
)

// ParseConfig decodes and checks a cluster file as LoadConfig does.
func ParseConfig(source string, data []byte) (Config, error) {
	c, err := config.Parse[config.Cluster](source, data, nil, check)
	if err != nil {
		return Config{}, err
	}
	return Config{*c}, nil
}

// base is a minimal valid cluster file; each case below changes one thing.
const base = `name: wc
workers: 2
networking:
  podSubnet: 10.244.0.0/16
  serviceSubnet: 10.96.0.0/12
cni:
  backend: vxlan
`

func TestDefaultConfig(t *testing.T) {
	c, err := ParseConfig("empty.yaml", nil)
	if err != nil {
		t.Fatalf("the embedded default does not parse: %v", err)
	}
	if !reflect.DeepEqual(c, DefaultConfig()) {
		t.Errorf("DefaultConfig() = %+v, differs from an empty file's: %+v", DefaultConfig(), c)
	}
	v := kubelines.Default().Version
	on := true
	want := Config{config.Cluster{
		Name:              "winconform",
		KubernetesVersion: v,
		NodeImage:         "kindest/node:" + v,
		NodeImageBuild:    config.BuildAuto,
		Workers:           1,
		Networking:        config.Networking{PodSubnet: "10.244.0.0/16", ServiceSubnet: "10.96.0.0/12"},
		CNI:               config.CNI{Backend: cni.VXLAN, VNI: 4096, Port: 4789},
		LoadBalancer:      config.LoadBalancer{Enabled: &on},
		ReadyTimeout:      config.Duration{Duration: 5 * time.Minute},
	}}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("default config =\n%+v\nwant\n%+v", c, want)
	}
	loaded, err := LoadConfig("")
	if err != nil || !reflect.DeepEqual(loaded, want) {
		t.Errorf("LoadConfig(\"\") = %+v, %v", loaded, err)
	}
}

func TestLoadConfigFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cluster.yaml")
	if err := os.WriteFile(path, []byte(base+"readyTimeout: 90s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := LoadConfig(path)
	if err != nil {
		t.Fatalf("LoadConfig: %v", err)
	}
	if c.Name != "wc" || c.Workers != 2 || c.ReadyTimeout.Duration != 90*time.Second {
		t.Errorf("loaded %+v", c)
	}
	// Defaults fill what the file leaves out.
	if c.CNI.VNI != cni.WindowsVNI || c.CNI.Port != cni.WindowsPort || c.NodeImageBuild != config.BuildAuto ||
		c.KubernetesVersion != kubelines.Default().Version || c.NodeImage != "kindest/node:"+kubelines.Default().Version {
		t.Errorf("defaults not applied: %+v", c)
	}

	_, err = LoadConfig(filepath.Join(t.TempDir(), "missing.yaml"))
	if err == nil || !strings.Contains(err.Error(), "missing.yaml: the file does not exist") {
		t.Errorf("missing file: %v", err)
	}

	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte(strings.Replace(base, "workers: 2", "workers: 99", 1)), 0o644)
	if _, err := LoadConfig(bad); err == nil || !atField(err, bad, "workers: 99") {
		t.Errorf("invalid file: error %v does not name the file and the field", err)
	}
}

func TestParseConfigRejectsUnknownFields(t *testing.T) {
	for field, doc := range map[string]string{
		"wrokers": base + "wrokers: 3\n",
		"vnii":    strings.Replace(base, "backend: vxlan", "backend: vxlan\n  vnii: 4096", 1),
		"podCIDR": strings.Replace(base, "networking:", "networking:\n  podCIDR: 10.0.0.0/8", 1),
	} {
		c, err := ParseConfig("my.yaml", []byte(doc))
		if err == nil {
			t.Errorf("unknown field %s accepted: %+v", field, c)
			continue
		}
		// The file, the line, the field and the nearest known one.
		if !strings.Contains(err.Error(), field) || !regexp.MustCompile(`^my\.yaml:\d+: `).MatchString(err.Error()) {
			t.Errorf("unknown field %s: error %q does not name it and the file", field, err)
		}
	}
	if _, err := ParseConfig("x", []byte("name: [a\n")); err == nil {
		t.Error("broken YAML accepted")
	}
	if _, err := ParseConfig("x", []byte(base+"name: other\n")); err == nil || !strings.Contains(err.Error(), "name: is written twice") {
		t.Errorf("duplicate key: %v", err)
	}
}

func TestParseConfigValidation(t *testing.T) {
	set := func(old, new string) string { return strings.Replace(base, old, new, 1) }
	for _, tc := range []struct {
		name  string
		doc   string
		field string // "" means valid
	}{
		{"base", base, ""},
		{"bad name", set("name: wc", "name: Bad_Name"), "name: "},
		{"empty name", set("name: wc", `name: ""`), "name: "},
		{"name too long", set("name: wc", "name: "+strings.Repeat("a", 41)), "name: "},
		{"name 40", set("name: wc", "name: "+strings.Repeat("a", 40)), ""},
		{"name trailing dash", set("name: wc", "name: wc-"), "name: "},
		{"workers -1", set("workers: 2", "workers: -1"), "workers: "},
		{"workers 11", set("workers: 2", "workers: 11"), "workers: "},
		{"workers 0", set("workers: 2", "workers: 0"), ""},
		{"workers 10", set("workers: 2", "workers: 10"), ""},
		{"pod subnet", set("10.244.0.0/16", "10.244.0.0"), "networking.podSubnet: "},
		{"pod subnet empty", set("podSubnet: 10.244.0.0/16", `podSubnet: ""`), "networking.podSubnet: "},
		{"service subnet", set("10.96.0.0/12", "ten.96/12"), "networking.serviceSubnet: "},
		{"backend", set("backend: vxlan", "backend: udp"), "cni.backend: "},
		{"vni", set("backend: vxlan", "backend: vxlan\n  vni: 16777216"), "cni.vni: "},
		{"port", set("backend: vxlan", "backend: vxlan\n  port: 70000"), "cni.port: "},
		{"host-gw", set("backend: vxlan", "backend: host-gw"), ""},
		// Silently accepted before (issue 31 item 6): a VNI or a VXLAN
		// port beside host-gw, a pod range inside the Service range.
		{"vni with host-gw", set("backend: vxlan", "backend: host-gw\n  vni: 4096"), "cni.vni: is vxlan's, and cni.backend is host-gw"},
		{"port with host-gw", set("backend: vxlan", "backend: host-gw\n  port: 4789"), "cni.port: is vxlan's"},
		{"pod subnet inside the service subnet", set("10.244.0.0/16", "10.96.8.0/24"), "networking.podSubnet: 10.96.8.0/24 overlaps networking.serviceSubnet 10.96.0.0/12"},
		{"service subnet inside the pod subnet", set("10.96.0.0/12", "10.244.16.0/20"), "networking.podSubnet: 10.244.0.0/16 overlaps"},
		{"remote nodes", base + "remoteNodes: 1\n", ""},
		{"remote nodes 5", base + "remoteNodes: 5\n", "remoteNodes: 5 is out of range; use 0 to 4"},
		{"remote nodes -1", base + "remoteNodes: -1\n", "remoteNodes: "},
		{"remote nodes on host-gw", set("backend: vxlan", "backend: host-gw") + "remoteNodes: 1\n", "remoteNodes: 1 with cni.backend host-gw"},
		{"default backend", set("  backend: vxlan\n", "  port: 8472\n"), ""},
		{"readyTimeout short", base + "readyTimeout: 5s\n", "readyTimeout: "},
		{"readyTimeout negative", base + "readyTimeout: -1m\n", "readyTimeout: "},
		{"readyTimeout 10s", base + "readyTimeout: 10s\n", ""},
		{"nodeImageBuild", base + "nodeImageBuild: sometimes\n", "nodeImageBuild: "},
		{"nodeImageBuild never", base + "nodeImageBuild: never\n", ""},
		// Every supported line, built locally or pulled.
		{"oldest line, always built", base + "kubernetesVersion: v1.35.4\nnodeImageBuild: always\n", ""},
		{"a line's name", base + "kubernetesVersion: \"1.36\"\n", ""},
		{"another patch, never built", base + "kubernetesVersion: v1.36.1\nnodeImageBuild: never\n", ""},
		// A line the harness does not support, whatever the node image.
		{"a line past its end of life", base + "kubernetesVersion: \"1.34\"\n", "kubernetesVersion: \"1.34\" is on Kubernetes 1.34, older than the oldest line the harness supports"},
		{"old line, never built", base + "kubernetesVersion: v1.33.1\nnodeImageBuild: never\n", "kubernetesVersion: \"v1.33.1\" is on Kubernetes 1.33"},
		{"a line newer than the harness knows", base + "kubernetesVersion: v1.39.0\n", "kubernetesVersion: \"v1.39.0\" is on Kubernetes 1.39, newer than any line the harness knows: the supported lines are 1.35 (v1.35.4), 1.36 (v1.36.3), 1.37 (v1.37.2) or 1.38 (v1.38.0-beta.0, a pre-release)"},
		{"no Kubernetes version", base + "kubernetesVersion: latest\n", "kubernetesVersion: \"latest\" is not a Kubernetes version: want v1.MINOR.PATCH or 1.MINOR"},
		{"a pre-release of a released line", base + "kubernetesVersion: v1.37.0-rc.1\n", "kubernetesVersion: \"v1.37.0-rc.1\" is a pre-release of Kubernetes 1.37, which is released"},
		// The line in pre-release: its pinned version, asked for, or its
		// name; nothing else of it.
		{"the pinned pre-release", base + "kubernetesVersion: v1.38.0-beta.0\n", ""},
		{"the pre-release line's name", base + "kubernetesVersion: \"1.38\"\n", ""},
		{"the pre-release line's unreleased release", base + "kubernetesVersion: v1.38.0\n", "kubernetesVersion: \"v1.38.0\" is no version of Kubernetes 1.38 the harness knows: the line is in pre-release, pinned to v1.38.0-beta.0"},
		{"another pre-release of the line", base + "kubernetesVersion: v1.38.0-rc.0\n", "kubernetesVersion: \"v1.38.0-rc.0\" is no version of Kubernetes 1.38 the harness knows"},
		{"the pre-release with build metadata", base + "kubernetesVersion: v1.38.0-beta.0+meta\n", "kubernetesVersion: \"v1.38.0-beta.0+meta\" is not a Kubernetes version"},
	} {
		c, err := ParseConfig("c.yaml", []byte(tc.doc))
		switch {
		case tc.field == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.field != "" && err == nil:
			t.Errorf("%s: accepted %+v", tc.name, c)
		case tc.field != "" && !atField(err, "c.yaml", tc.field):
			t.Errorf("%s: error %q does not start with the field %q", tc.name, err, tc.field)
		}
	}
}

// A file takes the embedded default for every field it leaves out, as
// kind's own config does.
func TestParseConfigTakesTheDefaultForWhatItLeavesOut(t *testing.T) {
	c, err := ParseConfig("c.yaml", []byte("name: wc-struct\nworkers: 2\nnetworking:\n  apiServerAddress: 192.168.1.10\n"))
	if err != nil {
		t.Fatalf("a file with name, workers and networking.apiServerAddress only: %v", err)
	}
	want := DefaultConfig()
	want.Name, want.Workers, want.Networking.APIServerAddress = "wc-struct", 2, "192.168.1.10"
	if !reflect.DeepEqual(c, want) {
		t.Errorf("got\n%+v\nwant\n%+v", c, want)
	}
	if c.Networking.PodSubnet != "10.244.0.0/16" || c.Networking.ServiceSubnet != "10.96.0.0/12" || c.CNI != (config.CNI{Backend: cni.VXLAN, VNI: 4096, Port: 4789}) {
		t.Errorf("the default's networking and CNI not taken: %+v %+v", c.Networking, c.CNI)
	}

	// Left out: the default; written, even as zero or empty: the file's.
	for doc, check := range map[string]func(Config) bool{
		"workers: 0\n":              func(c Config) bool { return c.Name == "winconform" && c.Workers == 0 },
		"name: other\n":             func(c Config) bool { return c.Name == "other" && c.Workers == 1 },
		"cni: {port: 8472}\n":       func(c Config) bool { return c.CNI == config.CNI{Backend: cni.VXLAN, VNI: 4096, Port: 8472} },
		"cni: {backend: host-gw}\n": func(c Config) bool { return c.CNI == config.CNI{Backend: cni.HostGW} },
		"readyTimeout: 90s\n": func(c Config) bool {
			return c.ReadyTimeout.Duration == 90*time.Second && c.Networking.PodSubnet == "10.244.0.0/16"
		},
		"# nothing\n": func(c Config) bool { return reflect.DeepEqual(c, DefaultConfig()) },
	} {
		c, err := ParseConfig("c.yaml", []byte(doc))
		if err != nil || !check(c) {
			t.Errorf("%q: %+v, %v", doc, c, err)
		}
	}
	if _, err := ParseConfig("c.yaml", []byte("networking:\n  podSubnet: \"\"\n")); err == nil || !atField(err, "c.yaml", "networking.podSubnet: ") {
		t.Errorf("an empty podSubnet written in the file: %v", err)
	}
}

func TestParseConfigNetworkingFields(t *testing.T) {
	withNet := func(extra string) string {
		return strings.Replace(base, "  serviceSubnet: 10.96.0.0/12\n", "  serviceSubnet: 10.96.0.0/12\n"+extra, 1)
	}
	for _, tc := range []struct {
		extra string
		field string
	}{
		{"  apiServerAddress: host.example\n", "networking.apiServerAddress: "},
		{"  apiServerAddress: 0.0.0.0\n", ""},
		{"  apiServerAddress: 192.168.1.10\n", ""},
		{"  apiServerPort: 70000\n", "networking.apiServerPort: "},
		{"  apiServerPort: -1\n", "networking.apiServerPort: "},
		{"  apiServerPort: 6443\n", ""},
		{"  certSANs: [win.example, \"\"]\n", "networking.certSANs[1]"},
		{"  certSANs: [win.example, 10.0.0.5]\n", ""},
	} {
		c, err := ParseConfig("c.yaml", []byte(withNet(tc.extra)))
		switch {
		case tc.field == "" && err != nil:
			t.Errorf("%q: %v", tc.extra, err)
		case tc.field != "" && err == nil:
			t.Errorf("%q: accepted %+v", tc.extra, c)
		case tc.field != "" && !atField(err, "c.yaml", tc.field):
			t.Errorf("%q: error %q does not start with %q", tc.extra, err, tc.field)
		}
	}
}

func TestParseConfigLoadBalancer(t *testing.T) {
	for _, tc := range []struct {
		doc     string
		field   string // "" means valid
		on      bool
		addrs   string
		message string // more the error must say
	}{
		{base, "", true, "", ""},
		{base + "loadBalancer: {}\n", "", true, "", ""},
		{base + "loadBalancer: {enabled: true}\n", "", true, "", ""},
		{base + "loadBalancer: {enabled: false}\n", "", false, "", ""},
		{base + "loadBalancer: {addresses: 172.18.255.200-172.18.255.250}\n", "", true, "172.18.255.200-172.18.255.250", ""},
		{base + "loadBalancer:\n  enabled: true\n  addresses: 172.18.255.192/28\n", "", true, "172.18.255.192/28", ""},
		{base + "loadBalancer: {addresses: 172.18.255.250-172.18.255.200}\n", "loadBalancer.addresses: ", false, "", "ends before it starts"},
		{base + "loadBalancer: {addresses: 172.18.255.201/28}\n", "loadBalancer.addresses: ", false, "", "host bits"},
		{base + "loadBalancer: {addresses: fd00::/120}\n", "loadBalancer.addresses: ", false, "", "IPv4"},
		{base + "loadBalancer: {addresses: lots}\n", "loadBalancer.addresses: ", false, "", "such as 172.18.255.200-172.18.255.250"},
		{base + "loadBalancer: {enabled: false, addresses: 172.18.255.192/28}\n", "loadBalancer.addresses: ", false, "", "enabled is false"},
		{base + "loadBalancer: {enabled: \"no\"}\n", "", false, "", "enabled"},
		{base + "loadBalancer: {addresses: [172.18.255.192/28]}\n", "", false, "", "addresses"},
		{base + "loadBalancer: {pool: 172.18.255.192/28}\n", "", false, "", "pool"},
		{base + "loadBalancer: false\n", "", false, "", "loadBalancer"},
	} {
		c, err := ParseConfig("c.yaml", []byte(tc.doc))
		wantErr := tc.field != "" || tc.message != ""
		switch {
		case !wantErr && err != nil:
			t.Errorf("%q: %v", tc.doc[len(base):], err)
		case !wantErr && (c.LoadBalancer.On() != tc.on || c.LoadBalancer.Addresses != tc.addrs):
			t.Errorf("%q: on %v addresses %q, want %v %q", tc.doc[len(base):], c.LoadBalancer.On(), c.LoadBalancer.Addresses, tc.on, tc.addrs)
		case wantErr && err == nil:
			t.Errorf("%q: accepted %+v", tc.doc[len(base):], c.LoadBalancer)
		case wantErr && (!atField(err, "c.yaml", tc.field) || !strings.Contains(err.Error(), tc.message)):
			t.Errorf("%q: error %q, want it to start with %q and say %q", tc.doc[len(base):], err, "c.yaml: "+tc.field, tc.message)
		}
	}
}

func TestParseConfigDefaultsPerBackend(t *testing.T) {
	c, err := ParseConfig("c", []byte(strings.Replace(base, "backend: vxlan", "backend: host-gw", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if c.CNI.VNI != 0 || c.CNI.Port != 0 {
		t.Errorf("host-gw got vxlan defaults: %+v", c.CNI)
	}
	c, err = ParseConfig("c", []byte(strings.Replace(base, "backend: vxlan", "backend: vxlan\n  vni: 1\n  port: 8472", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if c.CNI.VNI != 1 || c.CNI.Port != 8472 {
		t.Errorf("explicit VNI/port overridden: %+v", c.CNI)
	}
	c, err = ParseConfig("c", []byte(base+"kubernetesVersion: v1.36.3\nnodeImage: registry.example/node:x\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.NodeImage != "registry.example/node:x" {
		t.Errorf("explicit node image overridden: %q", c.NodeImage)
	}
	c, err = ParseConfig("c", []byte(base+"kubernetesVersion: v1.36.3\n"))
	if err != nil || c.NodeImage != "kindest/node:v1.36.3" {
		t.Errorf("node image for v1.36.3 = %q, %v", c.NodeImage, err)
	}
	// A line's name is its newest served patch.
	c, err = ParseConfig("c", []byte(base+"kubernetesVersion: v1.35\n"))
	if err != nil || c.KubernetesVersion != "v1.35.4" || c.NodeImage != "kindest/node:v1.35.4" {
		t.Errorf("kubernetesVersion v1.35: %q, node image %q, %v", c.KubernetesVersion, c.NodeImage, err)
	}
}

// The version chosen on the command line (--kubernetes-version, make's
// KUBERNETES_VERSION) overrides the file's, before any cluster work.
func TestWithKubernetesVersion(t *testing.T) {
	c, err := DefaultConfig().WithKubernetesVersion("v1.35.4")
	if err != nil || c.KubernetesVersion != "v1.35.4" || c.NodeImage != "kindest/node:v1.35.4" || c.Line().Minor != 35 {
		t.Errorf("v1.35.4: %q, %q, %v", c.KubernetesVersion, c.NodeImage, err)
	}
	if err := c.Validate(); err != nil {
		t.Errorf("overridden config invalid: %v", err)
	}
	c, err = DefaultConfig().WithKubernetesVersion("1.36")
	if err != nil || c.KubernetesVersion != "v1.36.3" || c.NodeImage != "kindest/node:v1.36.3" {
		t.Errorf("1.36: %q, %q, %v", c.KubernetesVersion, c.NodeImage, err)
	}
	// The line in pre-release only by asking for it: its pinned version.
	c, err = DefaultConfig().WithKubernetesVersion("1.38")
	if err != nil || c.KubernetesVersion != "v1.38.0-beta.0" || c.NodeImage != "kindest/node:v1.38.0-beta.0" || c.Line().Minor != 38 {
		t.Errorf("1.38: %q, %q, %v", c.KubernetesVersion, c.NodeImage, err)
	}
	if err := c.Validate(); err != nil {
		t.Errorf("1.38 config invalid: %v", err)
	}
	if d := DefaultConfig(); d.KubernetesVersion != "v1.37.2" || d.Line().PreRelease() {
		t.Errorf("the default config is on %s, want the newest released line", d.KubernetesVersion)
	}
	// A node image the file names stays.
	own, err := ParseConfig("c", []byte(base+"nodeImage: registry.example/node:x\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c, err := own.WithKubernetesVersion("v1.36.3"); err != nil || c.NodeImage != "registry.example/node:x" {
		t.Errorf("own node image: %q, %v", c.NodeImage, err)
	}
	for in, want := range map[string]string{
		"v1.34.4":   `"v1.34.4" is on Kubernetes 1.34, older than the oldest line the harness supports (past its end of life): the supported lines are 1.35 (v1.35.4), 1.36 (v1.36.3), 1.37 (v1.37.2) or 1.38 (v1.38.0-beta.0, a pre-release)`,
		"v1.38.0":   `"v1.38.0" is no version of Kubernetes 1.38 the harness knows`,
		"v1.99.0":   `"v1.99.0" is on Kubernetes 1.99, newer than any line the harness knows`,
		"v1.36.3.1": `"v1.36.3.1" is not a Kubernetes version: want v1.MINOR.PATCH or 1.MINOR, such as v1.37.2 or 1.37`,
		"":          `"" is not a Kubernetes version`,
	} {
		c, err := DefaultConfig().WithKubernetesVersion(in)
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("WithKubernetesVersion(%q) = %q, %v; want %q", in, c.KubernetesVersion, err, want)
		}
		if c.KubernetesVersion != kubelines.Default().Version {
			t.Errorf("WithKubernetesVersion(%q) changed the config on error: %q", in, c.KubernetesVersion)
		}
	}
}

func TestParseConfigBadDuration(t *testing.T) {
	for _, v := range []string{"300", "5 minutes", "true"} {
		_, err := ParseConfig("c.yaml", []byte(base+"readyTimeout: "+v+"\n"))
		if err == nil {
			t.Errorf("readyTimeout: %s accepted", v)
		}
	}
	_, err := ParseConfig("c.yaml", []byte(base+"readyTimeout: 300\n"))
	if err == nil || !strings.Contains(err.Error(), `readyTimeout: "300" is not a duration; write one such as 5m`) {
		t.Errorf("unquoted number: %v", err)
	}
}

func TestParseConfigBadDurationNamesField(t *testing.T) {
	for _, v := range []string{"300", "5 minutes", "true"} {
		_, err := ParseConfig("c.yaml", []byte(base+"readyTimeout: "+v+"\n"))
		if err == nil || !strings.Contains(err.Error(), "readyTimeout") {
			t.Errorf("readyTimeout: %s: error %v does not name the field", v, err)
		}
	}
}

func TestDurationJSON(t *testing.T) {
	b, err := json.Marshal(config.Duration{Duration: 90 * time.Second})
	if err != nil || string(b) != `"1m30s"` {
		t.Errorf("Marshal = %s, %v", b, err)
	}
	var d config.Duration
	if err := json.Unmarshal([]byte(`"2m"`), &d); err != nil || d.Duration != 2*time.Minute {
		t.Errorf("Unmarshal \"2m\" = %v, %v", d, err)
	}
	for _, bad := range []string{`120`, `""`, `"x"`} {
		var d config.Duration
		if err := json.Unmarshal([]byte(bad), &d); err == nil {
			t.Errorf("Unmarshal %s = %v, want an error", bad, d)
		}
	}
	// A config survives a round trip through YAML.
	c := DefaultConfig()
	c.Networking.CertSANs = []string{"a.example"}
	c.ReadyTimeout.Duration = 7 * time.Minute
	out, err := yaml.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseConfig("round trip", out)
	if err != nil {
		t.Fatalf("re-parsing %s: %v", out, err)
	}
	if !reflect.DeepEqual(back, c) {
		t.Errorf("round trip: %+v != %+v", back, c)
	}
}

func TestKindConfig(t *testing.T) {
	c := DefaultConfig()
	c.Workers = 3
	c.Networking.PodSubnet, c.Networking.ServiceSubnet = "10.10.0.0/16", "10.20.0.0/16"
	c.Networking.APIServerPort = 6443
	kc := c.KindConfig("img:1", false)
	if kc.Kind != "Cluster" || kc.APIVersion != "kind.x-k8s.io/v1alpha4" || kc.Name != "winconform" {
		t.Errorf("header: %+v %q", kc.TypeMeta, kc.Name)
	}
	n := kc.Networking
	if !n.DisableDefaultCNI {
		t.Error("kindnet not disabled: flannel would fight it")
	}
	if n.PodSubnet != "10.10.0.0/16" || n.ServiceSubnet != "10.20.0.0/16" || n.APIServerPort != 6443 || n.APIServerAddress != "" {
		t.Errorf("networking = %+v", n)
	}
	if n.KubeProxyMode != v1alpha4.IPTablesProxyMode {
		t.Errorf("kube-proxy mode = %q", n.KubeProxyMode)
	}
	if len(kc.Nodes) != 4 {
		t.Fatalf("%d nodes, want 1 control plane + 3 workers", len(kc.Nodes))
	}
	for i, node := range kc.Nodes {
		wantRole := v1alpha4.WorkerRole
		if i == 0 {
			wantRole = v1alpha4.ControlPlaneRole
		}
		if node.Role != wantRole || node.Image != "img:1" {
			t.Errorf("node %d = %s %s, want %s img:1", i, node.Role, node.Image, wantRole)
		}
	}
	// Without certSANs, the kubelet's patch alone.
	if len(kc.KubeadmConfigPatches) != 1 || kc.KubeadmConfigPatches[0] != kubeletconfig.ClusterPatch(c.Line(), false) {
		t.Errorf("patches without certSANs: %q", kc.KubeadmConfigPatches)
	}

	c.Workers = 0
	if kc := c.KindConfig("img:2", false); len(kc.Nodes) != 1 || kc.Nodes[0].Role != v1alpha4.ControlPlaneRole {
		t.Errorf("0 workers: nodes %+v", kc.Nodes)
	}
}

// certSANsOf decodes the ClusterConfiguration patch of kc, the first of
// its two (the kubelet's is the second).
func certSANsOf(t *testing.T, kc *v1alpha4.Cluster) []string {
	t.Helper()
	if len(kc.KubeadmConfigPatches) != 2 {
		t.Fatalf("patches = %q, want two", kc.KubeadmConfigPatches)
	}
	var p struct {
		Kind      string `json:"kind"`
		APIServer struct {
			CertSANs []string `json:"certSANs"`
		} `json:"apiServer"`
	}
	if err := yaml.UnmarshalStrict([]byte(kc.KubeadmConfigPatches[0]), &p); err != nil {
		t.Fatalf("patch %q: %v", kc.KubeadmConfigPatches[0], err)
	}
	if p.Kind != "ClusterConfiguration" {
		t.Errorf("patch kind = %q, want ClusterConfiguration", p.Kind)
	}
	return p.APIServer.CertSANs
}

func TestKindConfigCertSANs(t *testing.T) {
	c := DefaultConfig()
	c.Networking.CertSANs = []string{"win.example", "10.0.0.5"}
	got := certSANsOf(t, c.KindConfig("img", false))
	if want := []string{"localhost", "127.0.0.1", "win.example", "10.0.0.5"}; !slices.Equal(got, want) {
		t.Errorf("certSANs = %q, want %q", got, want)
	}

	c.Networking.APIServerAddress = "192.168.1.10"
	kc := c.KindConfig("img", false)
	if kc.Networking.APIServerAddress != "192.168.1.10" {
		t.Errorf("apiServerAddress = %q", kc.Networking.APIServerAddress)
	}
	got = certSANsOf(t, kc)
	if want := []string{"localhost", "192.168.1.10", "win.example", "10.0.0.5"}; !slices.Equal(got, want) {
		t.Errorf("certSANs = %q, want %q", got, want)
	}
	if !slices.Equal(c.Networking.CertSANs, []string{"win.example", "10.0.0.5"}) {
		t.Errorf("KindConfig changed the config's certSANs: %q", c.Networking.CertSANs)
	}
}

// On a cgroup v1 host the kubelet of every supported line is told
// failCgroupV1: false, which it otherwise defaults to true and refuses to
// start (k8s.io/kubelet@v0.37.2 config/v1beta1 types.go FailCgroupV1;
// k8s.io/kubernetes@v1.37.2 pkg/kubelet/apis/config/v1beta1/defaults.go);
// kind v0.33 leaves it unset. On cgroup v2 nothing changes.
func TestKindConfigFailCgroupV1(t *testing.T) {
	for _, l := range kubelines.Lines() {
		c, err := DefaultConfig().WithKubernetesVersion(l.Version)
		if err != nil {
			t.Fatal(err)
		}
		for _, v1 := range []bool{false, true} {
			kc := c.KindConfig("img", v1)
			if len(kc.KubeadmConfigPatches) != 1 {
				t.Fatalf("%s, cgroup v1 %v: patches %q, want one", l, v1, kc.KubeadmConfigPatches)
			}
			var p map[string]any
			if err := yaml.UnmarshalStrict([]byte(kc.KubeadmConfigPatches[0]), &p); err != nil {
				t.Fatal(err)
			}
			// kind merges a patch into the document of its kind (any apiVersion).
			if p["kind"] != "KubeletConfiguration" || p["enableSystemLogQuery"] != true {
				t.Errorf("%s, cgroup v1 %v: patch %v", l, v1, p)
			}
			if _, off := p["failCgroupV1"]; off != v1 {
				t.Errorf("%s, cgroup v1 %v: failCgroupV1 in the patch: %v", l, v1, off)
			}
		}
		if got := CgroupNote(true, l); got != "v1, failCgroupV1 off" {
			t.Errorf("CgroupNote(v1, %s) = %q", l, got)
		}
	}
	// With certSANs, both patches.
	c := DefaultConfig()
	c.Networking.CertSANs = []string{"win.example"}
	if kc := c.KindConfig("img", true); len(kc.KubeadmConfigPatches) != 2 || kc.KubeadmConfigPatches[1] != kubeletconfig.ClusterPatch(c.Line(), true) {
		t.Errorf("certSANs on cgroup v1: %q", kc.KubeadmConfigPatches)
	}
	if got := CgroupNote(false, kubelines.Default()); got != "v2" {
		t.Errorf("CgroupNote(v2) = %q", got)
	}
	if got := CgroupNote(true, kubelines.Line{Minor: 34}); got != "v1" {
		t.Errorf("CgroupNote(v1, a kubelet that starts on cgroup v1) = %q", got)
	}
}

func TestCNIManifest(t *testing.T) {
	c := DefaultConfig()
	for _, local := range []bool{false, true} {
		m, err := c.CNIManifest(local)
		if err != nil {
			t.Fatalf("CNIManifest(%v): %v", local, err)
		}
		image, policy := cni.UpstreamFlannelImage, "IfNotPresent"
		if local {
			image, policy = "winconform.local/flannel:"+cni.FlannelVersion, "Never"
		}
		if !strings.Contains(string(m), "image: "+image+"\n") || !strings.Contains(string(m), "imagePullPolicy: "+policy+"\n") {
			t.Errorf("local=%v: manifest does not use %s with pull policy %s", local, image, policy)
		}
		if !strings.Contains(string(m), `"VNI": 4096`) || !strings.Contains(string(m), `"Network": "10.244.0.0/16"`) {
			t.Errorf("local=%v: net-conf does not follow the config", local)
		}
	}
	c.CNI = config.CNI{Backend: cni.HostGW}
	m, err := c.CNIManifest(false)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(m), `"Type": "host-gw"`) || strings.Contains(string(m), `"VNI"`) {
		t.Error("host-gw config rendered a vxlan manifest")
	}
}

func TestFirstLine(t *testing.T) {
	for in, want := range map[string]string{"": "", "x": "x", "\n a\nb\n": "a", "one\ntwo\nthree": "one"} {
		if got := text.FirstLine(in); got != want {
			t.Errorf("text.FirstLine(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestValidateNamesTheFirstWrongSubnetDeterministically(t *testing.T) {
	doc := strings.NewReplacer("10.244.0.0/16", "bad-pods", "10.96.0.0/12", "bad-services").Replace(base)
	seen := map[string]bool{}
	for i := 0; i < 50; i++ {
		_, err := ParseConfig("c.yaml", []byte(doc))
		if err == nil {
			t.Fatal("two bad subnets accepted")
		}
		seen[err.Error()] = true
	}
	if len(seen) != 1 {
		t.Errorf("the same config gave %d different errors: %v", len(seen), seen)
	}
	for msg := range seen {
		if !regexp.MustCompile(`^c\.yaml:\d+: networking\.podSubnet: `).MatchString(msg) {
			t.Errorf("error %q does not name the first wrong field, networking.podSubnet", msg)
		}
	}
}

// atField says whether err starts with the file, the line where there is
// one, and field ("c.yaml:12: networking.podSubnet: ...").
func atField(err error, source, field string) bool {
	return regexp.MustCompile(`^` + regexp.QuoteMeta(source) + `(:\d+)?: ` + regexp.QuoteMeta(field)).MatchString(err.Error())
}

// The cluster file is read by the harness's one loader (config), as the
// inventory, the VM file, the policy and the image overrides are: every
// problem at once, each with its line and field, and an unknown field with
// the nearest known one.
func TestParseConfigSaysEveryProblemWithLineAndSuggestion(t *testing.T) {
	doc := "name: wc\nwrokers: 2\nnetworking:\n  podSubnet: 10.244.0.0/16\n  serviceSubnet: 10.96.0.0/12\ncni:\n  backend: vxlan\n  vnii: 4096\nreadyTimeout: 5 minutes\n"
	_, err := ParseConfig("c.yaml", []byte(doc))
	if err == nil {
		t.Fatal("accepted")
	}
	for _, want := range []string{
		`c.yaml:2: wrokers: is not a field of Cluster; did you mean "workers"?`,
		`c.yaml:8: cni.vnii: is not a field of cni; did you mean "vni"?`,
		`c.yaml:9: readyTimeout: "5 minutes" is not a duration; write one such as 5m or 90s`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	// A line's name unquoted is the number YAML reads, written as it is.
	c, err := ParseConfig("c.yaml", []byte(base+"kubernetesVersion: 1.36\n"))
	if err != nil || !strings.HasPrefix(c.KubernetesVersion, "v1.36.") {
		t.Errorf("kubernetesVersion: 1.36 unquoted: %v %q", err, c.KubernetesVersion)
	}
}

// TestHousekeepingPatches applies the kubelet's --housekeeping-interval
// patches as kind v0.33 does (RFC 6902, evanphx/json-patch/v5, to each
// document of the matching group, version and kind) to the nodeRegistration
// of kind's v1beta4 and v1beta3 templates (pkg/cluster/internal/kubeadm/
// config.go): the flag is added and kind's own arguments stay.
func TestHousekeepingPatches(t *testing.T) {
	docs := map[string]string{
		"v1beta4": `{"nodeRegistration": {"kubeletExtraArgs": [{"name": "node-ip", "value": "172.18.0.2"}, {"name": "provider-id", "value": "kind://docker/winconform/winconform-worker"}]}}`,
		"v1beta3": `{"nodeRegistration": {"kubeletExtraArgs": {"node-ip": "172.18.0.2", "provider-id": "kind://docker/winconform/winconform-worker"}}}`,
	}
	kc := DefaultConfig().KindConfig("img", false)
	applied := map[string]int{}
	for _, p := range kc.KubeadmConfigPatchesJSON6902 {
		if p.Group != "kubeadm.k8s.io" || (p.Kind != "InitConfiguration" && p.Kind != "JoinConfiguration") {
			t.Errorf("patch of %s/%s %s: not a kubeadm node configuration", p.Group, p.Version, p.Kind)
			continue
		}
		pj, err := yaml.YAMLToJSON([]byte(p.Patch))
		if err != nil {
			t.Fatalf("%s %s: %v", p.Version, p.Kind, err)
		}
		patch, err := jsonpatch.DecodePatch(pj)
		if err != nil {
			t.Fatalf("%s %s: %v", p.Version, p.Kind, err)
		}
		out, err := patch.Apply([]byte(docs[p.Version]))
		if err != nil {
			t.Fatalf("%s %s on kind's template: %v", p.Version, p.Kind, err)
		}
		var got struct {
			NodeRegistration struct {
				KubeletExtraArgs json.RawMessage `json:"kubeletExtraArgs"`
			} `json:"nodeRegistration"`
		}
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatal(err)
		}
		args := map[string]string{}
		if p.Version == "v1beta4" {
			var list []struct{ Name, Value string }
			if err := json.Unmarshal(got.NodeRegistration.KubeletExtraArgs, &list); err != nil {
				t.Fatal(err)
			}
			for _, a := range list {
				args[a.Name] = a.Value
			}
		} else if err := json.Unmarshal(got.NodeRegistration.KubeletExtraArgs, &args); err != nil {
			t.Fatal(err)
		}
		if args["housekeeping-interval"] != HousekeepingInterval || args["node-ip"] != "172.18.0.2" || args["provider-id"] == "" {
			t.Errorf("%s %s: kubelet arguments %v, want kind's and housekeeping-interval=%s", p.Version, p.Kind, args, HousekeepingInterval)
		}
		applied[p.Version+" "+p.Kind]++
	}
	if len(applied) != 4 {
		t.Errorf("patched %v, want InitConfiguration and JoinConfiguration of v1beta4 and v1beta3", applied)
	}
}
