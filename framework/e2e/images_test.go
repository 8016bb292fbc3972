package e2e

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/winconform/winconform/framework/facts"
	"github.com/winconform/winconform/images"
	"github.com/winconform/winconform/infra/windows"
)

// registry serves images' Windows variants; an image it lacks is an error,
// as a registry that cannot be reached.
type registry map[string][]string

func (r registry) WindowsVariants(_ context.Context, ref string) ([]string, error) {
	v, ok := r[ref]
	if !ok {
		return nil, errors.New("dial tcp: lookup mcr.microsoft.com: no such host")
	}
	return v, nil
}

func windowsNode(name, kernel, runtime string) facts.Node {
	return facts.Node{Name: name, OS: "windows", Ready: true, KernelVersion: kernel, ContainerRuntime: runtime}
}

// A Windows node behind on its cumulative updates would get Server Core by
// its floating tag (servercore:ltsc2022) in a variant of a later update,
// which fails to start (0xc0370106): the run stops before any spec, naming
// the node, the image and the fix. Before, no image the suites run was
// checked; only the join's sandbox image and probe.
func TestCheckWindowsImagesRefusesALaterUpdate(t *testing.T) {
	servercore := images.Ref("servercore-ltsc2022")
	probe := images.Ref("probe")
	reg := registry{
		probe:      {"10.0.17763.6054", "10.0.20348.2340", "10.0.26100.1742"},
		servercore: {"10.0.20348.2582"},
	}
	var logged []string
	logf := func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) }
	fs := &facts.Facts{Nodes: []facts.Node{
		windowsNode("win-behind", "10.0.20348.2340", "containerd://2.3.7"),
		windowsNode("win-current", "10.0.20348.2582", "containerd://2.3.7"),
		{Name: "win-sim", OS: "windows", Ready: true, Simulated: true, KernelVersion: "10.0.20348.1"},
		{Name: "linux", OS: "linux", Ready: true},
	}}
	err := CheckWindowsImages(context.Background(), fs, reg, logf)
	if err == nil {
		t.Fatal("a node behind on its updates passed")
	}
	msg := err.Error()
	for _, want := range []string{"node win-behind", "Server Core", servercore, "0xc0370106", "up to at least 2582"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the refusal lacks %q:\n%s", want, msg)
		}
	}
	for _, not := range []string{"win-current", "win-sim", "the probe image"} {
		if strings.Contains(msg, not) {
			t.Errorf("the refusal names %s:\n%s", not, msg)
		}
	}
	if !errors.Is(err, windows.ErrImageNotRunnable) {
		t.Errorf("err is no ErrImageNotRunnable: %v", err)
	}
	// A registry out of reach leaves the images unchecked, said so.
	logged = nil
	if err := CheckWindowsImages(context.Background(), fs, registry{}, logf); err != nil {
		t.Errorf("unreadable indexes: %v", err)
	}
	if !strings.Contains(strings.Join(logged, "\n"), "cannot read the index") {
		t.Errorf("unreadable indexes were not said: %v", logged)
	}
	// A node without its update revision, or on another runtime: unchecked.
	logged = nil
	fs.Nodes = []facts.Node{windowsNode("a", "10.0.20348", "containerd://2.3.7"), windowsNode("b", "10.0.20348.2340", "docker://28.2.2")}
	if err := CheckWindowsImages(context.Background(), fs, reg, logf); err != nil || len(logged) != 2 {
		t.Errorf("nodes the check cannot judge: %v, logged %v", err, logged)
	}
}
