package windows

import (
	"context"
	"fmt"
	"time"
)

// The steps, by the names their scripts and reports use.
const (
	StepPing              = "ping"
	StepReboot            = "reboot"
	StepPreflight         = "preflight"
	StepContainersFeature = "containers-feature"
	StepContainerd        = "containerd"
	StepKubelet           = "kubelet"
	StepCrictl            = "crictl"
	StepCompartmentNS     = "compartment-namespace"
	StepMetadataRoute     = "metadata-route"
	StepImages            = "images"
	StepKubeProxy         = "kube-proxy"
	StepCNI               = "cni"
	StepFirewall          = "firewall"
	StepUnderlayRoute     = "underlay-route"
	StepDefender          = "defender"
	StepProbe             = "probe"
	StepKubeadmJoin       = "kubeadm-join"
	// StepNode runs in Go, through the API: the node Ready, its build label
	// checked, the inventory's labels and taints applied.
	StepNode = "node"

	StepDrain           = "drain"
	StepDeleteNode      = "delete-node"
	StepKubeadmReset    = "kubeadm-reset"
	StepHNSCleanup      = "hns-cleanup"
	StepUnderlayUnroute = "underlay-unroute"
	StepCollectLogs     = "collect-logs"
)

// The node services the steps set up, in the documented start order.
const (
	ComponentRuntime   = "runtime"
	ComponentKubelet   = "kubelet"
	ComponentKubeProxy = "kube-proxy"
	ComponentCNI       = "cni"
)

// step is one entry of the step table: a piece of work on a machine (its
// script, scripts/<name>.ps1) or on its node (in Go, through the API).
// Join and Reset each run their table from the top, every step once, and
// stop at the first that fails, as kind's create runs its list of actions.
type step struct {
	name string
	// script is true when the step is its script, run over WinRM; false
	// for a step done through the cluster's API.
	script bool
	// timeout is the step's default bound (DefaultTimeouts): one run of
	// its script; for node, the wait for the node to turn Ready; for drain,
	// the wait for the node's pods to go. Zero: the step is one API call,
	// bounded by the caller's context.
	timeout time.Duration
	// mayReboot is true when the step may ask for a reboot (restartNeeded
	// in its status): the machine is rebooted, and the step runs again and
	// must then change nothing. A step without it that asks for a reboot
	// fails (ErrBadStatus): its script and this table disagree.
	mayReboot bool
	// component is the node service the step sets up, for the steps of
	// the documented order.
	component string
	// needs are the earlier steps of the same table that this one relies
	// on, and what for; the table is checked to run them first.
	needs []need
	// params are the parameters of a step that is its script alone, or a
	// reason to skip it: run is then that script, run with them (scripted),
	// and RenderJoin renders them.
	params func(j *joinRun) ([]Param, string, error)
	// run does the step, into sr, and says whether it changed anything.
	// Nil for the steps the runner uses between the others (ping, reboot,
	// collect-logs), and for those params describe.
	run func(j *joinRun, ctx context.Context, s step, sr *StepReport) (changed bool, err error)
}

// do is the step's run: its own, or its script with its params.
func (s step) do(j *joinRun, ctx context.Context, sr *StepReport) (bool, error) {
	if s.run == nil {
		return scripted(s.params)(j, ctx, s, sr)
	}
	return s.run(j, ctx, s, sr)
}

// need is what a step takes from an earlier step.
type need struct{ step, what string }

// joinTable is Join: the machine checked, the Containers feature (with its
// reboot), then the node's services in the documented order (the runtime,
// the kubelet, kube-proxy, the CNI), then the rest, the join, and the node
// Ready.
var joinTable = []step{
	{name: StepPreflight, script: true, timeout: 2 * time.Minute, run: (*joinRun).preflight},
	{name: StepContainersFeature, script: true, timeout: 20 * time.Minute, mayReboot: true, params: noParams,
		needs: []need{{StepPreflight, "the machine's boot time, to see it restart"}}},
	{name: StepContainerd, script: true, timeout: 10 * time.Minute, component: ComponentRuntime, params: (*joinRun).containerdParams,
		needs: []need{{StepContainersFeature, "the Containers feature installed"}}},
	{name: StepCompartmentNS, script: true, timeout: time.Minute, params: noParams,
		needs: []need{{StepContainersFeature, "HNS, whose setting it is"}}},
	{name: StepKubelet, script: true, timeout: 10 * time.Minute, component: ComponentKubelet, params: (*joinRun).kubeletParams,
		needs: []need{{StepContainerd, "the containerd service, which the kubelet service depends on"}}},
	{name: StepCrictl, script: true, timeout: 5 * time.Minute, params: (*joinRun).crictlParams,
		needs: []need{{StepContainerd, "containerd's pipe, which crictl.yaml names"}, {StepKubelet, `C:\k, on the machine's PATH`}}},
	{name: StepImages, script: true, timeout: 20 * time.Minute, run: (*joinRun).nodeImages,
		needs: []need{{StepContainerd, "containerd running, and its ctr.exe"}}},
	{name: StepKubeProxy, script: true, timeout: 5 * time.Minute, component: ComponentKubeProxy, params: (*joinRun).kubeProxyParams,
		needs: []need{{StepKubelet, "kubelet.exe in place: the kubelet comes before kube-proxy"}}},
	{name: StepCNI, script: true, timeout: 5 * time.Minute, component: ComponentCNI, params: (*joinRun).cniParams,
		needs: []need{{StepKubeProxy, "kube-proxy.exe in place: kube-proxy comes before the CNI"}}},
	{name: StepFirewall, script: true, timeout: time.Minute, params: (*joinRun).firewallParams},
	{name: StepUnderlayRoute, script: true, timeout: time.Minute, params: (*joinRun).underlayRouteParams},
	{name: StepMetadataRoute, script: true, timeout: time.Minute, params: (*joinRun).metadataRouteParams},
	{name: StepDefender, script: true, timeout: 2 * time.Minute, params: (*joinRun).defenderParams},
	{name: StepProbe, script: true, timeout: 5 * time.Minute, params: (*joinRun).probeParams},
	{name: StepKubeadmJoin, script: true, timeout: 6 * time.Minute, run: (*joinRun).kubeadmJoin,
		needs: []need{{StepContainerd, "the runtime's CRI socket"}, {StepKubelet, "kubeadm.exe and the kubelet service"}}},
	{name: StepNode, timeout: 10 * time.Minute, run: (*joinRun).node,
		needs: []need{{StepPreflight, "the machine's build, which the node's label must name"}, {StepKubeadmJoin, "the node registered"}}},
	{name: StepPod, timeout: 5 * time.Minute, run: (*joinRun).podCheck,
		needs: []need{{StepContainerd, "the sandbox image it configured"}, {StepNode, "the node Ready"}}},
}

