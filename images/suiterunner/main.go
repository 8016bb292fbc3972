// Command suite-runner is the entrypoint of the suite image (images/suiteimage):
// it runs the suite binary inside a cluster, as a Sonobuoy plugin.
//
// The suite binary wants a kubeconfig; in a pod there is none, so the runner
// writes one that points at the pod's service account (its token file and CA
// file, by path: no credential is copied), and checks that the account may do
// what the suites do. It runs the suite binary with the plugin's arguments,
// its reports going to Sonobuoy's results directory, its output to the pod's
// log and to e2e.log there. Then it writes Sonobuoy's done file, which names
// that directory: Sonobuoy's worker sends all of it (JUnit, Ginkgo's reports,
// the summary, the limitation ledger, the network matrix, cluster.json,
// e2e.log) to the aggregator.
//
// Every run has a run ID (--run-id, unless the plugin gives one), which
// labels what the suites make; after the suite binary exits, whatever the
// run left in the cluster (an interrupted cleanup) is removed, as the CLI
// does after its runs.
//
// It exits 0 when the suite wrote its JUnit report and its record (Ginkgo's
// report, which the suite writes at its end: failed specs are results, and
// Sonobuoy reads them from the reports), and non-zero when the suite could
// not run or left no whole record, so that Sonobuoy reports the plugin as
// failed.
//
// The suite posts its progress, N of M specs, to the Sonobuoy worker's
// progress endpoint (--progress-report-url=http://localhost:8099/progress),
// which relays it to the aggregator: `sonobuoy status` shows it.
//
// Environment: SONOBUOY_RESULTS_DIR (set by Sonobuoy; default
// /tmp/sonobuoy/results); SONOBUOY_PROGRESS_PORT (default 8099, Sonobuoy's);
// WINCONFORM_SUITE_BINARY and WINCONFORM_KWOK_BINARY (the image sets them;
// default e2e.test and kwok beside the runner).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/winconform/winconform/internal/atomicfile"

	"github.com/winconform/winconform/internal/runid"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/winconform/winconform/internal/kubefile"
	"github.com/winconform/winconform/internal/suiterun"
)

// Where things are, unless the environment says otherwise.
const (
	DefaultResultsDir = "/tmp/sonobuoy/results"
	ResultsDirEnv     = "SONOBUOY_RESULTS_DIR"
	SuiteBinaryEnv    = "WINCONFORM_SUITE_BINARY"
	KwokBinaryEnv     = "WINCONFORM_KWOK_BINARY"
	// ProgressPortEnv is the port of the Sonobuoy worker's progress
	// endpoint (Sonobuoy's worker listens on localhost:$SONOBUOY_PROGRESS_PORT,
	// by default 8099, for POST /progress: pkg/worker in
	// github.com/vmware-tanzu/sonobuoy v0.57.3).
	ProgressPortEnv     = "SONOBUOY_PROGRESS_PORT"
	DefaultProgressPort = "8099"
	// DoneFile is the file in the results directory that Sonobuoy's worker
	// waits for; it holds the path of the results (here, the directory).
	DoneFile = "done"
	// JUnitFile is the suite's JUnit report, the file the plugin's
	// result-files names.
	JUnitFile = "junit_01.xml"
	// RecordFile is the run's record, Ginkgo's report with the run's
	// entries (reports.GinkgoFile), which the suite writes when it ends.
	RecordFile = "ginkgo/report.json"
	// LogFile holds the suite's output beside its reports.
	LogFile = "e2e.log"
)

// accessTimeout bounds the permission checks; sweepTimeout the removal of
// what a run left.
const (
	accessTimeout = 30 * time.Second
	sweepTimeout  = 3 * time.Minute
)

// sweeper removes what run runID left in the cluster (suiterun.Sweep).
type sweeper func(ctx context.Context, cs kubernetes.Interface, runID string) ([]suiterun.Left, error)

func sweep(ctx context.Context, cs kubernetes.Interface, runID string) ([]suiterun.Left, error) {
	return suiterun.Sweep(ctx, cs, runID, 2*time.Minute)
}

// config is what one run uses.
type config struct {
	resultsDir string
	suite      string
	kwok       string
	// progress is where the suite posts its progress (--progress-report-url).
	progress string
	args     []string // the plugin's arguments, for the suite binary
	sweep    sweeper
}

