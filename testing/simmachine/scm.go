package simmachine

import (
	"fmt"
	"strings"
)

// The service control manager keeps its own copy of each service's
// configuration, in memory. It reads the registry
// (HKLM\SYSTEM\CurrentControlSet\Services\<name>, ImagePath for the
// command line) at boot; its API (CreateService and ChangeServiceConfig,
// which New-Service, Win32_Service.Change and sc.exe config call) changes
// its copy and the registry together (MS-SCMR 3.1.4.11 RChangeServiceConfigW
// "changes a service's configuration parameters in the SCM database").
// Win32_Service's PathName and sc.exe qc report its copy, and a start runs
// its copy: a script that writes ImagePath into the registry changes
// neither until the next boot. A running process keeps the command line it
// was started with until it stops.
//
// The facts: service-command:NAME is the manager's copy,
// service-imagepath:NAME the registry's, service-process:NAME the running
// process's. Case data states what a script changes; the machine keeps the
// rest as Windows does (settleServices, bootServices).

// svc is a service as the machine holds it.
type svc struct {
	exists, running             bool
	command, imagepath, process string
}

// services returns every service, the registry's command line and the
// process's filled in where no fact states them (a machine staged by a
// test, as after a boot). m.mu must be held.
func (m *Machine) services() map[string]svc {
	out := map[string]svc{}
	for k, v := range m.facts {
		name, ok := strings.CutPrefix(k, "service:")
		if !ok || v == "" {
			continue
		}
		s := svc{exists: true, running: strings.HasSuffix(v, "/Running"), command: m.facts["service-command:"+name]}
		s.imagepath = m.facts["service-imagepath:"+name]
		if s.imagepath == "" {
			s.imagepath = s.command
		}
		s.process = m.facts["service-process:"+name]
		if s.process == "" && s.running {
			s.process = s.command
		}
		out[name] = s
	}
	return out
}

// settleServices does, after a step changed the facts sets (before is the
// services as they were), what Windows does besides: a service deleted
// takes its configuration along; the SCM's API writes the registry too; a
// service started runs the SCM's command line, one that kept running keeps
// its process, one stopped has none. A case that states a process Windows
// would not run is a problem. m.mu must be held.
func (m *Machine) settleServices(before map[string]svc, sets map[string]string) {
	after := m.services()
	for name := range before {
		if _, ok := after[name]; !ok {
			for _, kind := range []string{"service-command:", "service-imagepath:", "service-process:", "service-deps:"} {
				delete(m.facts, kind+name)
			}
		}
	}
	for name, a := range after {
		b, existed := before[name]
		img := b.imagepath
		if v, ok := sets["service-imagepath:"+name]; ok {
			img = v
		} else if _, ok := sets["service-command:"+name]; ok || !existed {
			img = a.command
		}
		proc := ""
		if v, ok := sets["service-process:"+name]; ok {
			proc = v
			switch {
			case a.running && v != a.command:
				m.problems = append(m.problems, fmt.Sprintf("service %s: a case says its process runs %q, but Windows starts a service with the service control manager's command line, %q", name, v, a.command))
			case !a.running && v != "":
				m.problems = append(m.problems, fmt.Sprintf("service %s is stopped, but a case says its process runs %q", name, v))
			}
		} else if a.running {
			proc = a.command
			if b.running {
				proc = b.process
			}
		}
		if why := m.kubeletRefuses(proc); why != "" && proc != b.process {
			// The process exits at once: the service stops (the
			// service control manager logs event 7034).
			m.problems = append(m.problems, fmt.Sprintf("service %s stops as it starts: %s", name, why))
			m.facts["service:"+name] = strings.TrimSuffix(m.facts["service:"+name], "/Running") + "/Stopped"
			proc = ""
		}
		m.setFact("service-imagepath:"+name, img)
		m.setFact("service-process:"+name, proc)
	}
}

// bootServices is the service control manager starting at boot: it reads
// every service's configuration from the registry, and the automatic
// services start with it. m.mu must be held.
func (m *Machine) bootServices() {
	for name, s := range m.services() {
		m.setFact("service-command:"+name, s.imagepath)
		proc := ""
		if strings.HasPrefix(m.facts["service:"+name], "Automatic/") {
			m.facts["service:"+name] = "Automatic/Running"
			proc = s.imagepath
		}
		m.setFact("service-process:"+name, proc)
	}
}

// stopServices is a shutdown: every service stops. m.mu must be held.
func (m *Machine) stopServices() {
	for k, v := range m.facts {
		if start, ok := strings.CutSuffix(v, "/Running"); ok && strings.HasPrefix(k, "service:") {
			m.facts[k] = start + "/Stopped"
			m.setFact("service-process:"+strings.TrimPrefix(k, "service:"), "")
		}
	}
}
