package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestFill(t *testing.T) {
	p := filepath.Join(t.TempDir(), "big")
	code, out, errOut := runTool(t, "fill", p, "3")
	if code != exitOK || !strings.Contains(out, `"mib":3`) {
		t.Fatalf("fill = %d %q %q", code, out, errOut)
	}
	fi, err := os.Stat(p)
	if err != nil || fi.Size() != 3*mib {
		t.Errorf("file %v, size %d, want 3 MiB", err, fi.Size())
	}
	data, _ := os.ReadFile(p)
	zeros := 0
	for _, b := range data {
		if b == 0 {
			zeros++
		}
	}
	if zeros != 0 {
		t.Errorf("%d zero bytes: a file of zeros may be stored sparsely", zeros)
	}
	if code, _, errOut := runTool(t, "fill", filepath.Join(p, "under-a-file"), "1"); code != exitFailure || !strings.Contains(errOut, "probe fill:") {
		t.Errorf("fill under a file: %d %q", code, errOut)
	}
	for _, args := range [][]string{{"fill"}, {"fill", p}, {"fill", p, "lots"}, {"fill", p, "-1"}} {
		if code, _, _ := runTool(t, args...); code != exitUsage {
			t.Errorf("%q: exit %d, want %d", args, code, exitUsage)
		}
	}
}

func TestAlloc(t *testing.T) {
	code, out, errOut := runTool(t, "alloc", "32")
	if code != exitOK {
		t.Fatalf("alloc = %d %q", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || lines[0] != `{"allocatedMiB":16}` || lines[2] != `{"allocatedMiB":32,"done":true}` {
		t.Errorf("alloc printed %q: want progress every 16 MiB, then the total", lines)
	}
	for _, args := range [][]string{{"alloc"}, {"alloc", "0"}, {"alloc", "x"}, {"alloc", "--hold=never", "1"}} {
		if code, _, _ := runTool(t, args...); code != exitUsage {
			t.Errorf("%q: exit %d, want %d", args, code, exitUsage)
		}
	}
}

func TestBurn(t *testing.T) {
	code, out, errOut := runTool(t, "burn", "--threads=1", "--for=300ms")
	if code != exitOK {
		t.Fatalf("burn = %d %q", code, errOut)
	}
	var r burnResult
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("burn printed %q: %v", out, err)
	}
	if r.Threads != 1 || r.Seconds < 0.3 || r.Loops == 0 {
		t.Errorf("burn = %+v", r)
	}
	if runtime.GOOS == "linux" && r.CPUSeconds <= 0 {
		t.Errorf("burn on Linux reported no CPU time: %+v", r)
	}
	for _, args := range [][]string{{"burn", "--threads=0"}, {"burn", "--for=0s"}, {"burn", "extra"}} {
		if code, _, _ := runTool(t, args...); code != exitUsage {
			t.Errorf("%q: exit %d, want %d", args, code, exitUsage)
		}
	}
}
