// Package identity asserts the identity a Windows container runs as:
// runAsUserName and gMSA (ID claims).
package identity
