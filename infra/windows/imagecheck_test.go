package windows_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/winconform/winconform/images"
	"github.com/winconform/winconform/infra/windows"
	"github.com/winconform/winconform/testing/simmachine"
)

// unreadableRegistry is a registry the harness cannot reach (an air-gapped
// harness host, no credentials for the mirror).
type unreadableRegistry struct{}

func (unreadableRegistry) WindowsVariants(context.Context, string) ([]string, error) {
	return nil, errors.New("dial tcp: lookup registry.k8s.io: no such host")
}

// TestJoinRefusesAnImageNewerThanTheHost joins a Windows Server 2022 machine
// behind on its updates (10.0.20348.1000) while the sandbox image's
// ltsc2022 variant is of update 2340. With process isolation, Windows does
// not start a container of a later update than the host: hcs::System::Start
// fails with 0xc0370106 (microsoft/Windows-Containers#591: "The host had not
// had the update KB5058411 installed and after installing the update, the
// containers could be run"; docker/for-win#14287 shows the error text), and
// containerd 1.7 pulls that variant, the only one of the host's build
// (containerd/containerd platforms/defaults_windows.go). The simulated
// machine refuses so; the join stops at preflight, before anything is
// installed, naming both updates and the fix.
func TestJoinRefusesAnImageNewerThanTheHost(t *testing.T) {
	t.Parallel()
	r := newRig(t, simmachine.Config{Build: "10.0.20348.1000", ContainersInstalled: true})
	_, err := r.join(windows.JoinOptions{})
	if !errors.Is(err, windows.ErrImageNotRunnable) {
		t.Fatalf("err = %v, want ErrImageNotRunnable at preflight", err)
	}
	for _, want := range []string{images.Ref("pause-ltsc2022"), "10.0.20348.2340", "10.0.20348.1000", "0xc0370106", "cumulative updates"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q: %v", want, err)
		}
	}
	if got := r.sim.Steps(); !slices.Equal(got, []string{"preflight"}) {
		t.Errorf("the machine ran %v after preflight refused it", got)
	}
}

// TestJoinChecksTheVariantContainerdPulls: of several variants of the
// host's build, containerd 1.7 pulls the one of the host's own update, else
// the latest (platforms/defaults_windows.go, windowsmatcher.Less). A host at
// update 2400 gets 2500 from an image of 2340 and 2500, and is refused; a
// host at 2500 gets its own and joins; Windows Server 2025 gets no variant
// of pause:3.10.1 at all.
func TestJoinChecksTheVariantContainerdPulls(t *testing.T) {
	t.Parallel()
	pause := images.Ref("pause-ltsc2022")
	for _, tc := range []struct {
		name, build, want string
	}{
		{"host between the variants", "10.0.20348.2400", "is 10.0.20348.2500 for this machine's build, a later update than the machine's 10.0.20348.2400"},
		{"host of the latest variant", "10.0.20348.2500", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, simmachine.Config{Build: tc.build, ContainersInstalled: true})
			r.sim.SetImageVariants(pause, "10.0.17763.6054", "10.0.20348.2340", "10.0.20348.2500")
			rep, err := r.join(windows.JoinOptions{})
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Join: %v", err)
				}
				st, _ := rep.Step(windows.StepPreflight)
				if v, _ := st.Status["imageVariants"].(map[string]any); v[pause] != tc.build {
					t.Errorf("preflight reports the variants %v, want %s's %s", st.Status["imageVariants"], pause, tc.build)
				}
				return
			}
			if !errors.Is(err, windows.ErrImageNotRunnable) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want ErrImageNotRunnable saying %q", err, tc.want)
			}
		})
	}
	t.Run("no variant the host runs", func(t *testing.T) {
		t.Parallel()
		r := newRig(t, simmachine.Config{Build: "10.0.26100.3194", ContainersInstalled: true})
		r.cluster.buildLabel = "10.0.26100"
		r.sim.SetImageVariants(images.Ref("pause-ltsc2025"), "10.0.17763.6054")
		_, err := r.join(windows.JoinOptions{})
		if !errors.Is(err, windows.ErrImageNotRunnable) || !strings.Contains(err.Error(), "has no variant that containerd 2.3.7 runs on Windows build 10.0.26100") {
			t.Fatalf("err = %v, want ErrImageNotRunnable: no variant for 10.0.26100", err)
		}
	})
	// Windows' stable ABI: a Windows Server 2025 host runs a Windows Server
	// 2022 variant with process isolation, and containerd 2 runs it when
	// the index has none of 2025 (nodeconfig.PulledVariant, held to
	// containerd's own matcher); before, preflight refused any variant of
	// another build than the host's (containerd 1.7's reading, wrongly).
	t.Run("an earlier LTSC's variant, through the stable ABI", func(t *testing.T) {
		t.Parallel()
		r := newRig(t, simmachine.Config{Build: "10.0.26100.3194", ContainersInstalled: true})
		r.cluster.buildLabel = "10.0.26100"
		ref := images.Ref("pause-ltsc2025")
		r.sim.SetImageVariants(ref, "10.0.17763.6054", "10.0.20348.2340")
		rep, err := r.join(windows.JoinOptions{})
		if err != nil {
			t.Fatalf("Join: %v", err)
		}
		st, _ := rep.Step(windows.StepPreflight)
		if v, _ := st.Status["imageVariants"].(map[string]any); v[ref] != "10.0.20348.2340" {
			t.Errorf("preflight reports the variants %v, want %s's 10.0.20348.2340", st.Status["imageVariants"], ref)
		}
	})
}

