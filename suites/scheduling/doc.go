// Package scheduling asserts how the control plane places Windows and Linux
// pods (SCH claims), on real Windows nodes or, where the cluster has none, on
// two simulated ones (kwok, --kwok-binary) of builds 10.0.17763 and
// 10.0.20348 that exist only while the suite's Ordered container runs.
// Specs that need a Windows kubelet skip on simulated nodes.
package scheduling
