package verdicts

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// hcsshimUserError is what the node says of a runAsUserName that names no
// user (kubernetes test/e2e/windows/security_context.go at v1.37.2, "should
// not be able to create pods with unknown usernames"): the sandbox's
// FailedCreatePodSandBox event carries hcsshim's error, or (runtimes that
// do not give the user to the sandbox) the container terminates with
// StartError or ContainerCannotRun.
const hcsshimUserError = "The user name or password is incorrect."

// hcsshimDomainError is what an ltsc2025 node says of the same user
// (ERROR_NO_SUCH_DOMAIN, 1355), which security_context.go accepts from
// v1.38.0-beta.0.
const hcsshimDomainError = "The specified domain either does not exist or could not be contacted."

func event(reason, msg string) corev1.Event {
	return corev1.Event{Reason: reason, Message: msg, Type: corev1.EventTypeWarning, InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "unknown-user"}}
}

// ID-01's unknown-user spec is done only when the node refused the user:
// an image that cannot be pulled, or a container still being created, is
// no refusal of the user.
func TestUnknownUserOnlyARefusalOfTheUser(t *testing.T) {
	p := func(state corev1.ContainerState, last corev1.ContainerState, restarts int32) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "unknown-user"}, Status: corev1.PodStatus{Phase: corev1.PodPending,
			ContainerStatuses: []corev1.ContainerStatus{{Name: "probe", State: state, LastTerminationState: last, RestartCount: restarts}}}}
	}
	none := corev1.ContainerState{}
	for name, c := range map[string]struct {
		pod    *corev1.Pod
		events []corev1.Event
		done   bool
	}{
		"ErrImagePull":      {pod: p(waiting("ErrImagePull", `failed to pull and unpack image "registry.example/probe:1": failed to resolve reference: not found`), none, 0)},
		"ImagePullBackOff":  {pod: p(waiting("ImagePullBackOff", `Back-off pulling image "registry.example/probe:1"`), none, 0)},
		"ContainerCreating": {pod: p(waiting("ContainerCreating", ""), none, 0)},
		"a sandbox that failed for the network": {pod: p(waiting("ContainerCreating", ""), none, 0),
			events: []corev1.Event{event("FailedCreatePodSandBox", `Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox: plugin type="flannel" failed (add): no such file or directory`)}},
		"the sandbox refused the user": {pod: p(waiting("ContainerCreating", ""), none, 0), done: true,
			events: []corev1.Event{event("FailedCreatePodSandBox", `Failed to create pod sandbox: rpc error: code = Unknown desc = failed to create containerd task: failed to create shim task: hcs::CreateComputeSystem 0123: `+hcsshimUserError+`: unknown`)}},
		"the ltsc2025 sandbox refused the user": {pod: p(waiting("ContainerCreating", ""), none, 0), done: true,
			events: []corev1.Event{event("FailedCreatePodSandBox", `Failed to create pod sandbox: rpc error: code = Unknown desc = failed to create containerd task: failed to create shim task: hcs::CreateComputeSystem 0123: `+hcsshimDomainError+`: unknown`)}},
		"an ltsc2025 container that could not start": {pod: p(waiting("CreateContainerError", "hcs::System::CreateProcess: "+hcsshimDomainError), none, 0), done: true},
		"a domain error of something else": {pod: p(waiting("ContainerCreating", ""), none, 0),
			events: []corev1.Event{event("FailedMount", `MountVolume.SetUp failed: the specified domain controller could not be reached`)}},
		"the container could not start": {pod: p(corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "StartError", ExitCode: 128,
			Message: "failed to create containerd task: failed to create shim task: hcs::System::CreateProcess: " + hcsshimUserError}}, none, 0), done: true},
		"back-off after a StartError": {pod: p(waiting("CrashLoopBackOff", "back-off 10s restarting failed container"),
			corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "StartError", ExitCode: 128}}, 1), done: true},
		"ContainerCannotRun": {pod: p(corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "ContainerCannotRun", ExitCode: 128}}, none, 0), done: true},
	} {
		done, why, err := UnknownUser(c.pod, c.events)
		if err != nil || done != c.done {
			t.Errorf("%s: done %v (%s), %v; want done %v", name, done, why, err, c.done)
		}
	}
	ready := p(running(), none, 0)
	ready.Status.ContainerStatuses[0].Ready = true
	if _, _, err := UnknownUser(ready, nil); err == nil {
		t.Error("the container runs: no error")
	}
}

// scVerifyOK is nltest /sc_verify's output in a container that runs with a
// working gMSA (Microsoft's "Run a container with a gMSA",
// MicrosoftDocs/Virtualization-Documentation,
// virtualization/windowscontainers/manage-containers/gmsa-run-container.md).
const scVerifyOK = `Flags: b0 HAS_IP  HAS_TIMESERV
Trusted DC Name \\dc01.contoso.com
Trusted DC Connection Status Status = 0 0x0 NERR_Success
Trust Verification Status = 0 0x0 NERR_Success
The command completed successfully
`

// ID-02 is shown by the container's secure channel to the domain's
// controller (nltest /sc_verify), never by an environment variable: a
// container may carry USERDNSDOMAIN=contoso.com with no identity in the
// domain at all.
func TestDomainIdentityFromTheSecureChannel(t *testing.T) {
	if err := DomainIdentity(ContainerDomain{Domain: "contoso.com", Env: "CONTOSO.COM", SCVerify: scVerifyOK}); err != nil {
		t.Errorf("a verified secure channel to dc01.contoso.com: %v", err)
	}
	noDC := "I_NetLogonControl failed: Status = 1311 0x51f ERROR_NO_LOGON_SERVERS\n"
	for name, d := range map[string]ContainerDomain{
		"no logon server":    {Domain: "contoso.com", Env: "CONTOSO.COM", SCVerify: noDC, SCVerifyErr: errors.New("command terminated with exit code 1")},
		"nltest did not run": {Domain: "contoso.com", Env: "CONTOSO.COM", SCVerifyErr: errors.New(`exec: "nltest": executable file not found in %PATH%`)},
		"a DC of another domain": {Domain: "contoso.com", Env: "CONTOSO.COM", SCVerify: `Flags: b0 HAS_IP  HAS_TIMESERV
Trusted DC Name \\dc01.fabrikam.com
Trusted DC Connection Status Status = 0 0x0 NERR_Success
Trust Verification Status = 0 0x0 NERR_Success
The command completed successfully
`},
	} {
		if err := DomainIdentity(d); err == nil {
			t.Errorf("%s: no error, want the identity refused", name)
		}
	}
}
