// Package workloads asserts the documented Windows web server (WEB claims)
// and its Linux twin, deployed from the embedded fixtures.
package workloads
