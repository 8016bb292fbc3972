package config

import (
	"context"
	"fmt"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilversion "k8s.io/apimachinery/pkg/util/version"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/winconform/winconform/fixtures"
	"github.com/winconform/winconform/framework/e2e"
	"github.com/winconform/winconform/framework/labels"
	"github.com/winconform/winconform/framework/ledger"
	"github.com/winconform/winconform/framework/ospod"
)

// The examples of the documents: seed 000's mysecret and example-config,
// seed 004's dbpass and special-config (created there with --from-literal).
var (
	mysecret = fixtures.Config{
		Name: "mysecret",
		Data: []fixtures.KeyValue{{Key: "username", Value: "admin"}, {Key: "password", Value: "1f2d1e2e67df"}},
		Env:  []fixtures.EnvVar{{Name: "USERNAME", Key: "username"}, {Name: "PASSWORD", Key: "password"}},
	}
	exampleConfig = fixtures.Config{
		Name: "example-config",
		Data: mustLiterals("example.property.1=hello", "example.property.2=world", "special.how=very"),
		Env: []fixtures.EnvVar{
			{Name: "EXAMPLE_PROPERTY_1", Key: "example.property.1"},
			{Name: "EXAMPLE_PROPERTY_2", Key: "example.property.2"},
			{Name: "HOW_SPECIAL", Key: "special.how"},
		},
	}
	dbpass = fixtures.Config{Name: "dbpass", Data: mustLiterals("dbpass=SomeSecretPassword")}
)

// trickyValue has what a literal on a command line can carry and a careless
// path could mangle: spaces (leading too), both quotes, '=' (kubectl splits
// --from-literal at the first), non-ASCII letters and a trailing newline.
const trickyValue = ` s3cr3t pass "double" 'single' a=b==c ünïcødé ✓ 密码` + "\n"

func mustLiterals(sources ...string) []fixtures.KeyValue {
	kv, err := fixtures.FromLiterals(sources...)
	if err != nil {
		panic(err)
	}
	return kv
}

// The documents the configuration limitations come from.
const (
	guide19 = "Kubernetes 1.9 Windows guide (seed 000)"
	era19   = "Kubernetes 1.9"
)

