package kind

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// A cluster that exists is reused only on the Kubernetes line asked for
// (kubernetesVersion, --kubernetes-version, make KUBERNETES_VERSION=...):
// the suites of a run that asks for 1.35 must not run on a 1.37 cluster of
// the same name. Its version is read before any work: before the host's
// quirks are probed, the docker shim set up or its kubeconfig written.

// nodeVersion is a Kubernetes version as a node records it: v1.MINOR.PATCH
// and what may follow (a pre-release, a build's commit, the harness's
// image digest), or v1.MINOR.
var nodeVersion = regexp.MustCompile(`^v?1\.(0|[1-9]\d{0,3})(?:\.(0|[1-9]\d{0,3}))?`)

// versionOf returns the Kubernetes version at the start of s, with a
// leading v, and its minor: ("v1.37.2", 37) for "v1.37.2" or
// "v1.37.2-0123456789ab".
func versionOf(s string) (version string, minor int, ok bool) {
	m := nodeVersion.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return "", 0, false
	}
	minor, _ = strconv.Atoi(m[1]) // at most four digits
	return "v" + strings.TrimPrefix(m[0], "v"), minor, true
}

// imageTag returns the tag of an image reference, without its digest:
// "v1.37.2" for kindest/node:v1.37.2@sha256:..., "" when it has none.
func imageTag(ref string) string {
	ref, _, _ = strings.Cut(strings.TrimSpace(ref), "@")
	name := ref[strings.LastIndex(ref, "/")+1:]
	_, tag, _ := strings.Cut(name, ":")
	return tag
}

// existingVersion returns the Kubernetes version of the existing cluster's
// control plane and where it was read: what its node image records in
// /kind/version (kind's node images and the harness's own both write it),
// read by a plain docker exec (no --privileged, which a host that needs
// the shim refuses: it is not set up yet), or, when the node does not
// answer (stopped), the version its node image's tag names
// (kindest/node:v1.37.2, winconform.local/kind-node:v1.37.2-<digest>).
// ok is false when neither says.
func (c *Cluster) existingVersion(ctx context.Context) (version, from string, minor int, ok bool) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cp := c.cfg.Name + "-control-plane"
	if out, err := c.docker.Output(ctx, nil, "exec", cp, "cat", "/kind/version"); err == nil {
		if version, minor, ok = versionOf(string(out)); ok {
			return version, cp + ":/kind/version", minor, true
		}
	}
	if out, err := c.docker.Output(ctx, nil, "inspect", "--format", "{{.Config.Image}}", cp); err == nil {
		image := strings.TrimSpace(string(out))
		if version, minor, ok = versionOf(imageTag(image)); ok {
			return version, "its node image " + image, minor, true
		}
	}
	return "", "", 0, false
}

// checkExistingLine refuses the existing cluster when it runs another
// Kubernetes line than the one asked for, naming both and the fix. A
// cluster whose version cannot be read is left to the checks that follow
// (it does not answer: reuse says it is not healthy), and said so.
func (c *Cluster) checkExistingLine(ctx context.Context) error {
	want := c.cfg.Line()
	version, from, minor, ok := c.existingVersion(ctx)
	switch {
	case !ok:
		c.logf("cluster %q exists, but its Kubernetes version could not be read (neither %s-control-plane:/kind/version nor its node image's tag): it is not checked against %s", c.cfg.Name, c.cfg.Name, c.cfg.KubernetesVersion)
		return nil
	case minor == want.Minor:
		return nil
	}
	return fmt.Errorf("cluster %q exists on Kubernetes %s (%s), not on the %s line asked for (%s): the run would test 1.%d, not %s; delete it with `winconform down --name %s` (make down) and run again, or give this run another --name",
		c.cfg.Name, version, from, want.Name(), c.cfg.KubernetesVersion, minor, want.Name(), c.cfg.Name)
}
