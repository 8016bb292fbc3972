// Package config asserts Secrets and ConfigMaps consumed by containers, as
// environment variables and as volumes (CFG claims), on Windows and Linux.
package config
