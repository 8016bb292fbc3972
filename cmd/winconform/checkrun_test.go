package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/winconform/winconform/testing/vmstest"
)

// vms up --check is vms up's own validation (issue 38): each VM file or
// flag the run refuses, --check refuses with the same message, and both
// before the provider is contacted (its endpoint does not answer: a
// contact would end in "cannot reach"). Before, --check took a containerd
// of 9.9.9 and a kubelet patch that does not exist, which the join refused
// once the machines were made.
func TestVMsUpCheckIsTheRunsValidation(t *testing.T) {
	dir := t.TempDir()
	vmsDir = filepath.Join(dir, "runs")
	t.Setenv("WINCONFORM_TEST_PASSWORD", "pw")
	fake := vmstest.New()
	defer vmstest.Serve("checkrun", fake)()
	aFile := filepath.Join(dir, "a-file")
	write(t, aFile, "not a directory")
	block := func(extra string) string {
		return "provider: fake\nconnection: {endpoint: fake://nowhere}\nimage: golden\ncount: 1\nmachine:\n  user: Administrator\n  passwordFrom: {env: WINCONFORM_TEST_PASSWORD}\n" + extra
	}
	for _, tc := range []struct {
		name, file string
		args       []string
		want       string
	}{
		{"containerd no release", block("  containerdVersion: 9.9.9\n"), nil, "containerd 9.9.9 is no release the harness knows"},
		{"kubelet patch that does not exist", block("  kubeletVersion: v1.36.99\n"), nil, "v1.36.99 is no 1.36 release the harness knows"},
		{"kubelet of no supported line", block("  kubeletVersion: v1.30.2\n"), nil, "older than the oldest line"},
		{"kubelet not a version", block("  kubeletVersion: latest\n"), nil, "is not a Kubernetes version"},
		{"containerd 1.x with a 1.37 kubelet", block("  kubeletVersion: v1.37.2\n  containerdVersion: 1.7.28\n"), nil, "containerd 1.7.28"},
		{"containerd pre-release", block("  containerdVersion: 2.3.0-rc.1\n"), nil, "is not a containerd version"},
		{"--dir a file", block(""), []string{"--dir", aFile}, aFile + " is not a directory"},
		{"--parallel 0", block(""), []string{"--parallel", "0"}, `"0" for "--parallel" flag`},
		{"bad run ID", block(""), []string{"--run-id", "Nightly_1"}, "--run-id"},
		{"zero count", strings.Replace(block(""), "count: 1", "count: 0", 1), nil, "count: 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, "vms.yaml")
			write(t, path, tc.file)
			var msgs [2]string
			for i, check := range []bool{true, false} {
				args := append([]string{"up", "--vms", path}, tc.args...)
				if check {
					args = append(args, "--check")
				}
				_, _, err := runVMs(t, args...)
				if err == nil {
					t.Fatalf("check %v: refused nothing", check)
				}
				msgs[i] = err.Error()
				if !strings.Contains(msgs[i], tc.want) || strings.Contains(msgs[i], "cannot reach") {
					t.Errorf("check %v: %v, want %q before the provider", check, err, tc.want)
				}
			}
			if msgs[0] != msgs[1] {
				t.Errorf("--check and the run disagree:\n--check: %s\nrun:     %s", msgs[0], msgs[1])
			}
			if fake.Creates() != 0 {
				t.Errorf("%d machine(s) made", fake.Creates())
			}
		})
	}
	// A file both accept gets past the check to the provider in the run.
	path := filepath.Join(dir, "vms.yaml")
	write(t, path, block("  kubeletVersion: v1.36.3\n  containerdVersion: 2.3.7\n"))
	if _, errOut, err := runVMs(t, "up", "--check", "--vms", path); err != nil || !strings.Contains(errOut, "can be used") {
		t.Errorf("--check of a good file: %v %s", err, errOut)
	}
	if _, _, err := runVMs(t, "up", "--vms", path); err == nil || !strings.Contains(err.Error(), "cannot reach") {
		t.Errorf("the run of a good file should reach for the provider: %v", err)
	}
}

