package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"sync/atomic"
	"time"
)

// The resource tools let specs observe what limits do to a container: fill
// writes into a volume (memory-backed or not), alloc takes memory (past a
// limit, the kernel's OOM killer or the job object's limit stops it), burn
// keeps CPUs busy (past a limit, the CPU is throttled).

const mib = 1 << 20

// runFill writes MIB mebibytes to file PATH, then syncs it; exit 1 with the
// OS error (a full or read-only volume, say).
func runFill(args []string, stdout, stderr io.Writer) int {
	if len(args) != 2 {
		fmt.Fprintln(stderr, "probe fill: want a path and a size in MiB")
		return exitUsage
	}
	n, err := strconv.Atoi(args[1])
	if err != nil || n < 0 {
		fmt.Fprintf(stderr, "probe fill: size %q is not a number of MiB\n", args[1])
		return exitUsage
	}
	f, err := os.Create(args[0])
	if err != nil {
		fmt.Fprintf(stderr, "probe fill: %v\n", err)
		return exitFailure
	}
	block := make([]byte, mib)
	for i := range block {
		block[i] = byte(i) | 1 // not zeros: nothing may store it sparsely
	}
	for i := 0; i < n; i++ {
		if _, err := f.Write(block); err != nil {
			f.Close()
			fmt.Fprintf(stderr, "probe fill: after %d MiB: %v\n", i, err)
			return exitFailure
		}
	}
	if err := f.Sync(); err != nil {
		f.Close()
		fmt.Fprintf(stderr, "probe fill: %v\n", err)
		return exitFailure
	}
	if err := f.Close(); err != nil {
		fmt.Fprintf(stderr, "probe fill: %v\n", err)
		return exitFailure
	}
	fmt.Fprintf(stdout, "{\"path\":%q,\"mib\":%d}\n", args[0], n)
	return exitOK
}

// runAlloc takes MIB mebibytes of memory, touching every page, reports each
// 16 MiB on stdout as it goes (so that a process killed half way shows how
// far it got), holds it for --hold, and prints the total. A limit stops it
// from outside: the OOM killer (Linux), an allocation failure (a Windows
// job object), which Go reports as "out of memory".
func runAlloc(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("alloc")
	hold := fs.Duration("hold", 0, "how long to keep the memory")
	if err := fs.Parse(args); err != nil {
		return reportArgsError("alloc", err, stdout, stderr)
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "probe alloc: want a size in MiB")
		return exitUsage
	}
	n, err := strconv.Atoi(fs.Arg(0))
	if err != nil || n <= 0 {
		fmt.Fprintf(stderr, "probe alloc: size %q is not a number of MiB\n", fs.Arg(0))
		return exitUsage
	}
	// Return nothing to the OS early, and let the GC not count on freeing it.
	debug.SetGCPercent(-1)
	var chunks [][]byte
	for i := 0; i < n; i++ {
		c := make([]byte, mib)
		for j := 0; j < len(c); j += 4096 {
			c[j] = 1
		}
		chunks = append(chunks, c)
		if (i+1)%16 == 0 {
			fmt.Fprintf(stdout, "{\"allocatedMiB\":%d}\n", i+1)
		}
	}
	time.Sleep(*hold)
	runtime.KeepAlive(chunks)
	fmt.Fprintf(stdout, "{\"allocatedMiB\":%d,\"done\":true}\n", len(chunks))
	return exitOK
}

// burnResult is what burn prints.
type burnResult struct {
	Threads int     `json:"threads"`
	Seconds float64 `json:"seconds"`
	// CPUSeconds is the CPU time the process used, where the OS tells
	// (Linux: /proc/self/stat), else 0.
	CPUSeconds float64 `json:"cpuSeconds"`
	Loops      uint64  `json:"loops"`
}

// runBurn keeps --threads goroutines busy for --seconds and prints the CPU
// time it got: under a CPU limit, less than threads x seconds.
func runBurn(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("burn")
	threads := fs.Int("threads", 2, "busy goroutines")
	seconds := fs.Duration("for", 5*time.Second, "how long")
	if err := fs.Parse(args); err != nil {
		return reportArgsError("burn", err, stdout, stderr)
	}
	if fs.NArg() != 0 || *threads < 1 || *seconds <= 0 {
		fmt.Fprintln(stderr, "probe burn: want --threads N (>= 1) and --for DURATION (> 0), no arguments")
		return exitUsage
	}
	runtime.GOMAXPROCS(*threads)
	var loops atomic.Uint64
	deadline := time.Now().Add(*seconds)
	done := make(chan struct{})
	for i := 0; i < *threads; i++ {
		go func() {
			var n uint64
			for time.Now().Before(deadline) {
				for k := 0; k < 10000; k++ {
					n++
				}
			}
			loops.Add(n)
			done <- struct{}{}
		}()
	}
	start := time.Now()
	for i := 0; i < *threads; i++ {
		<-done
	}
	json.NewEncoder(stdout).Encode(burnResult{Threads: *threads, Seconds: time.Since(start).Seconds(), CPUSeconds: cpuSeconds(), Loops: loops.Load()})
	return exitOK
}
