package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/winconform/winconform/internal/runid"
	"github.com/winconform/winconform/internal/suiterun"
)

// The test binary doubles as the suite binary: with fakeSuiteEnv set it
// records its arguments, writes a JUnit report when asked, prints a line and
// exits with the status asked for.
const (
	fakeSuiteEnv  = "SUITE_RUNNER_FAKE_SUITE" // file to record the arguments in
	fakeJUnitEnv  = "SUITE_RUNNER_FAKE_JUNIT" // "1": write junit_01.xml into --report-dir
	fakeStatusEnv = "SUITE_RUNNER_FAKE_STATUS"
	// "1": write the JUnit but no record (a suite cut short in its reports)
	fakeNoRecordEnv = "SUITE_RUNNER_FAKE_NO_RECORD"
)

func TestMain(m *testing.M) {
	if rec := os.Getenv(fakeSuiteEnv); rec != "" {
		os.Exit(fakeSuite(rec))
	}
	os.Exit(m.Run())
}

func fakeSuite(record string) int {
	args := os.Args[1:]
	data, _ := json.Marshal(args)
	if err := os.WriteFile(record, data, 0o644); err != nil {
		return 99
	}
	if os.Getenv(fakeJUnitEnv) == "1" {
		dir, _ := flagValue(args, "report-dir")
		os.WriteFile(filepath.Join(dir, JUnitFile), []byte("<testsuites/>"), 0o644)
		if os.Getenv(fakeNoRecordEnv) != "1" {
			os.MkdirAll(filepath.Join(dir, "ginkgo"), 0o755)
			os.WriteFile(filepath.Join(dir, RecordFile), []byte(`[{"SuiteDescription": "winconform"}]`), 0o644)
		}
		os.WriteFile(filepath.Join(dir, "summary.md"), []byte("# summary"), 0o644)
	}
	fmt.Println("fake suite ran")
	status, _ := strconv.Atoi(os.Getenv(fakeStatusEnv))
	return status
}

func TestLoadConfig(t *testing.T) {
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	c := loadConfig(getenv, "/usr/local/bin/suite-runner", []string{"--suite=limitations"})
	if c.sweep == nil {
		t.Error("no sweep after the suite")
	}
	c.sweep = nil
	want := config{resultsDir: "/tmp/sonobuoy/results", suite: "/usr/local/bin/e2e.test", kwok: "/usr/local/bin/kwok", args: []string{"--suite=limitations"},
		progress: "http://localhost:8099/progress"}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("defaults: %+v, want %+v", c, want)
	}
	env[ResultsDirEnv], env[SuiteBinaryEnv], env[KwokBinaryEnv], env[ProgressPortEnv] = "/r", "/s", "/k", "9000"
	c = loadConfig(getenv, "/x/suite-runner", nil)
	if c.resultsDir != "/r" || c.suite != "/s" || c.kwok != "/k" || c.progress != "http://localhost:9000/progress" {
		t.Errorf("from the environment: %+v", c)
	}
}

func TestFlagValue(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		value string
		found bool
	}{
		{[]string{"--kubeconfig=/a"}, "/a", true},
		{[]string{"-kubeconfig=/a"}, "/a", true},
		{[]string{"--suite=x", "--kubeconfig", "/b"}, "/b", true},
		{[]string{"--kubeconfig-extra=/c"}, "", false},
		{[]string{"kubeconfig=/d"}, "", false},
		{[]string{"--", "--kubeconfig=/e"}, "", false},
		{[]string{"--kubeconfig"}, "", false},
	} {
		v, ok := flagValue(tc.args, "kubeconfig")
		if v != tc.value || ok != tc.found {
			t.Errorf("flagValue(%q) = %q, %v; want %q, %v", tc.args, v, ok, tc.value, tc.found)
		}
	}
}

