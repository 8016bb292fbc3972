// Package observability asserts node and pod statistics, logs and exec for
// Windows and Linux nodes (OBS claims).
package observability