// resetTable is Reset: the node drained and deleted through the API, then
// the machine's part of the join undone.
var resetTable = []step{
	{name: StepDrain, timeout: 2 * time.Minute, run: (*joinRun).drain},
	{name: StepDeleteNode, run: (*joinRun).deleteNode,
		needs: []need{{StepDrain, "the node's pods evicted"}}},
	{name: StepKubeadmReset, script: true, timeout: 5 * time.Minute, params: resetParams},
	{name: StepHNSCleanup, script: true, timeout: 2 * time.Minute, params: hnsCleanupParams,
		needs: []need{{StepKubeadmReset, "the kubelet stopped, so that flannel makes no network again"}}},
	{name: StepUnderlayUnroute, script: true, timeout: time.Minute, params: (*joinRun).underlayUnrouteParams},
}

// runnerSteps are the steps the runner uses between the others: ping while
// a machine reboots, reboot when a step asks for it, and collect-logs.
var runnerSteps = []step{
	{name: StepPing, script: true, timeout: 30 * time.Second},
	{name: StepReboot, script: true, timeout: 2 * time.Minute},
	{name: StepCollectLogs, script: true, timeout: 2 * time.Minute},
}

// stepTable is every step, Join's, Reset's and the runner's.
func stepTable() []step {
	var all []step
	for _, t := range [][]step{joinTable, resetTable, runnerSteps} {
		all = append(all, t...)
	}
	return all
}

// stepNamed returns the table's entry for name.
func stepNamed(name string) (step, bool) {
	for _, s := range stepTable() {
		if s.name == name {
			return s, true
		}
	}
	return step{}, false
}

// names are the names of a table's steps, in order.
func names(table []step) []string {
	out := make([]string, len(table))
	for i, s := range table {
		out[i] = s.name
	}
	return out
}

// JoinSteps are Join's steps in the order it runs them.
func JoinSteps() []string { return names(joinTable) }

// ResetSteps are Reset's steps in the order it runs them.
func ResetSteps() []string { return names(resetTable) }

// runTable runs the steps of table in order and stops at the first that
// fails. Each is recorded in the report, with its component, when it
// started, how long it took, whether it changed anything, and its error.
func (j *joinRun) runTable(ctx context.Context, table []step) error {
	done := map[string]bool{}
	for _, s := range table {
		for _, n := range s.needs {
			if !done[n.step] {
				return fmt.Errorf("windows: step %s needs step %s (%s), which has not run", s.name, n.step, n.what)
			}
		}
		sr := StepReport{Name: s.name, Component: s.component, Started: time.Now()}
		if !s.script {
			sr.Attempts = 1
		}
		j.report.Order = append(j.report.Order, s.name)
		changed, err := s.do(j, ctx, &sr)
		j.finish(&sr, changed, err)
		if err != nil {
			return err
		}
		done[s.name] = true
	}
	return nil
}

// scripted is the run of a step that is its script alone: params gives
// the script's parameters, or a reason to skip the step.
func scripted(params func(j *joinRun) ([]Param, string, error)) func(*joinRun, context.Context, step, *StepReport) (bool, error) {
	return func(j *joinRun, ctx context.Context, s step, sr *StepReport) (bool, error) {
		p, skip, err := params(j)
		if err != nil {
			return false, err
		}
		if skip != "" {
			sr.Skipped, sr.SkipReason = true, skip
			return false, nil
		}
		st, err := j.runScript(ctx, s, sr, fixed(p))
		return st.Changed, err
	}
}

func noParams(*joinRun) ([]Param, string, error) { return nil, "", nil }

// runScript runs a step's script: with the reboot it asks for when the
// table says it may ask for one (runSettled), else once (runStep), failing
// when it asks for a reboot all the same.
func (r *runner) runScript(ctx context.Context, s step, sr *StepReport, params stepParams) (status, error) {
	if s.mayReboot {
		return r.runSettled(ctx, sr, s.name, params)
	}
	st, err := r.runStep(ctx, sr, s.name, params)
	if err == nil && st.RestartNeeded {
		return st, &StepError{Machine: r.machine, Step: s.name, Kind: ErrBadStatus,
			Detail: "its status asks for a reboot, which this step never needs: its script and the harness's step table disagree"}
	}
	return st, err
}
