package windows

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"k8s.io/client-go/rest"
)

// ErrClockSkew: the machine's clock is so far behind the API server's that
// the machine cannot trust the certificates the cluster makes.
var ErrClockSkew = errors.New("machine clock behind the API server's")

// maxClockSkew is how far behind the API server's clock a machine's may
// be. Kubernetes gives clocks five minutes: kubeadm starts the validity of
// the certificates it makes and renews five minutes before it makes them
// (CertificateBackdate, k8s.io/kubernetes cmd/kubeadm/app/constants), and
// so does the cluster's certificate signer for those it signs (Backdate,
// pkg/controller/certificates/signer/signer.go). A node whose clock is
// further behind takes a certificate made just now for one not yet valid,
// and TLS to the API server fails ("x509: certificate has expired or is
// not yet valid"). A bootstrap token is not at stake: its expiry is the API
// server's to judge, by its own clock (the node only checks the JWS
// signature of cluster-info: cmd/kubeadm/app/discovery/token). A clock
// ahead by as much breaks neither, and is only reported.
const maxClockSkew = 5 * time.Minute

// APIServerClock is a ControlPlane that reads the API server's clock
// itself. Join asks any other through its REST config: the Date header of
// the API server's answer to GET /version.
type APIServerClock interface {
	APIServerTime(ctx context.Context) (time.Time, error)
}

// clockReading is a clock compared with this host's: how far it is ahead
// (behind when negative), give or take slack.
type clockReading struct {
	offset, slack time.Duration
}

// runPreflight runs preflight's script, noting when it was sent and when it
// answered: the machine read its clock in between.
func (j *joinRun) runPreflight(ctx context.Context, s step, sr *StepReport) (status, error) {
	sent := time.Now()
	st, err := j.runScript(ctx, s, sr, fixed(nil))
	j.preflightSent, j.preflightGot = sent, time.Now()
	return st, err
}

// machineClock is the machine's clock, from preflight's utcNow.
func (j *joinRun) machineClock(st status) (clockReading, time.Time, error) {
	at, err := time.Parse(time.RFC3339Nano, st.str("utcNow"))
	if err != nil {
		return clockReading{}, at, &StepError{Machine: j.m.Name, Step: StepPreflight, Kind: ErrBadStatus,
			Detail: fmt.Sprintf("the machine reported no usable time (utcNow %q)", st.str("utcNow"))}
	}
	half := j.preflightGot.Sub(j.preflightSent) / 2
	return clockReading{offset: at.Sub(j.preflightSent.Add(half)), slack: half}, at, nil
}

// apiServerClock reads the API server's clock.
func apiServerClock(ctx context.Context, cp ControlPlane) (clockReading, error) {
	if c, ok := cp.(APIServerClock); ok {
		t, err := c.APIServerTime(ctx)
		if err != nil {
			return clockReading{}, err
		}
		return clockReading{offset: t.Sub(time.Now())}, nil
	}
	return dateHeaderClock(ctx, cp.RESTConfig())
}

// dateHeaderClock reads the API server's clock from the Date header of its
// answer to GET /version (any answer has one, RFC 9110 section 6.6.1). The
// header has whole seconds, written while the request was in flight.
func dateHeaderClock(ctx context.Context, cfg *rest.Config) (clockReading, error) {
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return clockReading{}, err
	}
	base, _, err := rest.DefaultServerUrlFor(cfg)
	if err != nil {
		return clockReading{}, err
	}
	base.Path = "/version"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base.String(), nil)
	if err != nil {
		return clockReading{}, err
	}
	sent := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return clockReading{}, err
	}
	got := time.Now()
	_ = resp.Body.Close()
	date, err := http.ParseTime(resp.Header.Get("Date"))
	if err != nil {
		return clockReading{}, fmt.Errorf("its answer to GET %s has no usable Date header (%q)", base, resp.Header.Get("Date"))
	}
	half := got.Sub(sent) / 2
	return clockReading{offset: date.Add(time.Second / 2).Sub(sent.Add(half)), slack: half + time.Second/2}, nil
}

// checkClock compares the machine's clock (preflight's utcNow) with the API
// server's, or with this host's when the API server's cannot be read. A
// machine more than maxClockSkew behind fails the join; one as far ahead
// is reported.
func (j *joinRun) checkClock(ctx context.Context, st status, sr *StepReport) error {
	machine, at, err := j.machineClock(st)
	if err != nil {
		return err
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	against := "the API server's"
	server, err := apiServerClock(cctx, j.cp)
	if err != nil {
		j.logf("%s: cannot read the API server's clock (%v): comparing the machine's with this host's", StepPreflight, err)
		against, server = "this host's (the API server's could not be read)", clockReading{}
	}
	skew, slack := machine.offset-server.offset, machine.slack+server.slack
	if sr.Status == nil {
		sr.Status = map[string]any{}
	}
	sr.Status["clockSkew"] = skew.Round(time.Second).String()
	fix := "set the machine's time: w32tm /resync /force (after w32tm /config /manualpeerlist:<NTP server> /syncfromflags:manual /update when it has no time source; a domain member takes its domain's)"
	if server.offset.Abs() > maxClockSkew {
		fix += fmt.Sprintf(", or the clock of the API server's host, which is %s off this host's", server.offset.Round(time.Second))
	}
	switch {
	case skew < -(maxClockSkew + slack):
		return &StepError{Machine: j.m.Name, Step: StepPreflight, Kind: ErrClockSkew,
			Detail: fmt.Sprintf("the machine's clock (%s) is %s behind %s, more than the %s the cluster's certificates allow: kubeadm and the cluster's certificate signer date each certificate %s before they make it, so the machine would take the certificates the cluster makes now for not yet valid and TLS to the API server fails (x509: certificate has expired or is not yet valid); %s",
				at.UTC().Format(time.RFC3339), (-skew).Round(time.Second), against, maxClockSkew, maxClockSkew, fix)}
	case skew > maxClockSkew+slack:
		j.logf("%s: the machine's clock is %s ahead of %s: the join does not depend on it (certificates are valid from before they are made, and a bootstrap token's expiry is the API server's to judge), but the node's times (events, logs, pod status) will be off; %s",
			StepPreflight, skew.Round(time.Second), against, fix)
	}
	return nil
}
