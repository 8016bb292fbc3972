// Package resources asserts what the upstream Windows e2e specs
// (test/e2e/windows: memory_limits.go, cpu_limits.go, eviction.go,
// density.go) check of a node's resources (RES claims): allocatable memory
// as the kubelet's configuration makes it, CPU limits enforced as the
// summary API reports them, eviction under memory pressure, and pod
// start-up latency in a batch. Each runs on Windows nodes, with a Linux
// twin where Linux nodes do the same (not eviction: starving a node of
// memory is not done to a Linux twin).
package resources
