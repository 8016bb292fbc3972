package verdicts

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// UnknownUser decides, from a pod whose runAsUserName names no user of the
// image (ID-01) and its events, whether the node refused to run it: done
// when it did (why says how), an error when the container runs, neither
// while it is still on its way (why says where it is).
func UnknownUser(p *corev1.Pod, events []corev1.Event) (done bool, why string, err error) {
	if p == nil || len(p.Status.ContainerStatuses) == 0 {
		return false, "no container status yet", nil
	}
	st := p.Status.ContainerStatuses[0]
	if st.State.Running != nil && st.Ready {
		return false, "running", fmt.Errorf("the container runs as an unknown user")
	}
	if w := st.State.Waiting; w != nil && w.Reason != "ContainerCreating" && w.Reason != "PodInitializing" {
		return w.Reason != "CrashLoopBackOff" || st.RestartCount > 0, w.Reason + ": " + w.Message, nil
	}
	if t := st.State.Terminated; t != nil && t.ExitCode != 0 {
		return true, fmt.Sprintf("terminated %s (exit %d): %s", t.Reason, t.ExitCode, t.Message), nil
	}
	return false, "waiting", nil
}

// ContainerDomain is what a spec saw of the Active Directory identity of a
// container given a gMSA credential spec (ID-02).
type ContainerDomain struct {
	// Domain is the credential spec's DomainJoinConfig.DnsName.
	Domain string
	// Env is USERDNSDOMAIN in the container.
	Env string
	// SCVerify is the output of nltest /sc_verify:<Domain> in the
	// container, SCVerifyErr how it ended when not well.
	SCVerify    string
	SCVerifyErr error
}

// DomainIdentity checks that the container has the domain's identity: nil
// when it does, else what shows it does not.
func DomainIdentity(d ContainerDomain) error {
	if !strings.EqualFold(strings.TrimSpace(d.Env), d.Domain) {
		return fmt.Errorf("the container's domain is %q, the credential spec's %q", d.Env, d.Domain)
	}
	return nil
}
