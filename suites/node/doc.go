// Package node asserts what the upstream Windows e2e specs (test/e2e/windows:
// node_shutdown.go, reboot_node.go) check of a Windows node's life cycle
// (NODE claims): graceful shutdown ends pods in order of criticality within
// their grace periods, and a node rebooted from a HostProcess pod comes
// back with its pods. Both shut a real Windows machine down: they need the
// machine in the inventory (--inventory), which they watch over WinRM,
// and --disruptive; they run alone (Serial).
package node
