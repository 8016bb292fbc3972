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
// a file), and read when the file is loaded. A provider of VMs registers
// the Go type of its block of the VM file (RegisterProvider); the loader
// decodes the block into it and calls its Check.
package config
