// Package scheduling asserts how the control plane places Windows and Linux
// pods (SCH claims), on real Windows nodes or on simulated ones (kwok).
package scheduling