func TestWriteKubeconfigNamesTheServiceAccountFiles(t *testing.T) {
	dir := t.TempDir()
	token := filepath.Join(dir, "token")
	if err := os.WriteFile(token, []byte("secret-token-value"), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "kubeconfig")
	ca := filepath.Join(dir, "ca.crt")
	if err := os.WriteFile(ca, []byte("not parsed here"), 0o644); err != nil {
		t.Fatal(err)
	}
	in := &rest.Config{Host: "https://10.96.0.1:443", BearerTokenFile: token, TLSClientConfig: rest.TLSClientConfig{CAFile: ca}}
	if err := writeKubeconfig(path, in); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "secret-token-value") {
		t.Errorf("the kubeconfig holds the token itself:\n%s", data)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", st.Mode().Perm())
	}
	kc, err := clientcmd.LoadFromFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := kc.Contexts[kc.CurrentContext]
	if ctx == nil {
		t.Fatalf("no current context in\n%s", data)
	}
	cl, ai := kc.Clusters[ctx.Cluster], kc.AuthInfos[ctx.AuthInfo]
	if cl.Server != in.Host || cl.CertificateAuthority != in.TLSClientConfig.CAFile || ai.TokenFile != token {
		t.Errorf("server %q CA %q token file %q; want %q %q %q", cl.Server, cl.CertificateAuthority, ai.TokenFile, in.Host, in.TLSClientConfig.CAFile, token)
	}
	// client-go reads the token from the file.
	rc, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	if rc.Host != in.Host || rc.BearerTokenFile != token {
		t.Errorf("client config: host %q token file %q", rc.Host, rc.BearerTokenFile)
	}

	if err := writeKubeconfig(filepath.Join(dir, "k2"), &rest.Config{Host: "https://x"}); err == nil || !strings.Contains(err.Error(), "token file") {
		t.Errorf("a configuration without a token file: %v, want an error naming it", err)
	}
}

func TestCheckAccessNamesWhatIsMissing(t *testing.T) {
	deny := func(resource, verb string) *fake.Clientset {
		cs := fake.NewClientset()
		cs.PrependReactor("create", "selfsubjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
			r := a.(k8stesting.CreateAction).GetObject().(*authorizationv1.SelfSubjectAccessReview)
			ra := r.Spec.ResourceAttributes
			r.Status.Allowed = !(ra.Resource == resource && ra.Verb == verb)
			return true, r, nil
		})
		return cs
	}
	if err := checkAccess(context.Background(), deny("", "")); err != nil {
		t.Errorf("all allowed: %v", err)
	}
	err := checkAccess(context.Background(), deny("nodes", "create"))
	if err == nil || !strings.Contains(err.Error(), "may not create nodes") || !strings.Contains(err.Error(), "--aggregator-permissions=clusterAdmin") {
		t.Errorf("nodes denied: %v, want an error naming create nodes and the fix", err)
	}
}

