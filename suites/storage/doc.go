// Package storage asserts hostPath, emptyDir and PersistentVolume behaviour
// (VOL claims) on Windows and Linux.
package storage