// TestJoinGoesOnWithoutTheRegistry: a harness that cannot read an image's
// index checks no variant of it and says so; the join goes on (the pod
// check still starts the sandbox image on the node).
func TestJoinGoesOnWithoutTheRegistry(t *testing.T) {
	t.Parallel()
	r := newRig(t, simmachine.Config{ContainersInstalled: true})
	var out bytes.Buffer
	if _, err := r.join(windows.JoinOptions{Registry: unreadableRegistry{}, Log: &syncWriter{w: &out}}); err != nil {
		t.Fatalf("Join: %v", err)
	}
	if !strings.Contains(out.String(), "cannot read the index of the sandbox image") {
		t.Errorf("the log does not say the sandbox image went unchecked:\n%s", out.String())
	}
}

// TestRemoteRegistryReadsWindowsVariants reads, from a registry, the
// os.versions a manifest list gives its windows/amd64 entries (as
// kubernetes' build/pause and images.ProbeIndex write them), skipping the
// Linux ones, and the os.version of a single Windows image's config.
func TestRemoteRegistryReadsWindowsVariants(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	img := func(os, osVersion string) v1.Image {
		i, err := random.Image(64, 1)
		if err != nil {
			t.Fatal(err)
		}
		cf, _ := i.ConfigFile()
		cf = cf.DeepCopy()
		cf.OS, cf.Architecture, cf.OSVersion = os, "amd64", osVersion
		if i, err = mutate.ConfigFile(i, cf); err != nil {
			t.Fatal(err)
		}
		return i
	}
	var adds []mutate.IndexAddendum
	for _, p := range []v1.Platform{{OS: "linux", Architecture: "amd64"}, {OS: "windows", Architecture: "amd64", OSVersion: "10.0.17763.6054"}, {OS: "windows", Architecture: "amd64", OSVersion: "10.0.20348.2340"}} {
		adds = append(adds, mutate.IndexAddendum{Add: img(p.OS, p.OSVersion), Descriptor: v1.Descriptor{Platform: &p}})
	}
	idx := mutate.IndexMediaType(mutate.AppendManifests(empty.Index, adds...), types.DockerManifestList)
	list, single := host+"/pause:3.10.1", host+"/probe:v1"
	mustParse := func(s string) name.Reference {
		ref, err := name.ParseReference(s)
		if err != nil {
			t.Fatal(err)
		}
		return ref
	}
	if err := remote.WriteIndex(mustParse(list), idx); err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(mustParse(single), img("windows", "10.0.26100.3194")); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	got, err := windows.RemoteRegistry{}.WindowsVariants(ctx, list)
	if err != nil || !slices.Equal(got, []string{"10.0.17763.6054", "10.0.20348.2340"}) {
		t.Errorf("WindowsVariants(%s) = %v, %v", list, got, err)
	}
	got, err = windows.RemoteRegistry{}.WindowsVariants(ctx, single)
	if err != nil || !slices.Equal(got, []string{"10.0.26100.3194"}) {
		t.Errorf("WindowsVariants(%s) = %v, %v", single, got, err)
	}
	if _, err := (windows.RemoteRegistry{}).WindowsVariants(ctx, host+"/missing:1"); err == nil {
		t.Error("an image the registry does not hold has variants")
	}
}
