package kubeletconfig_test

import (
	"strings"
	"testing"

	"github.com/winconform/winconform/infra/kubeletconfig"
	"github.com/winconform/winconform/internal/kubelines"
	"github.com/winconform/winconform/testing/upstream"
)

// The kubelet of every supported line takes the cluster's configuration
// with the harness's patch, judged by its own loader and validation, and
// serves node log queries then; on cgroup v2 hosts too.
func TestEveryLinesKubeletTakesThePatch(t *testing.T) {
	for _, l := range kubelines.Lines() {
		for _, v1 := range []bool{false, true} {
			config := upstream.MergeKubeletPatch([]byte(upstream.KindKubelet(l)), kubeletconfig.ClusterPatch(l, v1))
			kc, err := upstream.CheckClusterKubelet(config, l)
			if err != nil {
				t.Errorf("%s (cgroup v1 %v): the kubelet refuses the configuration: %v\n%s", l, v1, err, config)
				continue
			}
			if !kc.EnableSystemLogHandler || !kc.EnableSystemLogQuery {
				t.Errorf("%s: enableSystemLogHandler %v, enableSystemLogQuery %v: the node would not serve log queries", l, kc.EnableSystemLogHandler, kc.EnableSystemLogQuery)
			}
		}
	}
}

// The judge refuses what a kubelet refuses: the log query without its
// feature gate on a line where it is beta and off (1.35).
func TestTheJudgeRefusesTheQueryWithoutItsGate(t *testing.T) {
	var gated []kubelines.Line
	for _, l := range kubelines.Lines() {
		if l.NeedsNodeLogQueryGate {
			gated = append(gated, l)
		}
	}
	if len(gated) == 0 {
		t.Skip("no supported line needs the NodeLogQuery gate")
	}
	for _, l := range gated {
		config := upstream.MergeKubeletPatch([]byte(upstream.KindKubelet(l)), "featureGates: null\n")
		_, err := upstream.CheckClusterKubelet(config, l)
		if err == nil || !strings.Contains(err.Error(), "NodeLogQuery") {
			t.Errorf("%s: enableSystemLogQuery without the NodeLogQuery gate: %v, want the kubelet's refusal", l, err)
		}
	}
}
