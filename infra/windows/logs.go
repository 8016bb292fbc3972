package windows

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/winconform/winconform/infra/windows/remote"
	"github.com/winconform/winconform/internal/text"
)

// LogItems are what CollectLogs gathers from a machine, with the file each
// goes to.
var LogItems = []struct{ Item, File string }{
	{"kubelet", "kubelet.log"},
	{"containerd", "containerd.log"},
	{"kube-proxy", "kube-proxy.log"},
	{"flannel", "flannel.log"},
	{"hns-networks", "hns-networks.json"},
	{"hns-endpoints", "hns-endpoints.json"},
	{"containerd-config", "containerd-config.toml"},
	{"service-events", "service-events.log"},
	{"kubelet-service", "kubelet-service.txt"},
	{"routes", "routes.txt"},
	{"ipconfig", "ipconfig.txt"},
}

// logLines is how many of the last lines of each log file CollectLogs keeps.
const logLines = 5000

// CollectLogs gathers a machine's kubelet, containerd, kube-proxy and
// flannel logs, containerd's configuration, the System log's service-control
// errors, the kubelet's service command line, its routes and ipconfig /all,
// and its HNS networks and endpoints (as JSON) into
// dir/<machine>/. An item that cannot be had is noted in its file and in the
// error, and the others are still gathered. What it writes comes through
// the remote exec, which redacts the machine's password.
func CollectLogs(ctx context.Context, exec remote.Exec, dir string) error {
	out := filepath.Join(dir, text.FileName(exec.Name()))
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("windows: logs of %s: %w", exec.Name(), err)
	}
	r := &runner{machine: exec.Name(), exec: exec, t: Timeouts{}.withDefaults()}
	var errs []error
	for _, it := range LogItems {
		var sr StepReport
		_, err := r.runStep(ctx, &sr, StepCollectLogs, fixed([]Param{{"Item", it.Item}, {"Lines", fmt.Sprint(logLines)}}))
		content := sr.Output
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", it.Item, err))
			content = fmt.Sprintf("# winconform could not collect %s: %v\n%s", it.Item, err, content)
		}
		if !strings.HasSuffix(content, "\n") {
			content += "\n"
		}
		if werr := os.WriteFile(filepath.Join(out, it.File), []byte(content), 0o644); werr != nil {
			errs = append(errs, werr)
		}
		if ctx.Err() != nil {
			break
		}
	}
	return errors.Join(errs...)
}
