package nodeconfig

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// ContainerdConfigPath is containerd's configuration file on a machine, where
// containerd.exe reads it by default (its --config default,
// %ProgramFiles%\containerd\config.toml).
const ContainerdConfigPath = ContainerdDir + `\config.toml`

// ContainerdConfigVersion is the configuration version containerd of
// version (MAJOR.MINOR.PATCH) reads as its own: 2 for containerd 1.7, 3 for
// 2.0 to 2.2, 4 from 2.3 on (containerd 1.7 refuses anything past 2;
// containerd 2 migrates an older file as it loads it, and refuses a newer
// one: cmd/containerd/server/config, ValidateVersion, containerd v2.3.7).
func ContainerdConfigVersion(version string) (int, error) {
	major, minor, err := containerdLine(version)
	if err != nil {
		return 0, err
	}
	switch {
	case major == 1 && minor == 7:
		return 2, nil
	case major == 2 && minor <= 2:
		return 3, nil
	case major == 2:
		return 4, nil
	}
	return 0, fmt.Errorf("nodeconfig: containerd %s: the join writes configuration for containerd 1.7 and 2.x only", version)
}

var containerdVersionPattern = regexp.MustCompile(`^v?(\d+)\.(\d+)\.(\d+)$`)

func containerdLine(version string) (major, minor int, err error) {
	m := containerdVersionPattern.FindStringSubmatch(version)
	if m == nil {
		return 0, 0, fmt.Errorf("nodeconfig: %q is no containerd version (MAJOR.MINOR.PATCH)", version)
	}
	major, _ = strconv.Atoi(m[1])
	minor, _ = strconv.Atoi(m[2])
	return major, minor, nil
}

// Containerd is what the join sets in containerd's configuration.
type Containerd struct {
	// Version is the containerd release the node runs, MAJOR.MINOR.PATCH.
	Version string
	// SandboxImage is the pause image of every pod.
	SandboxImage string
}

// ConfigTOML is containerd's config.toml for c.Version: its configuration
// version, the sandbox image, and the CNI's directories, each in the table
// and under the key that containerd version reads it from, and nothing
// else, so that every other setting is the Windows build's default
// (`containerd config default` on Windows: the runhcs runtimes, the windows
// snapshotter; its own image verifier's directory, whose programs it runs
// on every pull). Values are TOML literal strings (single quotes), which
// take a Windows path's backslashes as they are.
//
//   - Version 2, containerd 1.7: the CRI plugin io.containerd.grpc.v1.cri
//     has sandbox_image, its cni table bin_dir and conf_dir
//     (pkg/cri/config/config.go, v1.7.28).
//   - Versions 3 and 4, containerd 2.x: the CRI image service's
//     io.containerd.cri.v1.images has pinned_images.sandbox, the CRI
//     runtime's io.containerd.cri.v1.runtime has cni.bin_dirs (2.1 on; the
//     deprecated bin_dir beside it makes 2.1 to 2.3 load no CRI, and 2.4
//     dropped it) and cni.conf_dir (internal/cri/config, v2.1.9 to v2.4.2).
//
// The join installs no containerd 2.0: no Kubernetes line it supports
// pairs with it (internal/kubelines).
func (c Containerd) ConfigTOML() ([]byte, error) {
	v, err := ContainerdConfigVersion(c.Version)
	if err != nil {
		return nil, err
	}
	major, minor, _ := containerdLine(c.Version)
	if major == 2 && minor == 0 {
		return nil, fmt.Errorf("nodeconfig: containerd %s: the join installs containerd 1.7 or 2.1 and later (2.0 has no cni.bin_dirs, and no Kubernetes line the harness supports pairs with it)", c.Version)
	}
	for _, s := range []struct{ what, value string }{{"sandbox image", c.SandboxImage}, {"CNI bin directory", CNIBinDir}, {"CNI conf directory", CNIConfDir}} {
		if s.value == "" || strings.ContainsAny(s.value, "'\n\r") {
			return nil, fmt.Errorf("nodeconfig: the %s %q cannot be a TOML literal string (empty, or holds a quote or a line break)", s.what, s.value)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "version = %d\n", v)
	if v == 2 {
		fmt.Fprintf(&b, "\n[plugins.\"io.containerd.grpc.v1.cri\"]\n  sandbox_image = '%s'\n", c.SandboxImage)
		fmt.Fprintf(&b, "\n[plugins.\"io.containerd.grpc.v1.cri\".cni]\n  bin_dir = '%s'\n  conf_dir = '%s'\n", CNIBinDir, CNIConfDir)
		return []byte(b.String()), nil
	}
	fmt.Fprintf(&b, "\n[plugins.'io.containerd.cri.v1.images'.pinned_images]\n  sandbox = '%s'\n", c.SandboxImage)
	fmt.Fprintf(&b, "\n[plugins.'io.containerd.cri.v1.runtime'.cni]\n  bin_dirs = ['%s']\n  conf_dir = '%s'\n", CNIBinDir, CNIConfDir)
	return []byte(b.String()), nil
}