// apiServer answers SelfSubjectAccessReviews, allowing all unless deny.
func apiServer(t *testing.T, deny bool) *rest.Config {
	t.Helper()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews" {
			http.Error(w, "unexpected "+r.URL.Path, http.StatusNotFound)
			return
		}
		if got := r.Header.Get("Authorization"); got != "Bearer the-token" {
			http.Error(w, "bad token "+got, http.StatusUnauthorized)
			return
		}
		body, _ := io.ReadAll(r.Body)
		obj, err := runtime.Decode(scheme.Codecs.UniversalDeserializer(), body) // client-go sends protobuf
		review, ok := obj.(*authorizationv1.SelfSubjectAccessReview)
		if err != nil || !ok {
			http.Error(w, fmt.Sprintf("not a SelfSubjectAccessReview: %v", err), http.StatusBadRequest)
			return
		}
		review.APIVersion, review.Kind = "authorization.k8s.io/v1", "SelfSubjectAccessReview"
		review.Status.Allowed = !deny
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(review)
	}))
	t.Cleanup(srv.Close)
	// client-go sends no credentials over plain HTTP: the server has a CA of its own.
	dir := t.TempDir()
	token, ca := filepath.Join(dir, "token"), filepath.Join(dir, "ca.crt")
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(token, []byte("the-token"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ca, caPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	return &rest.Config{Host: srv.URL, BearerTokenFile: token, TLSClientConfig: rest.TLSClientConfig{CAFile: ca}}
}

type runResult struct {
	code    int
	dir     string
	out     string
	log     string
	suiteTo []string // the suite's arguments; nil when it did not run
	swept   []string // the run IDs swept
}

func runFake(t *testing.T, junit bool, status int, inCluster func() (*rest.Config, error), args ...string) runResult {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "results")
	record := filepath.Join(t.TempDir(), "args.json")
	t.Setenv(fakeSuiteEnv, record)
	t.Setenv(fakeStatusEnv, strconv.Itoa(status))
	if junit {
		t.Setenv(fakeJUnitEnv, "1")
	} else {
		t.Setenv(fakeJUnitEnv, "")
	}
	kwok := filepath.Join(t.TempDir(), "kwok")
	if err := os.WriteFile(kwok, []byte("x"), 0o755); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	res := runResult{dir: dir}
	swept := func(_ context.Context, _ kubernetes.Interface, runID string) ([]suiterun.Left, error) {
		res.swept = append(res.swept, runID)
		return []suiterun.Left{{Kind: "namespace", Name: "left-" + runID, Deleted: true}}, nil
	}
	res.code = run(context.Background(), config{resultsDir: dir, suite: exe, kwok: kwok, args: args, sweep: swept, progress: "http://localhost:8099/progress"}, inCluster, &out)
	res.out = out.String()
	logData, _ := os.ReadFile(filepath.Join(dir, LogFile))
	res.log = string(logData)
	if data, err := os.ReadFile(record); err == nil {
		if err := json.Unmarshal(data, &res.suiteTo); err != nil {
			t.Fatal(err)
		}
	}
	done, err := os.ReadFile(filepath.Join(dir, DoneFile))
	if err != nil {
		t.Fatalf("no done file: %v (output: %s)", err, res.out)
	}
	if string(done) != dir {
		t.Errorf("the done file says %q, want the results directory %q", done, dir)
	}
	return res
}

func TestRunFailedSpecsAreResults(t *testing.T) {
	cfg := apiServer(t, false)
	r := runFake(t, true, 1, func() (*rest.Config, error) { return cfg, nil }, "--suite=limitations", "--ginkgo.label-filter=os:linux")
	if r.code != 0 {
		t.Errorf("exit %d, want 0: the suite wrote its JUnit (failed specs are in it)\n%s", r.code, r.out)
	}
	if r.suiteTo == nil {
		t.Fatalf("the suite did not run:\n%s", r.out)
	}
	// The suite posts its progress to Sonobuoy's worker (`sonobuoy status`).
	for _, want := range []string{"--suite=limitations", "--ginkgo.label-filter=os:linux", "--report-dir=" + r.dir, "--ginkgo.no-color", "--progress-report-url=http://localhost:8099/progress"} {
		if !slices.Contains(r.suiteTo, want) {
			t.Errorf("suite arguments %q lack %q", r.suiteTo, want)
		}
	}
	kc, ok := flagValue(r.suiteTo, "kubeconfig")
	if !ok {
		t.Fatalf("no --kubeconfig in %q", r.suiteTo)
	}
	rc, err := clientcmd.BuildConfigFromFlags("", kc)
	if err != nil || rc.Host != cfg.Host || rc.BearerTokenFile != cfg.BearerTokenFile {
		t.Errorf("the suite's kubeconfig %s: %v, host %q token file %q", kc, err, rc.Host, rc.BearerTokenFile)
	}
	if _, ok := flagValue(r.suiteTo, "kwok-binary"); !ok {
		t.Errorf("no --kwok-binary in %q", r.suiteTo)
	}
	if !strings.Contains(r.log, "fake suite ran") || !strings.Contains(r.out, "fake suite ran") {
		t.Errorf("the suite's output is not in e2e.log and the pod's log:\nlog: %s\nout: %s", r.log, r.out)
	}
	if _, err := os.Stat(filepath.Join(r.dir, "summary.md")); err != nil {
		t.Errorf("the suite's reports are not in the results directory: %v", err)
	}
	runID, ok := flagValue(r.suiteTo, "run-id")
	if !ok || !runid.Made(runID) {
		t.Errorf("run ID %q in %q", runID, r.suiteTo)
	}
	if !slices.Equal(r.swept, []string{runID}) || !strings.Contains(r.log, "left 1 object(s), now deleted: [namespace left-"+runID+"]") {
		t.Errorf("after the suite: swept %q, log:\n%s", r.swept, r.log)
	}
}

