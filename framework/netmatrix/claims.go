package netmatrix

import "slices"

// Which cells the matrix probes, and which documented claims each cell
// evidences (the NET claims of framework/claims).

// Applicable says whether src probes t: not itself; names only from pods
// (nodes and the outside client do not use the cluster's DNS); the client
// outside the cluster only NodePorts; NodePorts only from outside or from
// nodes; ICMP only between pods.
func Applicable(src Peer, t Target) bool {
	if t.Kind == src.Kind && t.Name == src.Name {
		return false
	}
	byName := t.Mode == PodName || t.Mode == ServiceName || t.Mode == ServiceFQDN
	switch src.Kind {
	case Pod:
		return t.Mode != NodePort
	case Node:
		return !byName && t.Mode != Ping
	case External:
		return t.Mode == NodePort
	}
	return false
}

// podToPod are the pod-to-pod claims by (source OS, target OS), by IP and by name.
var podToPod = map[[2]string][2]string{
	{"windows", "windows"}: {"NET-01", "NET-02"},
	{"windows", "linux"}:   {"NET-03", "NET-04"},
	{"linux", "windows"}:   {"NET-05", "NET-06"},
	{"linux", "linux"}:     {"NET-07", "NET-08"},
}

// podToService are the claims of a pod reaching a Service, by (pod OS,
// endpoints' OS), through the ClusterIP and through the name.
var podToService = map[[2]string][2]string{
	{"linux", "windows"}:   {"NET-09", "NET-10"},
	{"windows", "linux"}:   {"NET-11", "NET-12"},
	{"windows", "windows"}: {"NET-13", "NET-13"},
}

// ClaimsFor returns the claims the cell (src, t) evidences; none for a
// control cell.
func ClaimsFor(src Peer, t Target) []string {
	var out []string
	add := func(ids ...string) {
		for _, id := range ids {
			if id != "" && !slices.Contains(out, id) {
				out = append(out, id)
			}
		}
	}
	switch src.Kind {
	case Pod:
		switch {
		case t.Kind == Pod && t.Mode == Ping:
			if src.Node != t.Node {
				add("NET-25")
			}
		case t.Kind == Pod:
			ids := podToPod[[2]string{src.OS, t.OS}]
			if t.Mode == PodIP {
				add(ids[0])
			} else {
				add(ids[1])
			}
		case t.Kind == Service:
			ids := podToService[[2]string{src.OS, t.OS}]
			switch t.Mode {
			case ClusterIP:
				add(ids[0])
			case ServiceName:
				add(ids[1])
			case ServiceFQDN:
				add(ids[1], "NET-20")
			}
		case t.Kind == External && src.OS == "linux":
			add("NET-16")
		case t.Kind == External && src.OS == "windows":
			add("NET-17")
		}
	case Node:
		switch {
		case src.OS == "linux" && src.ControlPlane && t.OS == "windows" && t.Kind == Pod && t.Mode == PodIP:
			add("NET-18")
		case src.OS == "linux" && src.ControlPlane && t.OS == "windows" && t.Kind == Service && t.Mode == ClusterIP:
			add("NET-19")
		case src.OS == "windows" && t.Kind == Service && t.Mode == ClusterIP && slices.Contains(t.BackendNodes, src.Node):
			add("NET-21")
		case src.OS == "windows" && t.Mode == NodePort && t.Via == src.Node:
			add("NET-27")
		}
	case External:
		if t.Mode == NodePort && t.ViaOS == "windows" {
			add("NET-14")
		}
		if t.Mode == NodePort && t.ViaOS == "linux" {
			add("NET-15")
		}
	}
	return out
}
