package e2e

import (
	"errors"
	"flag"
	"fmt"
	"sync"
	"time"

	"github.com/winconform/winconform/framework/record"
	"github.com/winconform/winconform/internal/runid"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/winconform/winconform/config"
	"github.com/winconform/winconform/images"
	"github.com/winconform/winconform/infra/windows"
	"github.com/winconform/winconform/infra/windows/remote"
	"github.com/winconform/winconform/internal/runmark"
)

// Flags are the suite binary's own flags, beside the e2e framework's.
type Flags struct {
	// ProbeBinary is the local (Linux) probe: the client and the server
	// outside the cluster in the network matrix.
	ProbeBinary string
	// ExternalURL is a server outside the cluster to probe instead of a local one.
	ExternalURL string
	// Inventory lists the Windows machines, whose hosts the matrix probes from.
	Inventory string
	// StrictDrift fails a spec when a documented limitation no longer holds.
	StrictDrift bool
	// AllowFlaky lets a matrix cell whose two probes disagreed pass its claim.
	AllowFlaky bool
	// KwokBinary is kwok, which the scheduling suite runs to simulate
	// Windows nodes on a cluster that has none.
	KwokBinary string
	// ExpectVersion is the Kubernetes version the cluster was asked for.
	ExpectVersion string
	// ExpectSANs are names and addresses the API server's certificate must
	// have (so that the Windows machines can reach it by them).
	ExpectSANs string
	// WindowsArtifacts is where `winconform join` wrote its reports.
	WindowsArtifacts string
	// Disruptive allows specs that reset and rejoin Windows machines.
	Disruptive bool
	// ImageOverrides points the harness's images at a mirror (see images.LoadOverrides);
	// WINCONFORM_IMAGE_OVERRIDES when empty.
	ImageOverrides string
	// RunID names this run's objects in the cluster; the CLI passes one ID
	// to every parallel process, and removes what is left of the run by it.
	RunID string
	// RunStarted is when the run started (the CLI's; else this process's
	// start), on every object the run makes.
	RunStarted time.Time
	// RerunOf is the report directory whose failed specs this run reruns.
	RerunOf string
	// JUnitProperties are the run's JUnit properties (--junit-property).
	JUnitProperties [][2]string
	// Suite is the one area to run (--suite), Claim the claims whose
	// specs to run (--claim).
	Suite, Claim string
}

// Options holds the flags' values once parsed.
var Options Flags

// RegisterSuiteFlags adds to fs every flag the suite binary's TestMain
// registers: the e2e framework's, the harness's (RegisterFlags), --suite
// and --claim. With the flags its packages register on flag.CommandLine
// when they load (Ginkgo's, klog's), they are the suite binary's command
// line; the CLI builds the same set to check the arguments it passes on
// after -- (docs/running.md).
func RegisterSuiteFlags(fs *flag.FlagSet) {
	framework.RegisterCommonFlags(fs)
	framework.RegisterClusterFlags(fs)
	RegisterFlags(fs)
	fs.StringVar(&Options.Suite, "suite", "", "run only this area's specs (a package under suites/, e.g. networking)")
	fs.StringVar(&Options.Claim, "claim", "", "run only the specs of these claims (comma-separated IDs, e.g. NET-03,NET-04)")
}

