package simmachine

import (
	"strings"
	"testing"
	"time"
)

// reboot takes the machine through a whole reboot.
func reboot(m *Machine) {
	m.mu.Lock()
	m.startReboot()
	m.downUntil = time.Now()
	m.rebooting()
	m.mu.Unlock()
}

// The service control manager's copy of a service's configuration is what
// a start runs; a change of the registry alone reaches it at the next boot
// only, and a running process keeps its command line (MS-SCMR 3.1.4.11;
// what the old kubelet step, which wrote ImagePath, ran into).
func TestTheServiceManagerKeepsItsOwnCopy(t *testing.T) {
	m := New(Config{})
	m.SetFact("service:kubelet", "Automatic/Running")
	m.SetFact("service-command:kubelet", "kubelet --v=2")
	svc := func() Service { s, _ := m.Service("kubelet"); return s }
	if s := svc(); s.ImagePath != "kubelet --v=2" || s.Process != "kubelet --v=2" {
		t.Fatalf("a service as after a boot: %+v", s)
	}

	// A script writes the registry, then restarts the service.
	m.mu.Lock()
	before := m.services()
	sets := map[string]string{"service-imagepath:kubelet": "kubelet --v=4", "service-process:kubelet": "kubelet --v=2"}
	for k, v := range sets {
		m.setFact(k, v)
	}
	m.settleServices(before, sets)
	m.mu.Unlock()
	if s := svc(); s.BinPath != "kubelet --v=2" || s.ImagePath != "kubelet --v=4" || s.Process != "kubelet --v=2" {
		t.Errorf("after a registry edit and a restart: %+v; want the manager and the process unchanged", s)
	}
	reboot(m)
	if s := svc(); s.BinPath != "kubelet --v=4" || s.Process != "kubelet --v=4" || !s.Running {
		t.Errorf("after a reboot: %+v; want the registry's command line read and run", s)
	}

	// Through the manager's API: the registry follows; the process keeps
	// its command line until the service restarts.
	m.mu.Lock()
	before = m.services()
	sets = map[string]string{"service-command:kubelet": "kubelet --v=6"}
	m.setFact("service-command:kubelet", "kubelet --v=6")
	m.settleServices(before, sets)
	m.mu.Unlock()
	if s := svc(); s.BinPath != "kubelet --v=6" || s.ImagePath != "kubelet --v=6" || s.Process != "kubelet --v=4" {
		t.Errorf("after Win32_Service.Change: %+v; want the manager and the registry changed, the process not", s)
	}

	// A case that says a restart runs another command line than the
	// manager's is a problem.
	m.mu.Lock()
	before = m.services()
	sets = map[string]string{"service-process:kubelet": "kubelet --v=8"}
	m.setFact("service-process:kubelet", "kubelet --v=8")
	m.settleServices(before, sets)
	m.mu.Unlock()
	if p := m.Problems(); len(p) != 1 || !strings.Contains(p[0], "the service control manager's command line") {
		t.Errorf("problems %v", p)
	}

	// A shutdown stops the process; a deleted service takes its
	// configuration along.
	reboot(m)
	m.mu.Lock()
	before = m.services()
	m.setFact("service:kubelet", "")
	m.settleServices(before, map[string]string{"service:kubelet": ""})
	m.mu.Unlock()
	for _, kind := range []string{"service-command:", "service-imagepath:", "service-process:"} {
		if v := m.Fact(kind + "kubelet"); v != "" {
			t.Errorf("the deleted service's %s is %q", kind, v)
		}
	}
}
