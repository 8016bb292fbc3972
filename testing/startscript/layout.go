package startscript

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// ServiceAccountMountPath is where the ServiceAccount admission plugin
// mounts a pod's API token (kubernetes plugin/pkg/admission/serviceaccount,
// DefaultAPITokenMountPath), as a projected volume, unless the pod opts out.
const ServiceAccountMountPath = "/var/run/secrets/kubernetes.io/serviceaccount"

// Volume is a volume of a container as the kubelet hands it to the runtime.
type Volume struct {
	Name      string
	MountPath string // as in the pod's volumeMounts: /var/lib/kube-proxy-windows
	Kind      string // ConfigMap kube-proxy-windows, projected (ServiceAccount token), ...
	// ReadOnly is the kubelet's CRI mount's readonly: the volumeMount's
	// readOnly, or the volume plugin's (ConfigMap, Secret, projected and
	// downward API volumes are always read-only: pkg/volume/configmap,
	// secret, projected, downwardapi GetAttributes; pkg/kubelet
	// makeMounts).
	ReadOnly bool
}

// Volumes are a container's volumes: its volumeMounts, and the
// ServiceAccount token that admission adds.
func Volumes(spec *corev1.PodSpec, container string) ([]Volume, error) {
	var c *corev1.Container
	for i := range spec.Containers {
		if spec.Containers[i].Name == container {
			c = &spec.Containers[i]
		}
	}
	if c == nil {
		return nil, fmt.Errorf("no container %q", container)
	}
	byName := map[string]*corev1.Volume{}
	for i := range spec.Volumes {
		byName[spec.Volumes[i].Name] = &spec.Volumes[i]
	}
	var out []Volume
	token := false
	for _, m := range c.VolumeMounts {
		v, ok := byName[m.Name]
		if !ok {
			return nil, fmt.Errorf("container %s mounts %s, which the pod does not have", container, m.Name)
		}
		vol := Volume{Name: m.Name, MountPath: m.MountPath, ReadOnly: m.ReadOnly}
		switch {
		case v.ConfigMap != nil:
			vol.Kind, vol.ReadOnly = "ConfigMap "+v.ConfigMap.Name, true
		case v.Secret != nil:
			vol.Kind, vol.ReadOnly = "Secret "+v.Secret.SecretName, true
		case v.Projected != nil:
			vol.Kind, vol.ReadOnly = "projected", true
		case v.DownwardAPI != nil:
			vol.Kind, vol.ReadOnly = "downward API", true
		case v.EmptyDir != nil:
			vol.Kind = "emptyDir"
		case v.HostPath != nil:
			vol.Kind = "hostPath " + v.HostPath.Path
		default:
			vol.Kind = "volume"
		}
		if Clean(m.MountPath) == Clean(ServiceAccountMountPath) {
			token = true
		}
		out = append(out, vol)
	}
	if !token && (spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken) {
		out = append(out, Volume{Name: "kube-api-access", MountPath: ServiceAccountMountPath, Kind: "projected (the ServiceAccount token)", ReadOnly: true})
	}
	return out, nil
}

// Layout is where a HostProcess container sees its volumes, as one
// containerd (and the hcsshim it builds on) lays them out.
type Layout struct {
	Name string
	// SandboxMountPoint is $env:CONTAINER_SANDBOX_MOUNT_POINT: where the
	// container's image (its own root) is, a scratch volume that a
	// restarted container gets anew.
	SandboxMountPoint string
	Views             []View
}

// View is one place a container sees a volume.
type View struct {
	Volume Volume
	Path   string
	How    string
}

// Layouts are the two layouts of HostProcess volumes:
//   - containerd 1.6 (hcsshim 0.9.x, internal/jobcontainers): the image at
//     C:\C\<container id>\ (sandboxMountFormat), each volume a symlink
//     under it at its mountPath (setupMounts); nothing at the mountPath on
//     the host.
//   - containerd 1.7 and 2.x (hcsshim 0.10 and later, with the bind filter,
//     bindfltapi.dll, present from Windows Server 2019's July 2022 update):
//     the image bound at C:\hpc\ in the container's silo
//     (defaultSiloRootfsLocation), each volume bound at its mountPath
//     (containerd's CRI prefixes C:, WithWindowsMounts), read-only when the
//     CRI mount says "ro" (BINDFLT_FLAG_READ_ONLY_MAPPING), shadowing what
//     the host has there, and linked under C:\hpc\ as well, best effort
//     (setupMounts). KEP-1981 (Compatibility): containerd 1.7 always binds.
//
// The id of 1.6's directory is made up: no script can know it beforehand.
func Layouts(vols []Volume) []Layout {
	l16 := Layout{Name: "containerd 1.6 (hcsshim 0.9: volumes linked under the container's root)", SandboxMountPoint: `C:\C\0123456789ab\`}
	l17 := Layout{Name: "containerd 1.7 and 2.x (hcsshim 0.10+: volumes bound at their mountPath)", SandboxMountPoint: `C:\hpc\`}
	for _, v := range vols {
		l16.Views = append(l16.Views, View{Volume: v, Path: Clean(l16.SandboxMountPoint + v.MountPath), How: "links under the container's root"})
		l17.Views = append(l17.Views,
			View{Volume: v, Path: Clean(v.MountPath), How: "binds at its mountPath"},
			View{Volume: v, Path: Clean(l17.SandboxMountPoint + v.MountPath), How: "links under the container's root"})
	}
	return []Layout{l16, l17}
}

// Env is the container's environment in this layout: the manifest's
// values, Unknown for those set from elsewhere, and
// CONTAINER_SANDBOX_MOUNT_POINT.
func (l Layout) Env(c *corev1.Container) Env {
	env := Env{"CONTAINER_SANDBOX_MOUNT_POINT": l.SandboxMountPoint}
	for _, e := range c.Env {
		if e.ValueFrom != nil {
			env[e.Name] = Unknown
		} else {
			env[e.Name] = e.Value
		}
	}
	return env
}

// under says whether p is dir or in it (both cleaned; Windows paths are
// case-insensitive).
func under(p, dir string) bool {
	p, dir = strings.ToLower(p), strings.ToLower(dir)
	return p == dir || strings.HasPrefix(p, dir+`\`)
}

// CheckWrite says why a write to path fails or is lost in this layout, or
// nil when the node keeps it: a path in a read-only volume fails (and one
// in a writable volume is the volume's, not the node's); a path under the
// container's own root is lost when the container restarts. Making a
// directory where a volume is seen changes nothing (it is there).
func (l Layout) CheckWrite(a Access, p string) error {
	for _, v := range l.Views {
		if !under(p, v.Path) {
			continue
		}
		if a.Dir && strings.EqualFold(p, v.Path) {
			continue
		}
		mode := "read-only"
		if !v.Volume.ReadOnly {
			mode = "writable"
		}
		return fmt.Errorf("%s is in the %s %s volume %s, which %s %s, %s", p, mode, v.Volume.Kind, v.Volume.Name, l.Name, v.How, v.Path)
	}
	if under(p, Clean(l.SandboxMountPoint)) {
		return fmt.Errorf("%s is under the container's own root %s in %s: a restarted container starts from its image again", p, l.SandboxMountPoint, l.Name)
	}
	return nil
}

// Shadowed says which volume a container sees at a host path it means to
// read, or nil when it sees the host's own file.
func (l Layout) Shadowed(p string) *View {
	for i, v := range l.Views {
		if under(p, v.Path) {
			return &l.Views[i]
		}
	}
	return nil
}
