// Package config is the harness's configuration API: the Go types of every
// file a user writes (Cluster, Inventory, Machines: the VM file, with its
// provider's block; GatePolicy; ImageOverrides) and their one loader.
//
// Load and Parse decode a file strictly (an unknown key, with the nearest
// known one, a key written twice, a value of the wrong type, a secret
// written inline are refused), remembering the line of every value; then
// give it its defaults and check it, and return every problem at once in
// one *Error: a field.ErrorList, each problem with its file, line, field
// path and fix. A file may name apiVersion: winconform.io/v1alpha1 and its
// kind; a file that names neither is read as v1alpha1. docs/config.md
// describes the files and the errors.
//
// Secrets are only ever referenced (SecretRef: an environment variable or
// a file), and read when the file is loaded. The providers of VMs are
// registered here, in one registry (RegisterProvider; infra/vms.Register
// calls it): each one's name, what its connection takes, the Go type of
// its block of the VM file, which the loader decodes the block into and
// calls the Check of, and how to open it (Provider.Open, opaque to config,
// which is below infra/vms and never calls it; vms.Open does).
package config