var _ = ginkgo.Describe("Secrets and ConfigMaps", labels.Suite("config"), func() {
	f := e2e.NewFramework("config")

	ginkgo.DescribeTable("a Secret key is an environment variable", func(ctx context.Context, os string) {
		fs := e2e.Facts(ctx, f)
		node := e2e.Nodes(fs, os, 1)[0]
		secret, p, err := fixtures.SecretEnv(fixtures.For(node), mysecret)
		framework.ExpectNoError(err)
		_, err = f.ClientSet.CoreV1().Secrets(f.Namespace.Name).Create(ctx, secret, metav1.CreateOptions{})
		framework.ExpectNoError(err)
		ospod.OnNode(node)(p)
		pod := e2e.Start(ctx, f, p)
		expectEnv(ctx, f, pod, mysecret)
	},
		ginkgo.Entry("windows", labels.Claim("CFG-01"), labels.OS(windows), labels.Needs("windows-node"), windows),
		ginkgo.Entry("linux (the twin)", labels.Claim("CFG-01"), labels.OS(linux), linux),
	)

	ginkgo.DescribeTable("a ConfigMap key is an environment variable", func(ctx context.Context, os string) {
		fs := e2e.Facts(ctx, f)
		node := e2e.Nodes(fs, os, 1)[0]
		cm, p, err := fixtures.ConfigMapEnv(fixtures.For(node), exampleConfig)
		framework.ExpectNoError(err)
		_, err = f.ClientSet.CoreV1().ConfigMaps(f.Namespace.Name).Create(ctx, cm, metav1.CreateOptions{})
		framework.ExpectNoError(err)
		ospod.OnNode(node)(p)
		pod := e2e.Start(ctx, f, p)
		expectEnv(ctx, f, pod, exampleConfig)
	},
		ginkgo.Entry("windows", labels.Claim("CFG-02"), labels.OS(windows), labels.Needs("windows-node"), windows),
		ginkgo.Entry("linux (the twin)", labels.Claim("CFG-02"), labels.OS(linux), linux),
	)

	ginkgo.DescribeTable("a Secret mounts as a volume", func(ctx context.Context, os string) {
		fs := e2e.Facts(ctx, f)
		node := e2e.Nodes(fs, os, 1)[0]
		c := dbpass
		c.Data = append(append([]fixtures.KeyValue{}, mysecret.Data...), dbpass.Data...)
		secret, p, err := fixtures.SecretVolume(fixtures.For(node), c)
		framework.ExpectNoError(err)
		_, err = f.ClientSet.CoreV1().Secrets(f.Namespace.Name).Create(ctx, secret, metav1.CreateOptions{})
		framework.ExpectNoError(err)
		ospod.OnNode(node)(p)
		checkVolume(ctx, f, os, fs.ServerVersion, p, fixtures.SecretVolumeName, c.Data, ledger.Entry{
			Claim:      "CFG-03",
			Limitation: "Secrets cannot be mounted as volumes in Windows containers, only used as environment variables",
		})
	},
		ginkgo.Entry("windows", labels.Claim("CFG-03"), labels.OS(windows), labels.Needs("windows-node"), windows),
		ginkgo.Entry("linux (the twin)", labels.Claim("CFG-03"), labels.OS(linux), linux),
	)

	ginkgo.DescribeTable("a ConfigMap mounts as a volume", func(ctx context.Context, os string) {
		fs := e2e.Facts(ctx, f)
		node := e2e.Nodes(fs, os, 1)[0]
		cm, p, err := fixtures.ConfigMapVolume(fixtures.For(node), exampleConfig)
		framework.ExpectNoError(err)
		_, err = f.ClientSet.CoreV1().ConfigMaps(f.Namespace.Name).Create(ctx, cm, metav1.CreateOptions{})
		framework.ExpectNoError(err)
		ospod.OnNode(node)(p)
		checkVolume(ctx, f, os, fs.ServerVersion, p, fixtures.ConfigMapVolumeName, exampleConfig.Data, ledger.Entry{
			Claim:      "CFG-04",
			Limitation: "ConfigMaps cannot be mounted as volumes in Windows containers, only used as environment variables",
		})
	},
		ginkgo.Entry("windows", labels.Claim("CFG-04"), labels.OS(windows), labels.Needs("windows-node"), windows),
		ginkgo.Entry("linux (the twin)", labels.Claim("CFG-04"), labels.OS(linux), linux),
	)

	ginkgo.DescribeTable("a Secret made from a literal reaches the container byte for byte", func(ctx context.Context, os string) {
		fs := e2e.Facts(ctx, f)
		node := e2e.Nodes(fs, os, 1)[0]
		// kubectl create secret generic dbpass --from-literal=dbpass=<trickyValue>
		c := fixtures.Config{
			Name: "dbpass",
			Data: mustLiterals("dbpass=" + trickyValue),
			Env:  []fixtures.EnvVar{{Name: "DB_PASSWORD", Key: "dbpass"}},
		}
		secret, p, err := fixtures.SecretEnv(fixtures.For(node), c)
		framework.ExpectNoError(err)
		_, err = f.ClientSet.CoreV1().Secrets(f.Namespace.Name).Create(ctx, secret, metav1.CreateOptions{})
		framework.ExpectNoError(err)
		stored, err := f.ClientSet.CoreV1().Secrets(f.Namespace.Name).Get(ctx, secret.Name, metav1.GetOptions{})
		framework.ExpectNoError(err)
		gomega.Expect(stored.Data["dbpass"]).To(gomega.Equal([]byte(trickyValue)), "the API server stored another value")

		ospod.OnNode(node)(p)
		pod := e2e.Start(ctx, f, p)
		got := e2e.MustTool(ctx, f, pod, "", "env", "DB_PASSWORD")
		gomega.Expect([]byte(got)).To(gomega.Equal([]byte(trickyValue)), "DB_PASSWORD is %q, want %q", got, trickyValue)
		framework.Logf("DB_PASSWORD is %q, %d bytes, as created", got, len(got))
	},
		ginkgo.Entry("windows", labels.Claim("CFG-05"), labels.OS(windows), labels.Needs("windows-node"), windows),
		ginkgo.Entry("linux (the twin)", labels.Claim("CFG-05"), labels.OS(linux), linux),
	)
})