// RegisterFlags adds the harness's flags to fs.
func RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&Options.ProbeBinary, "probe-binary", "", "local Linux probe binary, for the client and server outside the cluster (make build puts it in _output/bin/probe-linux-amd64)")
	fs.StringVar(&Options.ExternalURL, "external-url", "", "an HTTP server outside the cluster that pods should reach (default: one the harness runs on this machine)")
	fs.StringVar(&Options.Inventory, "inventory", "", "inventory of the Windows machines (YAML), to probe from the Windows nodes' hosts")
	fs.StringVar(&Options.ImageOverrides, "image-overrides", "", "YAML file pointing the harness's images at a mirror, like KUBE_TEST_REPO_LIST (default: $WINCONFORM_IMAGE_OVERRIDES)")
	fs.StringVar(&Options.KwokBinary, "kwok-binary", "", "kwok binary, to simulate Windows nodes for scheduling specs on clusters without them (make build puts it in _output/bin/kwok)")
	fs.StringVar(&Options.ExpectVersion, "expect-kubernetes-version", "", "the Kubernetes version the cluster was made at (INF-01 checks the API server's)")
	fs.StringVar(&Options.ExpectSANs, "expect-cert-sans", "", "comma-separated names and addresses the API server's certificate must have (INF-01)")
	fs.StringVar(&Options.WindowsArtifacts, "windows-artifacts", "_output/windows", "where `winconform join` wrote its reports (INF-03)")
	fs.BoolVar(&Options.Disruptive, "disruptive", false, "allow specs that reset and rejoin the inventory's Windows machines (INF-05)")
	fs.StringVar(&Options.RunID, "run-id", "", "identifies this run's objects in the cluster (labels e2e-run and "+RunLabel+"); one ID for every parallel process (default: a random one per process)")
	Options.RunStarted = time.Now().UTC().Truncate(time.Second)
	fs.Func("run-started", "when the run started (RFC 3339), annotated on every object it makes ("+runmark.StartedAnnotation+"); one time for every parallel process (default: this process's start)", func(v string) error {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return fmt.Errorf("want a time such as 2026-11-25T18:00:00Z: %v", err)
		}
		Options.RunStarted = t
		return nil
	})
	fs.Func("junit-property", "a name=value property of the run's JUnit test suite (repeatable), recorded with the run", func(s string) error {
		p, err := record.ParseProperty(s)
		Options.JUnitProperties = append(Options.JUnitProperties, p)
		return err
	})
	fs.StringVar(&Options.RerunOf, "rerun-of", "", "the report directory whose failed and interrupted specs this run reruns (said in the summary)")
	fs.BoolVar(&Options.StrictDrift, "strict-drift", false, "fail when a documented limitation no longer holds (drift), instead of only reporting it")
	fs.BoolVar(&Options.AllowFlaky, "allow-flaky", false, "let a network matrix cell that was blocked on one probe and reachable on the other pass its claim (it is still reported as flaky)")
}

// RunLabel labels the objects a run creates with its run ID (namespaces
// also carry the e2e framework's e2e-run label with the same ID).
const RunLabel = runmark.RunLabel

// ApplyRunID makes --run-id the e2e framework's run ID, so that the
// namespaces of every parallel process carry it (label e2e-run), and has
// the framework make its namespaces marked as the run's (Owned). A suite
// binary started without --run-id (by hand, or by ginkgo) is a run that
// begins here (runid.Begin), in place of the framework's UUID; a --run-id
// that runid.Check refuses is refused here, before any cluster work.
func ApplyRunID() error {
	id, err := runid.Begin(Options.RunID)
	if err != nil {
		return fmt.Errorf("--run-id: %w", err)
	}
	Options.RunID = id
	framework.RunID = types.UID(Options.RunID)
	framework.TestContext.CreateTestingNS = createNamespace
	return nil
}

// Run is this run: its ID and start.
func Run() runmark.Run {
	return runmark.Run{ID: string(framework.RunID), Started: Options.RunStarted}
}

// RunLabels are the labels that mark an object as this run's.
func RunLabels() map[string]string { return Run().Labels() }

// RunAnnotations are the annotations every object of this run carries (its start).
func RunAnnotations() map[string]string { return Run().Annotations() }

// Owned labels and annotates o as this run's, so that what a run leaves
// behind (an interrupted cleanup, a killed run) can be found and removed
// by the CLI, a later run, or winconform sweep.
func Owned(o metav1.Object) { Run().Mark(o) }

// LoadImageOverrides applies --image-overrides, or $WINCONFORM_IMAGE_OVERRIDES.
func LoadImageOverrides() error {
	if Options.ImageOverrides != "" {
		return images.LoadOverrides(Options.ImageOverrides)
	}
	_, err := images.FromEnv()
	return err
}

// Inventory is --inventory, read once per process: every spec of the
// process sees the same machines, and their secrets are read once. It is
// an error to call it without --inventory.
func Inventory() (*config.Inventory, error) {
	inventory.once.Do(func() {
		if Options.Inventory == "" {
			inventory.err = errors.New("no --inventory")
			return
		}
		inventory.inv, inventory.err = config.Load[config.Inventory](Options.Inventory, nil)
	})
	return inventory.inv, inventory.err
}

var inventory struct {
	once sync.Once
	inv  *config.Inventory
	err  error
}

// Machines connects to the inventory's machines, by node name; none without an inventory.
func Machines() (map[string]remote.Exec, error) {
	if Options.Inventory == "" {
		return nil, nil
	}
	inv, err := Inventory()
	if err != nil {
		return nil, err
	}
	conns, err := windows.Connect(inv)
	if err != nil {
		return nil, err
	}
	out := map[string]remote.Exec{}
	for name, c := range conns {
		out[name] = c
	}
	return out, nil
}
