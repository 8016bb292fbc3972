package libvirt

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/winconform/winconform/infra/docker"
	"github.com/winconform/winconform/infra/nodeimage"
	"github.com/winconform/winconform/testing/libvirtguest"
	wsstandin "github.com/winconform/winconform/testing/standin"
)

// The tests run against the real libvirtd of this machine (.ci/run installs
// and starts it), with the stand-in guest image. Without libvirtd they
// skip, saying so, except under CI=true, where they fail.

// testEnv is what every test of a real host shares.
var testEnv struct {
	skip    string // why the real tests cannot run here
	image   libvirtguest.Image
	network string // the test's Docker network, with an ip-range
	pool    string
}

// The names the tests' resources take: a pool of their own, so that the
// tests never touch a user's machines; a Docker network of their own with
// an ip-range, as winconform up makes kind's.
const (
	testPool     = "winconform-test"
	testNetwork  = "winconform-vmtest"
	libvirtdSock = "/var/run/libvirt/libvirt-sock"
)

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "up" {
		os.Exit(helperUp())
	}
	// The VM files name the stand-in's password by this variable; set
	// here, once, as parallel tests cannot t.Setenv.
	os.Setenv(passwordEnv, wsstandin.DefaultPassword)
	code := func() int {
		if err := setup(); err != nil {
			testEnv.skip = err.Error()
		}
		defer teardown()
		return m.Run()
	}()
	os.Exit(code)
}

func setup() error {
	c, err := net.DialTimeout("unix", libvirtdSock, 2*time.Second)
	if err != nil {
		return fmt.Errorf("libvirtd does not answer on %s (%v): install and start it as .ci/run does", libvirtdSock, err)
	}
	c.Close()
	if _, err := exec.LookPath("qemu-system-x86_64"); err != nil {
		return fmt.Errorf("qemu-system-x86_64 is not installed (apt-get install qemu-system-x86)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var log bytes.Buffer
	img, err := libvirtguest.Ensure(ctx, libvirtguest.Spec{CacheDir: nodeimage.DefaultCacheDir(), Log: &log})
	if err != nil {
		return fmt.Errorf("the stand-in guest image: %v (build log:\n%s)", err, log.String())
	}
	testEnv.image = img
	d, err := docker.New()
	if err != nil {
		return err
	}
	if _, err := d.Ping(ctx); err != nil {
		return err
	}
	if _, err := d.EnsureReservedNetwork(ctx, testNetwork); err != nil {
		return err
	}
	testEnv.network = testNetwork
	return nil
}

func teardown() {
	if testEnv.network == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if d, err := docker.New(); err == nil {
		_ = d.Run(ctx, "network", "rm", testEnv.network)
	}
}

// need skips the test when the real host is missing, or fails it under CI.
func need(t *testing.T) {
	t.Helper()
	if testEnv.skip == "" {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true and the libvirt provider cannot be tested for real: %s", testEnv.skip)
	}
	t.Skipf("the libvirt provider's real tests need libvirtd: %s", testEnv.skip)
}

// standinSettings are the settings of a provider of stand-in guests on the
// test's Docker network, in the test pool, under TCG.
func standinSettings() Settings {
	return Settings{DockerNetwork: testEnv.network, Pool: testPool, PoolPath: filepath.Join(DefaultPoolPath + "-test"),
		Accel: "qemu", Cmdline: libvirtguest.Cmdline}
}

// openStandin opens a provider with s, imports the stand-in image into its
// pool and returns the provider and the image's volume name.
func openStandin(t *testing.T, s Settings) (*Provider, string) {
	t.Helper()
	need(t)
	importMu.Lock() // parallel tests: one import of the image at a time
	defer importMu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// The kernel and initrd are volumes of the pool: import them first
	// with a provider of no kernel.
	bare := s
	bare.Kernel, bare.Initrd = "", ""
	p0, err := Open(ctx, "", bare)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	vols, err := importStandin(ctx, p0, testEnv.image)
	p0.Close()
	if err != nil {
		t.Fatal(err)
	}
	s.Kernel, s.Initrd = vols.kernel, vols.initrd
	p, err := Open(ctx, "", s)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { p.Close() })
	return p, vols.disk
}

// importMu keeps the parallel tests' imports of the stand-in apart.
var importMu sync.Mutex

type standinVolumes struct{ kernel, initrd, disk string }

func importStandin(ctx context.Context, p *Provider, img libvirtguest.Image) (standinVolumes, error) {
	v := standinVolumes{kernel: "standin-" + img.Key + ".vmlinuz", initrd: "standin-" + img.Key + ".initrd", disk: "standin-" + img.Key + ".qcow2"}
	// Earlier builds' volumes go: the pool keeps the current image only.
	if vols, err := p.volumes(ctx); err == nil {
		for _, vol := range vols {
			if strings.HasPrefix(vol.Name, "standin-") && !strings.HasPrefix(vol.Name, "standin-"+img.Key+".") {
				_ = p.deleteVolume(ctx, vol.Name)
			}
		}
	}
	for local, name := range map[string]string{img.Kernel: v.kernel, img.Initrd: v.initrd, img.Disk: v.disk} {
		if _, err := p.Import(ctx, local, name); err != nil {
			return v, err
		}
	}
	return v, nil
}