func TestRunKeepsAGivenRunID(t *testing.T) {
	cfg := apiServer(t, false)
	r := runFake(t, true, 0, func() (*rest.Config, error) { return cfg, nil }, "--run-id=mine")
	if n := strings.Count(strings.Join(r.suiteTo, " "), "--run-id"); n != 1 || !slices.Equal(r.swept, []string{"mine"}) {
		t.Errorf("suite args %q, swept %q; want the given run ID only", r.suiteTo, r.swept)
	}
}

func TestRunWithoutJUnitFails(t *testing.T) {
	cfg := apiServer(t, false)
	r := runFake(t, false, 2, func() (*rest.Config, error) { return cfg, nil })
	if r.code == 0 {
		t.Errorf("exit 0 when the suite wrote no JUnit")
	}
	if !strings.Contains(r.log, "exited with status 2 and wrote no junit_01.xml") {
		t.Errorf("e2e.log does not say why:\n%s", r.log)
	}
}

// A suite that passed but left no record shows nothing: the plugin fails,
// whatever the suite's exit status said.
func TestRunWithoutARecordFails(t *testing.T) {
	cfg := apiServer(t, false)
	t.Setenv(fakeNoRecordEnv, "1")
	r := runFake(t, true, 0, func() (*rest.Config, error) { return cfg, nil })
	if r.code == 0 || !strings.Contains(r.log, "left no whole record (ginkgo/report.json)") {
		t.Errorf("exit %d when the suite left no record:\n%s", r.code, r.log)
	}
}

func TestRunRefusesAnAccountThatMayNotRunTheSuites(t *testing.T) {
	cfg := apiServer(t, true)
	r := runFake(t, true, 0, func() (*rest.Config, error) { return cfg, nil })
	if r.code == 0 || r.suiteTo != nil || r.swept != nil {
		t.Errorf("exit %d, suite ran: %v, swept: %v; want a failure before the suite runs", r.code, r.suiteTo != nil, r.swept)
	}
	if !strings.Contains(r.log, "may not create namespaces") || !strings.Contains(r.log, "--aggregator-permissions=clusterAdmin") {
		t.Errorf("e2e.log does not name the missing permission and the fix:\n%s", r.log)
	}
}

func TestRunOutsideAPod(t *testing.T) {
	r := runFake(t, true, 0, inClusterConfigFromEnv(t))
	if r.code == 0 || r.suiteTo != nil {
		t.Errorf("exit %d, suite ran: %v; want a failure", r.code, r.suiteTo != nil)
	}
	if !strings.Contains(r.log, "no in-cluster configuration") || !strings.Contains(r.log, "--kubeconfig") {
		t.Errorf("e2e.log does not say what is wrong:\n%s", r.log)
	}
}

// inClusterConfigFromEnv is the real in-cluster lookup, with the
// environment of a process outside any pod.
func inClusterConfigFromEnv(t *testing.T) func() (*rest.Config, error) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	t.Setenv("KUBERNETES_SERVICE_PORT", "")
	return inClusterConfig
}

func TestRunWithAGivenKubeconfig(t *testing.T) {
	cfg := apiServer(t, false)
	kc := filepath.Join(t.TempDir(), "kc")
	if err := writeKubeconfig(kc, cfg); err != nil {
		t.Fatal(err)
	}
	notInCluster := func() (*rest.Config, error) {
		t.Error("the in-cluster configuration was read though --kubeconfig was given")
		return nil, fmt.Errorf("no")
	}
	r := runFake(t, true, 0, notInCluster, "--kubeconfig", kc)
	if r.code != 0 {
		t.Fatalf("exit %d:\n%s", r.code, r.out)
	}
	if v, _ := flagValue(r.suiteTo, "kubeconfig"); v != kc {
		t.Errorf("the suite got --kubeconfig %q, want the given %q (%q)", v, kc, r.suiteTo)
	}
}