// e2e --check is e2e's own validation: what the run refuses before any
// cluster work, --check refuses with the same line (the run and --check
// are one RunE, which stops after the checks with --check).
func TestE2ECheckIsTheRunsValidation(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("WINCONFORM_TEST_PASSWORD", "pw")
	cluster := filepath.Join(dir, "hybrid.yaml")
	write(t, cluster, "name: hybrid\nkubernetesVersion: v1.36.3\nnetworking:\n  apiServerAddress: 192.0.2.10\n")
	vmFile := filepath.Join(dir, "vms.yaml")
	inv := filepath.Join(dir, "inv.yaml")
	for _, tc := range []struct {
		name, machine string
		args          []string
		want          string
	}{
		{"VM file: containerd no release", "containerdVersion: 9.9.9", []string{"--vms", vmFile}, "containerd 9.9.9 is no release"},
		{"VM file: kubelet patch that does not exist", "kubeletVersion: v1.36.99", []string{"--vms", vmFile}, "v1.36.99 is no 1.36 release"},
		{"inventory: containerd no release", "containerdVersion: 9.9.9", []string{"--inventory", inv}, "containerd 9.9.9 is no release"},
		{"inventory: kubelet patch that does not exist", "kubeletVersion: v1.36.99", []string{"--inventory", inv}, "v1.36.99 is no 1.36 release"},
		{"pass-through: a report file", "", []string{"--", "--ginkgo.junit-report=" + filepath.Join(dir, "F")}, "use winconform e2e --junit-file"},
		{"pass-through: a bare word", "", []string{"--", "networking"}, `"networking" is not a flag`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			write(t, vmFile, "provider: libvirt\nimage: golden\ncount: 1\nmachine: {user: Administrator, passwordFrom: {env: WINCONFORM_TEST_PASSWORD}, underlay: {shape: none}, "+tc.machine+"}\n")
			write(t, inv, "machines:\n  - {name: w1, address: 192.0.2.5, user: Administrator, passwordFrom: {env: WINCONFORM_TEST_PASSWORD}, underlay: {shape: none}, "+tc.machine+"}\n")
			bin, _ := fakeSuiteBinary(t, 3)
			s := newStandIns(t)
			var lines [2]string
			for i, mode := range []string{"--check", "--delete-cluster"} {
				code, stderr := s.run(t, append([]string{"e2e", "--suite-binary", bin, "--config", cluster, mode}, tc.args...)...)
				if code != exitUsage || !strings.Contains(stderr, tc.want) {
					t.Errorf("%s: exit %d, want 2 and %q: %s", mode, code, tc.want, stderr)
				}
				lines[i] = stderr
			}
			if lines[0] != lines[1] {
				t.Errorf("--check and the run disagree:\n--check: %s\nrun:     %s", lines[0], lines[1])
			}
			if c := s.calls(t); c != "" {
				t.Errorf("contacted before the refusal: %s", c)
			}
			if _, err := os.Stat(filepath.Join(dir, "F")); err == nil {
				t.Error("the report file was written")
			}
		})
	}
}

// Commands read their own input before they contact Docker, a provider or
// the sonobuoy CLI (issue 38: vms up --dir FILE, underlay check, sonobuoy
// run --claim NET-99 contacted them first): stand-ins on PATH record any
// call, and none is made before the refusal (exit 2).
func TestOwnInputBeforeAnyContact(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("WINCONFORM_TEST_PASSWORD", "pw")
	vmsDir = filepath.Join(dir, "runs")
	aFile := filepath.Join(dir, "a-file")
	write(t, aFile, "x")
	vmFile := filepath.Join(dir, "vms.yaml")
	write(t, vmFile, "provider: libvirt\nconnection: {endpoint: \"qemu:///system\"}\nimage: golden\ncount: 1\nmachine: {user: Administrator, passwordFrom: {env: WINCONFORM_TEST_PASSWORD}}\n")
	badInv := filepath.Join(dir, "inv.yaml")
	write(t, badInv, "machines:\n  - nmae: w1\n")
	badCluster := filepath.Join(dir, "cluster.yaml")
	write(t, badCluster, "name: x\nkubernetesVersoin: v1.37.2\n")
	bin, calls := fakeSuiteBinary(t, 3)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"vms", "up", "--vms", vmFile, "--dir", aFile}, "is not a directory"},
		{[]string{"underlay", "check", "--inventory", badInv}, "--inventory"},
		{[]string{"underlay", "check", "--config", badCluster}, "kubernetesVersoin"},
		{[]string{"underlay", "check", "--out", dir}, "is a directory"},
		{[]string{"sonobuoy", "run", "--suite-binary", bin, "--claim", "NET-99"}, `unknown claim "NET-99"`},
		{[]string{"sonobuoy", "run", "--suite-binary", bin, "--", "--ginkgo.timeout=1h"}, "the harness sets -ginkgo.timeout itself"},
		{[]string{"e2e", "--suite-binary", bin, "--", "--ginkgo.json-report=" + aFile}, "the harness sets -ginkgo.json-report itself"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			s := newStandIns(t)
			code, stderr := s.run(t, tc.args...)
			if code != exitUsage || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, want 2 and %q: %s", code, tc.want, stderr)
			}
			if c := s.calls(t); c != "" {
				t.Errorf("contacted before the refusal: %s", c)
			}
		})
	}
	if got := calls(); len(got) > 0 && strings.Contains(strings.Join(got, " "), "NET-99") {
		t.Errorf("the suite binary ran for an unknown claim: %q", got)
	}
}

// A password inside the provider's URL is refused by vms up --check and
// by vms up alike, before the provider is contacted, and neither prints it.
func TestVMsUpRefusesAPasswordInTheURLWithoutSayingIt(t *testing.T) {
	const pw = "Url-Passw0rd-3c9d"
	dir := t.TempDir()
	vmsDir = filepath.Join(dir, "runs")
	t.Setenv("WINCONFORM_TEST_PASSWORD", "pw")
	file := filepath.Join(dir, "vms.yaml")
	write(t, file, "provider: libvirt\nconnection: {endpoint: \"qemu+ssh://root:"+pw+"@kvm.lab/system\"}\nimage: golden\ncount: 1\nmachine: {user: Administrator, passwordFrom: {env: WINCONFORM_TEST_PASSWORD}}\n")
	s := newStandIns(t)
	for _, mode := range [][]string{{"--check"}, nil} {
		code, stderr := s.run(t, append([]string{"vms", "up", "--vms", file}, mode...)...)
		if code != exitUsage || !strings.Contains(stderr, "connection.endpoint: holds a password inside a URL") || strings.Contains(stderr, pw) {
			t.Errorf("vms up %v: exit %d, want 2 naming connection.endpoint, without the password: %s", mode, code, stderr)
		}
	}
	if c := s.calls(t); c != "" {
		t.Errorf("contacted before the refusal: %s", c)
	}
}
