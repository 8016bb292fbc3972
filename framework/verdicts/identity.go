package verdicts

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// userRefused are the messages hcsshim passes on when a container's user
// does not exist, by the Windows base image's way of resolving the name:
// ERROR_LOGON_FAILURE (1326) on ltsc2022; ERROR_NO_SUCH_DOMAIN (1355) on
// ltsc2025, whose local lookup falls through to a domain that a container
// without one cannot reach. Upstream's security_context.go accepts the
// second from k8s.io/kubernetes v1.38.0-beta.0 (the only change in
// test/e2e/windows from v1.37.2); the node, not the Kubernetes line,
// decides which a run sees, so the harness accepts both on every line.
var userRefused = []string{
	"The user name or password is incorrect.",
	"The specified domain either does not exist or could not be contacted.",
}

// refusesUser says whether msg carries one of userRefused.
func refusesUser(msg string) bool {
	for _, r := range userRefused {
		if strings.Contains(msg, r) {
			return true
		}
	}
	return false
}

// UnknownUser decides, from a pod whose runAsUserName names no user of the
// image (ID-01) and its events, whether the node refused to run it for its
// user, as upstream's security_context.go checks: a FailedCreatePodSandBox
// event (or a container state) with hcsshim's "The user name or password is
// incorrect." or (ltsc2025) "The specified domain either does not exist or
// could not be contacted.", or the container terminated with StartError or
// ContainerCannotRun (now, or before a back-off). done when it did (why
// says how); an error when the container runs; otherwise not done, why
// saying where the pod is: an image pull error, a container still being
// created, a sandbox that failed for another reason are no refusal of the
// user.
func UnknownUser(p *corev1.Pod, events []corev1.Event) (done bool, why string, err error) {
	for _, e := range events {
		if refusesUser(e.Message) {
			return true, e.Reason + ": " + e.Message, nil
		}
	}
	if p == nil || len(p.Status.ContainerStatuses) == 0 {
		return false, State(p) + warnings(events), nil
	}
	st := p.Status.ContainerStatuses[0]
	if st.State.Running != nil && st.Ready {
		return false, "running", fmt.Errorf("the container runs as an unknown user")
	}
	for _, s := range []corev1.ContainerState{st.State, st.LastTerminationState} {
		if w := s.Waiting; w != nil && refusesUser(w.Message) {
			return true, w.Reason + ": " + w.Message, nil
		}
		if t := s.Terminated; t != nil && (t.Reason == "StartError" || t.Reason == "ContainerCannotRun" || refusesUser(t.Message)) {
			return true, fmt.Sprintf("terminated %s (exit %d): %s", t.Reason, t.ExitCode, t.Message), nil
		}
	}
	return false, State(p) + warnings(events), nil
}

// warnings lists the warning events, after a semicolon.
func warnings(events []corev1.Event) string {
	var out []string
	for _, e := range events {
		if e.Type == corev1.EventTypeWarning {
			out = append(out, e.Reason+": "+e.Message)
		}
	}
	if len(out) == 0 {
		return ""
	}
	return "; " + strings.Join(out, "; ")
}

// ContainerDomain is what a spec saw of the Active Directory identity of a
// container given a gMSA credential spec (ID-02).
type ContainerDomain struct {
	// Domain is the credential spec's DomainJoinConfig.DnsName.
	Domain string
	// Env is USERDNSDOMAIN in the container, for the log only: an
	// environment variable is no identity.
	Env string
	// SCVerify is the output of nltest /sc_verify:<Domain> in the
	// container, SCVerifyErr how it ended when not well.
	SCVerify    string
	SCVerifyErr error
}

// DomainIdentity checks that the container has the domain's identity: its
// secure channel to a controller of the domain verified (nltest
// /sc_verify: the connection to and the trust with "Trusted DC Name"
// NERR_Success, and the DC in Domain), as Microsoft's gMSA documents tell
// to check it. nil when it does, else what shows it does not.
func DomainIdentity(d ContainerDomain) error {
	out := strings.ReplaceAll(d.SCVerify, "\r\n", "\n")
	if d.SCVerifyErr != nil {
		return fmt.Errorf("nltest /sc_verify:%s in the container: %v: %s", d.Domain, d.SCVerifyErr, strings.TrimSpace(out))
	}
	var dc string
	connected, trusted, completed := false, false, false
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "Trusted DC Name "):
			dc = strings.TrimPrefix(strings.TrimPrefix(line, "Trusted DC Name "), `\\`)
		case strings.HasPrefix(line, "Trusted DC Connection Status "):
			connected = strings.HasSuffix(line, " NERR_Success")
		case strings.HasPrefix(line, "Trust Verification Status "):
			trusted = strings.HasSuffix(line, " NERR_Success")
		case line == "The command completed successfully":
			completed = true
		}
	}
	switch {
	case !connected || !trusted || !completed:
		return fmt.Errorf("the container's secure channel to %s is not verified (nltest /sc_verify): %s", d.Domain, strings.TrimSpace(out))
	case !strings.HasSuffix(strings.ToLower(dc), "."+strings.ToLower(d.Domain)):
		return fmt.Errorf("the container's secure channel goes to %q, not to a controller of %s", dc, d.Domain)
	}
	return nil
}
