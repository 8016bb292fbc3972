package main

import (
	"strings"
	"testing"
)

// --kubernetes-version (make's KUBERNETES_VERSION) picks the cluster's line
// before any cluster work, and refuses a version the harness does not
// support with the supported lines.
func TestClusterFlagsKubernetesVersion(t *testing.T) {
	f := clusterFlags{version: "1.35"}
	cfg, err := f.load()
	if err != nil || cfg.KubernetesVersion != "v1.35.4" || cfg.NodeImage != "kindest/node:v1.35.4" {
		t.Errorf("--kubernetes-version 1.35: %q, %q, %v", cfg.KubernetesVersion, cfg.NodeImage, err)
	}
	f = clusterFlags{}
	if cfg, err := f.load(); err != nil || cfg.KubernetesVersion != "v1.37.2" {
		t.Errorf("no flag: %q, %v; want the newest line, v1.37.2", cfg.KubernetesVersion, err)
	}
	// The line in pre-release only by asking for it.
	f = clusterFlags{version: "1.38"}
	if cfg, err := f.load(); err != nil || cfg.KubernetesVersion != "v1.38.0-beta.0" {
		t.Errorf("--kubernetes-version 1.38: %q, %v", cfg.KubernetesVersion, err)
	}
	for in, want := range map[string]string{
		"v1.34.4": `--kubernetes-version: "v1.34.4" is on Kubernetes 1.34, older than the oldest line the harness supports (past its end of life): the supported lines are 1.35 (v1.35.4), 1.36 (v1.36.3), 1.37 (v1.37.2) or 1.38 (v1.38.0-beta.0, a pre-release)`,
		"v1.38.0": `--kubernetes-version: "v1.38.0" is no version of Kubernetes 1.38 the harness knows: the line is in pre-release, pinned to v1.38.0-beta.0 (a newer pre-release, or the release once the Go module proxy serves it, goes into internal/kubelines/kubelines.go)`,
		"stable":  `--kubernetes-version: "stable" is not a Kubernetes version: want v1.MINOR.PATCH or 1.MINOR, such as v1.37.2 or 1.37`,
	} {
		f := clusterFlags{version: in}
		if _, err := f.load(); err == nil || err.Error() != want {
			t.Errorf("--kubernetes-version %s: %v\nwant %s", in, err, want)
		}
	}
	if !strings.Contains(upCmd().Flags().Lookup("kubernetes-version").Usage, "1.35 (v1.35.4), 1.36 (v1.36.3), 1.37 (v1.37.2) or 1.38 (v1.38.0-beta.0, a pre-release)") {
		t.Error("the flag's help does not list the supported lines")
	}
}
