package windows

import (
	"context"
	"strconv"

	"github.com/winconform/winconform/images"
	"github.com/winconform/winconform/infra/windows/nodeconfig"
)

// nodeImageRefs are the images a node needs from its first pods on: the
// sandbox image of every pod, the HostProcess image of the kube-proxy and
// flannel DaemonSets, and the probe of the network matrix; each as the
// image overrides make it (a mirror's).
func (j *joinRun) nodeImageRefs() []string {
	return []string{j.sandboxImage(), images.Ref(HostProcessImage), images.Ref("probe")}
}

// nodeImages puts the node's images in containerd (its k8s.io namespace,
// the CRI's) before the node needs them, for labs whose machines reach no
// public registry: the inventory's binaries.images (an image archive) is
// imported, and, with prepullImages, what is still missing is pulled from
// where the image overrides point. Skipped when the inventory asks for
// neither: the node then pulls each image when a pod needs it.
// nodeImageParams are the images step's parameters for one image.
func (j *joinRun) nodeImageParams(ref string) []Param {
	return []Param{
		{"Image", ref}, {"Archive", j.m.Binaries["images"]}, {"Pull", strconv.FormatBool(j.m.PrepullImages)}, {"Ctr", nodeconfig.ContainerdDir + `\ctr.exe`},
	}
}

func (j *joinRun) nodeImages(ctx context.Context, s step, sr *StepReport) (bool, error) {
	archive := j.m.Binaries["images"]
	if archive == "" && !j.m.PrepullImages {
		sr.Skipped, sr.SkipReason = true, "the inventory asks for no image archive (binaries.images) and no pulls (prepullImages)"
		return false, nil
	}
	changed := false
	how := map[string]any{}
	for _, ref := range j.nodeImageRefs() {
		st, err := j.runScript(ctx, s, sr, fixed(j.nodeImageParams(ref)))
		if err != nil {
			return changed, err
		}
		changed = changed || st.Changed
		how[ref] = st.str("how")
	}
	sr.Status = map[string]any{"images": how}
	return changed, nil
}
