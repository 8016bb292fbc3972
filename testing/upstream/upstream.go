// Package upstream judges what the harness composes for a Windows node's
// components (infra/windows/nodeconfig) with those components' own code, at
// the versions the join installs: kubeadm's decoding, defaults, validation
// and patching (k8s.io/kubernetes v1.37.2, cmd/kubeadm), the kubelet's flag
// set and configuration loader and validation (cmd/kubelet, pkg/kubelet),
// kube-proxy's flag set and validation (cmd/kube-proxy), and containerd's
// own binary, built from its module (Containerd).
//
// Where a check depends on the operating system the component runs on
// (kubeadm's CRI socket scheme, the kubelet's Windows-only flags and
// validation, kube-proxy's Windows-only flags and mode), the Linux build
// cannot run the Windows code: that part is read from the Windows source
// file in the module cache (winsource.go) and checked against it, and the
// result names what was so checked (Result.FromSource). On Windows (the
// windows workflow runs these tests on GitHub's Windows runners) nothing is
// read from source: the Windows build judges all of it.
//
// kubeadm resolves paths in the JoinConfiguration against its working
// directory, so the kubeadm judge runs in a child process started in a
// directory holding exactly the files the join writes: the test binary
// itself, which this package's init turns into the judge when the
// environment says so (reexec.go).
package upstream
