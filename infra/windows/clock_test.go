package windows_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/winconform/winconform/infra/windows"
	"github.com/winconform/winconform/testing/simmachine"
)

// TestJoinRefusesAClockBehindTheAPIServer joins a machine whose clock is
// ten minutes behind (a lab VM without a time source keeps the time it
// was installed with). kubeadm dates the certificates it makes and renews
// five minutes before it makes them (CertificateBackdate,
// cmd/kubeadm/app/constants/constants.go in k8s.io/kubernetes v1.34.4), and
// the cluster's signer those it signs (Backdate,
// pkg/controller/certificates/signer/signer.go): to a machine further
// behind they are not yet valid, and TLS fails. The join stops at
// preflight, naming how far behind and the fix, w32tm.
func TestJoinRefusesAClockBehindTheAPIServer(t *testing.T) {
	t.Parallel()
	r := newRig(t, simmachine.Config{ContainersInstalled: true, ClockOffset: -10 * time.Minute})
	_, err := r.join(windows.JoinOptions{})
	if !errors.Is(err, windows.ErrClockSkew) {
		t.Fatalf("err = %v, want ErrClockSkew", err)
	}
	for _, want := range []string{"10m0s behind the API server's", "not yet valid", "w32tm /resync"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q: %v", want, err)
		}
	}
	if got := r.sim.Steps(); !slices.Equal(got, []string{"preflight"}) {
		t.Errorf("the machine ran %v after preflight refused it", got)
	}
}

// TestJoinComparesTheClockWithTheAPIServers: what matters is the API
// server's clock, not the harness's. A machine in step with the API server
// joins though both are ten minutes behind this host; a machine in step
// with this host is refused when the API server's clock is ten minutes
// ahead, and the error says which clock is off this host's.
func TestJoinComparesTheClockWithTheAPIServers(t *testing.T) {
	t.Parallel()
	t.Run("both behind this host", func(t *testing.T) {
		t.Parallel()
		r := newRig(t, simmachine.Config{ContainersInstalled: true, ClockOffset: -10 * time.Minute})
		r.cluster.clockOffset = -10 * time.Minute
		rep, err := r.join(windows.JoinOptions{})
		if err != nil {
			t.Fatalf("Join: %v", err)
		}
		st, _ := rep.Step(windows.StepPreflight)
		if st.Status["clockSkew"] != "0s" {
			t.Errorf("preflight reports a clock skew of %v, want 0s", st.Status["clockSkew"])
		}
	})
	t.Run("the API server ahead of this host", func(t *testing.T) {
		t.Parallel()
		r := newRig(t, simmachine.Config{ContainersInstalled: true})
		r.cluster.clockOffset = 10 * time.Minute
		_, err := r.join(windows.JoinOptions{})
		if !errors.Is(err, windows.ErrClockSkew) || !strings.Contains(err.Error(), "the clock of the API server's host, which is 10m0s off this host's") {
			t.Fatalf("err = %v, want ErrClockSkew naming the API server's clock as off this host's", err)
		}
	})
}

// TestJoinReportsAClockAhead joins a machine ten minutes ahead: nothing of
// the join depends on it (certificates are valid from before they are
// made; the API server judges a token's expiry), so the join goes on and
// says so.
func TestJoinReportsAClockAhead(t *testing.T) {
	t.Parallel()
	r := newRig(t, simmachine.Config{ContainersInstalled: true, ClockOffset: 10 * time.Minute})
	var log bytes.Buffer
	rep, err := r.join(windows.JoinOptions{Log: &syncWriter{w: &log}})
	if err != nil {
		t.Fatalf("Join: %v", err)
	}
	if !strings.Contains(log.String(), "the machine's clock is 10m0s ahead of the API server's") {
		t.Errorf("the log does not report the clock ahead:\n%s", log.String())
	}
	if st, _ := rep.Step(windows.StepPreflight); st.Status["clockSkew"] != "10m0s" {
		t.Errorf("preflight reports a clock skew of %v, want 10m0s", st.Status["clockSkew"])
	}
}

// apiServerAt is a control plane whose API server is a real HTTP server
// answering with a Date header ten minutes ahead: it has no
// APIServerTime, so the join reads the header, as it does of
// APIControlPlane and kind's control plane.
type apiServerAt struct {
	*fakeCluster
	rest *rest.Config
}

func (a apiServerAt) RESTConfig() *rest.Config { return a.rest }

// TestJoinReadsTheAPIServersDateHeader: a control plane without
// APIServerTime is read through its REST config; every HTTP answer carries
// the server's time in its Date header (RFC 9110, 6.6.1), the API server's
// too, whatever its status.
func TestJoinReadsTheAPIServersDateHeader(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path != "/version" {
			t.Errorf("the harness asked for %s", req.URL.Path)
		}
		w.Header().Set("Date", time.Now().Add(10*time.Minute).UTC().Format(http.TimeFormat))
		w.WriteHeader(http.StatusUnauthorized)
	}))
	t.Cleanup(srv.Close)
	r := newRig(t, simmachine.Config{ContainersInstalled: true})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// Only ControlPlane's methods: the fake cluster's APIServerTime is hidden.
	cp := struct{ windows.ControlPlane }{apiServerAt{fakeCluster: r.cluster, rest: &rest.Config{Host: srv.URL}}}
	_, err := windows.Join(ctx, r.machine, r.exec, cp, windows.JoinOptions{Timeouts: testTimeouts()})
	if !errors.Is(err, windows.ErrClockSkew) || !strings.Contains(err.Error(), "behind the API server's") {
		t.Fatalf("err = %v, want ErrClockSkew from the Date header", err)
	}
}