// loadConfig reads the environment (through getenv); exe is this program's path.
func loadConfig(getenv func(string) string, exe string, args []string) config {
	c := config{resultsDir: getenv(ResultsDirEnv), suite: getenv(SuiteBinaryEnv), kwok: getenv(KwokBinaryEnv), args: args, sweep: sweep}
	if c.resultsDir == "" {
		c.resultsDir = DefaultResultsDir
	}
	if c.suite == "" {
		c.suite = filepath.Join(filepath.Dir(exe), "e2e.test")
	}
	if c.kwok == "" {
		c.kwok = filepath.Join(filepath.Dir(exe), "kwok")
	}
	port := getenv(ProgressPortEnv)
	if port == "" {
		port = DefaultProgressPort
	}
	c.progress = "http://localhost:" + port + "/progress"
	return c
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	cfg := loadConfig(os.Getenv, exe, os.Args[1:])
	os.Exit(run(ctx, cfg, inClusterConfig, os.Stdout))
}

// inClusterConfig is the pod's service account, as client-go finds it.
func inClusterConfig() (*rest.Config, error) {
	c, err := rest.InClusterConfig()
	if err != nil {
		return nil, fmt.Errorf("no in-cluster configuration (%v): the runner works inside a pod; elsewhere pass --kubeconfig to it", err)
	}
	return c, nil
}

// run does one run and returns the exit status. The done file is written
// whatever happens, so that Sonobuoy receives e2e.log with the reason.
func run(ctx context.Context, cfg config, inCluster func() (*rest.Config, error), stdout io.Writer) (code int) {
	if err := os.MkdirAll(cfg.resultsDir, 0o755); err != nil {
		fmt.Fprintf(stdout, "suite-runner: results directory: %v\n", err)
		return 1
	}
	logFile, err := os.Create(filepath.Join(cfg.resultsDir, LogFile))
	if err != nil {
		fmt.Fprintf(stdout, "suite-runner: %v\n", err)
		return 1
	}
	out := io.MultiWriter(stdout, logFile)
	defer func() {
		logFile.Close()
		if err := writeDone(cfg.resultsDir); err != nil {
			fmt.Fprintf(stdout, "suite-runner: %v\n", err)
			code = 1
		}
	}()
	fail := func(err error) int {
		fmt.Fprintf(out, "suite-runner: %v\n", err)
		return 1
	}

	kubeconfig, given := flagValue(cfg.args, "kubeconfig")
	if !given {
		restCfg, err := inCluster()
		if err != nil {
			return fail(err)
		}
		kubeconfig = filepath.Join(os.TempDir(), "winconform-in-cluster.kubeconfig")
		if err := writeKubeconfig(kubeconfig, restCfg); err != nil {
			return fail(err)
		}
	}
	_, cs, err := kubefile.Clients("--kubeconfig", kubeconfig, accessTimeout)
	if err != nil {
		return fail(err)
	}
	actx, cancel := context.WithTimeout(ctx, accessTimeout)
	err = checkAccess(actx, cs)
	cancel()
	if err != nil {
		return fail(err)
	}

	// The run begins here unless the plugin's arguments name it.
	named, ok := flagValue(cfg.args, "run-id")
	runID, err := runid.Begin(named)
	if err != nil {
		return fail(fmt.Errorf("--run-id: %w", err))
	}
	args := suiteArgs(cfg, kubeconfig, given, runID, !ok)
	fmt.Fprintf(out, "suite-runner: %s %s\n", cfg.suite, strings.Join(args, " "))
	status, err := runSuite(ctx, cfg.suite, args, out)
	if cfg.sweep != nil {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), sweepTimeout)
		left, serr := cfg.sweep(sctx, cs, runID)
		cancel()
		switch {
		case serr != nil:
			fmt.Fprintf(out, "suite-runner: cleaning up after run %s: %v\n", runID, serr)
		case len(left) > 0:
			fmt.Fprintf(out, "suite-runner: run %s left %d object(s), now deleted: %v\n", runID, len(left), left)
		}
	}
	if err != nil {
		return fail(err)
	}
	if _, err := os.Stat(filepath.Join(cfg.resultsDir, JUnitFile)); err != nil {
		return fail(fmt.Errorf("the suite binary exited with status %d and wrote no %s: see the lines above", status, JUnitFile))
	}
	if data, err := os.ReadFile(filepath.Join(cfg.resultsDir, RecordFile)); err != nil || !json.Valid(data) {
		return fail(fmt.Errorf("the suite binary exited with status %d and left no whole record (%s): nothing it ran can be read; see the lines above", status, RecordFile))
	}
	fmt.Fprintf(out, "suite-runner: the suite exited with status %d; its reports are in %s\n", status, cfg.resultsDir)
	return 0
}

