// Package hostprocess asserts what the upstream Windows e2e specs
// (test/e2e/windows/host_process.go) check of HostProcess containers (HPC
// claims): they run on the host, from the sandbox mount point, as the host
// account asked for, reach the API server with their service account, and
// the kubelet counts them in its metrics. HostProcess containers exist on
// Windows only: there is no Linux twin.
package hostprocess
