// Package identity asserts the identity a Windows container runs as:
// runAsUserName and gMSA (ID claims), with a Linux twin (runAsUser).
//
// The gMSA spec (ID-02) needs an Active Directory domain, Windows nodes
// joined to it, the gMSA admission webhook and a GMSACredentialSpec
// (windows.k8s.io/v1); it runs only when WINCONFORM_GMSA_CREDSPEC names
// that credential spec, and skips (no-active-directory) otherwise.
package identity
