package kind

import (
	"bytes"
	"strings"
	"testing"
)

// `e2e --kubernetes-version 1.35` (make e2e KUBERNETES_VERSION=1.35) while
// the cluster of that name runs 1.37: Up refuses it before any work (no
// container run, no network made, nothing exec'd --privileged, no
// kubeconfig written), naming both versions and the fix.
func TestUpRefusesAClusterOfAnotherLine(t *testing.T) {
	calls := fakeDocker(t, "")
	cfg := DefaultConfig()
	cfg.Name = "wc"
	cfg, err := cfg.WithKubernetesVersion("1.35")
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	dir := t.TempDir()
	c, err := New(t.Context(), cfg, Options{Kubeconfig: dir + "/kubeconfig", CacheDir: dir, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Up(t.Context())
	if err == nil {
		t.Fatal("Up reused a 1.37 cluster for 1.35")
	}
	t.Log(err)
	for _, want := range []string{`cluster "wc"`, "v1.37.2", "1.35", "make down", "--name"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal does not say %q: %v", want, err)
		}
	}
	if strings.Contains(log.String(), "checking it") {
		t.Errorf("Up went on to check the cluster:\n%s", log.String())
	}
	for _, call := range dockerCalls(t, calls) {
		if strings.HasPrefix(call, "run ") || strings.HasPrefix(call, "network ") || strings.Contains(call, "--privileged") {
			t.Errorf("work before the refusal: docker %s", call)
		}
	}
}

// newFakeCluster is cluster "wc" on version, through the fake docker.
func newFakeCluster(t *testing.T, version string) (*Cluster, *bytes.Buffer) {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Name = "wc"
	cfg, err := cfg.WithKubernetesVersion(version)
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	dir := t.TempDir()
	c, err := New(t.Context(), cfg, Options{Kubeconfig: dir + "/kubeconfig", CacheDir: dir, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	return c, &log
}

// The cluster's version is what its control plane's /kind/version says;
// of a node that does not answer (stopped), its node image's tag; of
// neither, unknown, and the cluster is left to the checks that follow.
// Another patch of the line asked for is the line.
func TestCheckExistingLine(t *testing.T) {
	const stopped = `"exec wc-control-plane cat /kind/version") echo 'Error response from daemon: Container wc-control-plane is not running' >&2; exit 1 ;;
`
	for _, tc := range []struct {
		name, fake, asked, want string
	}{
		{"the same line", "", "1.37", ""},
		{"another patch of the line", "", "v1.37.0", ""},
		{"an older line", "", "v1.36.3", `cluster "wc" exists on Kubernetes v1.37.2 (wc-control-plane:/kind/version), not on the 1.36 line asked for (v1.36.3): the run would test 1.37, not 1.36`},
		{"a version with a build's suffix", `"exec wc-control-plane cat /kind/version") echo v1.35.0-alpha.3.12+0123abcd ;;
`, "1.37", "exists on Kubernetes v1.35.0 (wc-control-plane:/kind/version), not on the 1.37 line"},
		{"a stopped node of the harness's image", stopped + `"inspect --format {{.Config.Image}} wc-control-plane") echo winconform.local/kind-node:v1.36.3-0123456789ab ;;
`, "1.37", "exists on Kubernetes v1.36.3 (its node image winconform.local/kind-node:v1.36.3-0123456789ab)"},
		{"a stopped node of kind's image by digest", stopped + `"inspect --format {{.Config.Image}} wc-control-plane") echo kindest/node:v1.35.4@sha256:0123 ;;
`, "1.37", "exists on Kubernetes v1.35.4 (its node image kindest/node:v1.35.4@sha256:0123)"},
		{"an image without a version", stopped + `"inspect --format {{.Config.Image}} wc-control-plane") echo localhost:5000/node:dev ;;
`, "1.35", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fakeDocker(t, tc.fake)
			c, log := newFakeCluster(t, tc.asked)
			err := c.checkExistingLine(t.Context())
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("got %v, want an error saying %q", err, tc.want)
			}
			if tc.name == "an image without a version" && !strings.Contains(log.String(), "its Kubernetes version could not be read") {
				t.Errorf("an unknown version is not said:\n%s", log.String())
			}
		})
	}
}
