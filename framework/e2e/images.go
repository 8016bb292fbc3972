package e2e

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/winconform/winconform/framework/facts"
	"github.com/winconform/winconform/images"
	"github.com/winconform/winconform/infra/windows"
	"github.com/winconform/winconform/internal/winrelease"
)

// CheckWindowsImages checks, before any spec runs, that every real Windows
// node of the cluster (Ready, not simulated) runs each image the suites put
// on it (images.WindowsNodeImages) with process isolation: the variant its
// containerd runs of the image's index (windows.CheckImage), against the
// node's kernel version, which carries its update revision. A variant of a
// later update than the node's fails with 0xc0370106 when its pod starts,
// which the specs would see only as pods that never start; here the run
// stops first, naming the node, the image and the fix. An image whose index
// cannot be read, or a node that runs no containerd the harness knows, is
// logged as unchecked.
func CheckWindowsImages(ctx context.Context, fs *facts.Facts, reg windows.ImageRegistry, logf func(string, ...any)) error {
	var errs []error
	for _, n := range fs.Nodes {
		if n.OS != "windows" || n.Simulated || !n.Ready {
			continue
		}
		host, err := winrelease.Parse(n.KernelVersion)
		if err != nil || !host.HasRevision {
			logf("node %s: its kernel version %q has no update revision: its images are not checked", n.Name, n.KernelVersion)
			continue
		}
		containerd, ok := strings.CutPrefix(n.ContainerRuntime, "containerd://")
		if !ok {
			logf("node %s runs %q, not containerd: which variant of its images it runs is not checked", n.Name, n.ContainerRuntime)
			continue
		}
		imgs, err := images.WindowsNodeImages(n.KernelVersion)
		if err != nil {
			logf("node %s: %v: its images are not checked", n.Name, err)
			continue
		}
		whats := make([]string, 0, len(imgs))
		for what := range imgs {
			whats = append(whats, what)
		}
		sort.Strings(whats)
		for _, what := range whats {
			c, err := windows.CheckImage(ctx, reg, containerd, host, what, imgs[what])
			switch {
			case err != nil:
				errs = append(errs, fmt.Errorf("node %s: %w", n.Name, err))
			case c.Unchecked != "":
				logf("node %s: %s", n.Name, c.Unchecked)
			default:
				logf("node %s runs %s, %s, of os.version %s", n.Name, what, imgs[what], c.Variant)
			}
		}
	}
	return errors.Join(errs...)
}