// suiteArgs is the suite binary's command line: output settings the plugin
// may change, the plugin's arguments, then what the runner decides (last,
// so that they win: Go flags keep the last value).
func suiteArgs(cfg config, kubeconfig string, kubeconfigGiven bool, runID string, addRunID bool) []string {
	args := []string{"--ginkgo.no-color", "--ginkgo.v"}
	// Progress, N of M specs, to Sonobuoy's worker: `sonobuoy status` shows it.
	if _, given := flagValue(cfg.args, "progress-report-url"); !given && cfg.progress != "" {
		args = append(args, "--progress-report-url="+cfg.progress)
	}
	args = append(args, cfg.args...)
	if addRunID {
		args = append(args, "--run-id="+runID)
	}
	if !kubeconfigGiven {
		args = append(args, "--kubeconfig="+kubeconfig)
	}
	args = append(args, "--report-dir="+cfg.resultsDir)
	if st, err := os.Stat(cfg.kwok); err == nil && st.Mode().IsRegular() {
		args = append(args, "--kwok-binary="+cfg.kwok)
	}
	return args
}

// flagValue finds --name=value or --name value (one dash or two) in args.
func flagValue(args []string, name string) (string, bool) {
	for i, a := range args {
		if a == "--" {
			break
		}
		trimmed := strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
		if trimmed == a {
			continue
		}
		if v, ok := strings.CutPrefix(trimmed, name+"="); ok {
			return v, true
		}
		if trimmed == name && i+1 < len(args) {
			return args[i+1], true
		}
	}
	return "", false
}

// writeKubeconfig writes a kubeconfig for c that names the service
// account's token and CA files by path, so that it holds no secret and a
// rotated token is picked up.
func writeKubeconfig(path string, c *rest.Config) error {
	if c.Host == "" {
		return errors.New("in-cluster configuration without an API server address")
	}
	if c.BearerTokenFile == "" {
		return errors.New("in-cluster configuration without a service account token file")
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["in-cluster"] = &clientcmdapi.Cluster{Server: c.Host, CertificateAuthority: c.TLSClientConfig.CAFile}
	kc.AuthInfos["service-account"] = &clientcmdapi.AuthInfo{TokenFile: c.BearerTokenFile}
	kc.Contexts["in-cluster"] = &clientcmdapi.Context{Cluster: "in-cluster", AuthInfo: "service-account"}
	kc.CurrentContext = "in-cluster"
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		return fmt.Errorf("writing the in-cluster kubeconfig: %w", err)
	}
	return os.Chmod(path, 0o600)
}

// required are the permissions the suites need beyond reading: every spec
// makes its own namespace, and the scheduling and limitations suites add
// simulated nodes (kwok) where the cluster has no Windows node.
var required = []authorizationv1.ResourceAttributes{
	{Verb: "create", Resource: "namespaces"},
	{Verb: "delete", Resource: "namespaces"},
	{Verb: "create", Resource: "nodes"},
	{Verb: "create", Resource: "pods", Subresource: "exec"},
}

// checkAccess asks the API server whether this account may do what the
// suites do, and names what it may not.
func checkAccess(ctx context.Context, cs kubernetes.Interface) error {
	var missing []string
	for _, ra := range required {
		ra := ra
		r, err := cs.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx,
			&authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &ra}},
			metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("asking the API server what this service account may do: %w", err)
		}
		if !r.Status.Allowed {
			what := ra.Resource
			if ra.Subresource != "" {
				what += "/" + ra.Subresource
			}
			missing = append(missing, ra.Verb+" "+what)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("this service account may not %s, which the suites do: run Sonobuoy with --aggregator-permissions=clusterAdmin (its default), whose account the plugin uses", strings.Join(missing, ", "))
	}
	return nil
}

// runSuite runs the suite binary; an interruption reaches it as SIGINT, so
// that Ginkgo cleans up and writes its reports before it exits.
func runSuite(ctx context.Context, bin string, args []string, out io.Writer) (int, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 50 * time.Second // within Sonobuoy's grace period for plugin pods
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), nil
	}
	if err != nil {
		return 0, fmt.Errorf("running the suite binary %s: %w", bin, err)
	}
	return 0, nil
}

// writeDone writes Sonobuoy's done file, naming dir as the results; it
// appears whole (renamed into place), as the worker may read it at once.
func writeDone(dir string) error {
	if err := atomicfile.Write(filepath.Join(dir, DoneFile), []byte(dir), 0o644); err != nil {
		return fmt.Errorf("writing Sonobuoy's done file: %w", err)
	}
	return nil
}
