package config

import (
	"context"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/winconform/winconform/fixtures"
	"github.com/winconform/winconform/framework/e2e"
	"github.com/winconform/winconform/framework/labels"
	"github.com/winconform/winconform/framework/ledger"
	"github.com/winconform/winconform/framework/ospod"
	"github.com/winconform/winconform/framework/verdicts"
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
		e2e.OSEntries("CFG-01"),
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
		e2e.OSEntries("CFG-02"),
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
		checkVolume(ctx, f, os, p, fixtures.SecretVolumeName, c.Data, "CFG-03")
	},
		e2e.OSEntries("CFG-03"),
	)

	ginkgo.DescribeTable("a ConfigMap mounts as a volume", func(ctx context.Context, os string) {
		fs := e2e.Facts(ctx, f)
		node := e2e.Nodes(fs, os, 1)[0]
		cm, p, err := fixtures.ConfigMapVolume(fixtures.For(node), exampleConfig)
		framework.ExpectNoError(err)
		_, err = f.ClientSet.CoreV1().ConfigMaps(f.Namespace.Name).Create(ctx, cm, metav1.CreateOptions{})
		framework.ExpectNoError(err)
		ospod.OnNode(node)(p)
		checkVolume(ctx, f, os, p, fixtures.ConfigMapVolumeName, exampleConfig.Data, "CFG-04")
	},
		e2e.OSEntries("CFG-04"),
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
		e2e.OSEntries("CFG-05"),
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

// checkVolume starts p and reads each key of data from its volume. A Windows
// pod records in the ledger what became of claim's documented limitation
// (verdicts.ConfigVolume decides from the pod's start and the reads); a
// Linux pod, the twin, must read every key back: it checks the fixtures
// and the reading, and says nothing of the Windows limitation.
func checkVolume(ctx context.Context, f *framework.Framework, os string, p *corev1.Pod, volume string, data []fixtures.KeyValue, claim string) {
	mount, reads, start := readVolume(ctx, f, p, volume, data)
	if ctx.Err() != nil {
		return // interrupted: nothing was observed
	}
	o, err := verdicts.ConfigVolume(start, mount, reads)
	if os != windows {
		framework.ExpectNoError(err)
		gomega.Expect(o.Behaviour).To(gomega.Equal(ledger.Works), "%s", o.Evidence)
		framework.Logf("%s", o.Evidence)
		return
	}
	framework.ExpectNoError(err)
	e := e2e.Limitation(ctx, f, claim)
	o.Apply(&e)
	e2e.RecordLimitation(ctx, f, e)
}

// readVolume starts p and reads each key of data from its file under the
// volume's mount, until a read fails: the mount, the reads, and why the
// pod did not start (nil when it ran).
func readVolume(ctx context.Context, f *framework.Framework, p *corev1.Pod, volume string, data []fixtures.KeyValue) (string, []verdicts.FileRead, error) {
	pod, err := e2e.TryStart(ctx, f, p)
	if err != nil {
		return "", nil, err
	}
	mount := mountPath(pod, volume)
	var reads []verdicts.FileRead
	for _, kv := range data {
		path := fixtures.Join(mount, kv.Key)
		got, stderr, err := e2e.Tool(ctx, f, pod, "", "cat", path)
		reads = append(reads, verdicts.FileRead{Path: path, Want: kv.Value, Got: got, Err: err, Exit: e2e.ExitStatus(err), Stderr: stderr})
		if err != nil {
			break
		}
	}
	return mount, reads, nil
}
