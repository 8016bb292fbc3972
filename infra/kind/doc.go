// Package kind makes and removes the harness's local clusters with kind's Go
// API (sigs.k8s.io/kind/pkg/cluster): a Linux control plane and Linux
// workers, flannel in place of kind's own CNI, an API server address and
// certificate names that remote Windows machines can use, and the node image
// pulled where a registry answers or built locally where none does.
package kind