// expectEnv checks that each variable of c has, inside pod, its key's value exactly.
func expectEnv(ctx context.Context, f *framework.Framework, pod *corev1.Pod, c fixtures.Config) {
	values := map[string]string{}
	for _, kv := range c.Data {
		values[kv.Key] = kv.Value
	}
	for _, e := range c.Env {
		got := e2e.MustTool(ctx, f, pod, "", "env", e.Name)
		gomega.Expect(got).To(gomega.Equal(values[e.Key]), "%s (from %s key %s) inside the container", e.Name, c.Name, e.Key)
		framework.Logf("%s=%q", e.Name, got)
	}
}

// readVolume starts p and reads, inside it, the file of each key in the
// volume: it returns what it saw, and an error when a file is missing or
// holds another value than its key (or the pod did not start).
// checkVolume starts p and reads each key of data from its volume. A Windows
// pod records the documented limitation in the ledger with what it saw; a
// Linux pod must read every key back.
func checkVolume(ctx context.Context, f *framework.Framework, os, server string, p *corev1.Pod, volume string, data []fixtures.KeyValue, limitation ledger.Entry) {
	evidence, err := readVolume(ctx, f, p, volume, data)
	if os == windows {
		recordVolumeLimitation(ctx, f, server, limitation, evidence, err)
		return
	}
	framework.ExpectNoError(err)
	framework.Logf("%s", evidence)
}

func readVolume(ctx context.Context, f *framework.Framework, p *corev1.Pod, volume string, data []fixtures.KeyValue) (string, error) {
	pod, err := e2e.TryStart(ctx, f, p)
	if err != nil {
		return "", err
	}
	mount := mountPath(pod, volume)
	for _, kv := range data {
		path := fixtures.Join(mount, kv.Key)
		got, stderr, err := e2e.Tool(ctx, f, pod, "", "cat", path)
		if err != nil {
			return "", fmt.Errorf("reading %s in the container: %w (%s)", path, err, stderr)
		}
		if got != kv.Value {
			return "", fmt.Errorf("%s in the container holds %q, want %q", path, got, kv.Value)
		}
	}
	return fmt.Sprintf("the pod ran and each of the %d keys read back, exactly, from its file under %s", len(data), mount), nil
}

// windowsGA is the release from which Windows nodes are supported (stable),
// Secret and ConfigMap volumes included.
var windowsGA = utilversion.MustParseGeneric("1.14")

// recordVolumeLimitation completes e (a CFG-03 or CFG-04 limitation of the
// 1.9 guide) with what a Windows pod showed (evidence, or the error that
// stopped it) and records it. A regression (expected to work, did not)
// fails the spec; so does unexplained drift under --strict-drift.
func recordVolumeLimitation(ctx context.Context, f *framework.Framework, server string, e ledger.Entry, evidence string, observed error) {
	if ctx.Err() != nil {
		return // interrupted: nothing was observed
	}
	e.Document, e.Era, e.Server = guide19, era19, server
	e.Expected, e.Why = ledger.Works, "Windows nodes are supported (GA) from Kubernetes 1.14, with Secret and ConfigMap volumes; expected to work for server >= 1.14"
	if v, err := utilversion.ParseGeneric(server); err == nil && !v.AtLeast(windowsGA) {
		e.Expected, e.Why = ledger.Limited, "server "+server+" is older than 1.14, when Windows nodes became stable"
	}
	e.Observed, e.Evidence = ledger.Works, evidence
	if observed != nil {
		e.Observed, e.Evidence = ledger.Limited, observed.Error()
	}
	e = e2e.RecordLimitation(ctx, f, e)
	if observed != nil && e.Verdict == ledger.Holds {
		framework.Logf("%s holds as expected for %s: %v", e.Claim, server, observed)
	}
}
