package windows

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/winconform/winconform/infra/windows/remote"
)

// IdentifyScript asks a Windows machine what it is: its operating system's
// caption, version and revision (Win32_OperatingSystem's Caption and
// Version, the registry's UBR), its computer name, and the hardware
// configuration the Windows kubelet reports as its node's systemUUID
// (HKLM\SYSTEM\HardwareConfig's LastConfig). It is no step of a join: the
// harness's simulated machine, which answers only the steps, cannot
// answer it.
const IdentifyScript = `$os = Get-CimInstance -ClassName Win32_OperatingSystem
$cv = Get-ItemProperty -LiteralPath 'HKLM:\SOFTWARE\Microsoft\Windows NT\CurrentVersion'
$hw = Get-ItemProperty -LiteralPath 'HKLM:\SYSTEM\HardwareConfig'
[ordered]@{
    caption    = $os.Caption
    version    = $os.Version
    ubr        = $cv.UBR
    hostname   = [Environment]::MachineName
    lastConfig = $hw.LastConfig
} | ConvertTo-Json -Compress`

// Identity is what a Windows machine answered about itself.
type Identity struct {
	// Machine is the inventory's name for it.
	Machine string
	// Caption is Win32_OperatingSystem's: "Microsoft Windows Server 2022 Datacenter".
	Caption string
	// Build is its version and revision: 10.0.20348.2340, as the Windows
	// kubelet reports its node's kernel version.
	Build string
	// Hostname is its computer name.
	Hostname string
	// SystemUUID is its hardware configuration as the Windows kubelet
	// reports it (LastConfig without braces, in upper case).
	SystemUUID string
}

// Identify asks machine m what it is (IdentifyScript) and reads its answer
// (ParseIdentity): only a machine that answered so is a Windows machine.
func Identify(ctx context.Context, m remote.Exec) (Identity, error) {
	res, err := m.RunPS(ctx, "identify", IdentifyScript)
	if err != nil {
		return Identity{}, fmt.Errorf("asking machine %s what it is: %w", m.Name(), err)
	}
	if err := res.Err(); err != nil {
		return Identity{}, fmt.Errorf("asking machine %s what it is: %w", m.Name(), err)
	}
	return ParseIdentity(m.Name(), res.Stdout)
}

var (
	versionPattern = regexp.MustCompile(`^10\.0\.[0-9]{5}$`)
)

// ParseIdentity reads IdentifyScript's answer from machine: an error
// unless it names a Windows operating system ("Microsoft Windows ...", as
// Win32_OperatingSystem's Caption always does) and a build (10.0.NNNNN
// and a revision).
func ParseIdentity(machine, stdout string) (Identity, error) {
	var a struct {
		Caption, Version, Hostname, LastConfig string
		UBR                                    *int
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(stdout)), &a); err != nil {
		return Identity{}, fmt.Errorf("machine %s: its answer to what it is, %q, does not read: %w", machine, stdout, err)
	}
	id := Identity{Machine: machine, Caption: a.Caption, Hostname: a.Hostname,
		SystemUUID: strings.ToUpper(strings.Trim(a.LastConfig, "{}"))}
	switch {
	case !strings.HasPrefix(a.Caption, "Microsoft Windows"):
		return Identity{}, fmt.Errorf("machine %s says its operating system is %q, not Microsoft Windows", machine, a.Caption)
	case !versionPattern.MatchString(a.Version) || a.UBR == nil:
		return Identity{}, fmt.Errorf("machine %s names no Windows build: version %q, revision %v", machine, a.Version, a.UBR)
	case id.SystemUUID == "":
		return Identity{}, fmt.Errorf("machine %s names no hardware configuration (HKLM\\SYSTEM\\HardwareConfig LastConfig)", machine)
	}
	id.Build = fmt.Sprintf("%s.%d", a.Version, *a.UBR)
	return id, nil
}

// BuildLabel is the machine's build as node.kubernetes.io/windows-build
// has it: 10.0.20348.
func (id Identity) BuildLabel() string {
	parts := strings.Split(id.Build, ".")
	if len(parts) < 3 {
		return id.Build
	}
	return strings.Join(parts[:3], ".")
}

// annotationKwok marks a node that kwok simulates.
const annotationKwok = "kwok.x-k8s.io/node"

// Joined checks that node is machine id's node, joined to the cluster: a
// real node (not one kwok simulates), labelled kubernetes.io/os=windows,
// Ready, of the machine's build (its label and its kernel version), and
// run by a kubelet on this machine: the Windows kubelet reports the
// machine's hardware configuration as the node's systemUUID.
func (id Identity) Joined(node *corev1.Node) error {
	ready := false
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			ready = c.Status == corev1.ConditionTrue
		}
	}
	switch {
	case node.Annotations[annotationKwok] != "":
		return fmt.Errorf("node %s is simulated (%s): it is no machine's node", node.Name, annotationKwok)
	case node.Labels[LabelOS] != "windows":
		return fmt.Errorf("node %s is labelled %s=%q, not windows", node.Name, LabelOS, node.Labels[LabelOS])
	case !ready:
		return fmt.Errorf("node %s is not Ready", node.Name)
	case node.Labels[LabelWindowsBuild] != id.BuildLabel() || node.Status.NodeInfo.KernelVersion != id.Build:
		return fmt.Errorf("node %s is of build %s (kernel %s), machine %s runs %s: the node is not this machine's", node.Name,
			node.Labels[LabelWindowsBuild], node.Status.NodeInfo.KernelVersion, id.Machine, id.Build)
	case !strings.EqualFold(node.Status.NodeInfo.SystemUUID, id.SystemUUID):
		return fmt.Errorf("node %s has systemUUID %q, machine %s's hardware configuration is %s: no kubelet on this machine runs the node (not joined, or another machine's node)",
			node.Name, node.Status.NodeInfo.SystemUUID, id.Machine, id.SystemUUID)
	}
	return nil
}
