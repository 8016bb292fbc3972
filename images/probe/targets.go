package main

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// targetKind is the scheme of a target.
type targetKind string

const (
	kindTCP  targetKind = "tcp"
	kindUDP  targetKind = "udp"
	kindHTTP targetKind = "http"
	kindDNS  targetKind = "dns"
	kindICMP targetKind = "icmp"
)

// target is a parsed connect target.
type target struct {
	kind   targetKind
	host   string // name or IP literal, without IPv6 brackets
	port   string // tcp, udp, http
	url    string // http: the URL to GET
	expect net.IP // dns: ?expect=, nil when absent
}

func (t target) hostPort() string { return net.JoinHostPort(t.host, t.port) }

// parseTarget parses one of
//
//	tcp://HOST:PORT  udp://HOST:PORT  http://HOST[:PORT][/PATH][?QUERY]
//	dns://NAME[?expect=IP]  icmp://HOST
//
// rejecting anything else (other schemes, user info, fragments, stray paths,
// queries or ports) so that a typo fails loudly as invalid-target.
func parseTarget(s string) (target, error) {
	u, err := url.Parse(s)
	if err != nil {
		return target{}, err
	}
	if u.Scheme == "" || u.Opaque != "" {
		return target{}, errors.New("want SCHEME://HOST...")
	}
	if u.User != nil {
		return target{}, errors.New("user info is not supported")
	}
	if u.Fragment != "" || strings.Contains(s, "#") {
		return target{}, errors.New("fragments are not supported")
	}
	t := target{kind: targetKind(u.Scheme), host: u.Hostname(), port: u.Port()}
	if t.host == "" {
		return target{}, errors.New("missing host")
	}
	hasQuery := u.RawQuery != "" || u.ForceQuery
	hasPath := u.Path != "" || u.RawPath != ""
	switch t.kind {
	case kindTCP, kindUDP:
		if err := checkPort(t.port, true); err != nil {
			return target{}, err
		}
		if hasPath || hasQuery {
			return target{}, fmt.Errorf("%s targets take no path or query", t.kind)
		}
	case kindHTTP:
		if err := checkPort(t.port, false); err != nil {
			return target{}, err
		}
		if t.port == "" {
			t.port = "80"
		}
		t.url = u.String()
	case kindDNS:
		if t.port != "" || strings.HasSuffix(u.Host, ":") {
			return target{}, errors.New("dns targets take no port")
		}
		if hasPath {
			return target{}, errors.New("dns targets take no path")
		}
		q, err := url.ParseQuery(u.RawQuery)
		if err != nil {
			return target{}, err
		}
		for key := range q {
			if key != "expect" {
				return target{}, fmt.Errorf("unknown dns query parameter %q (want expect)", key)
			}
		}
		if q.Has("expect") {
			if len(q["expect"]) != 1 {
				return target{}, errors.New("expect must be given once")
			}
			if t.expect = net.ParseIP(q.Get("expect")); t.expect == nil {
				return target{}, fmt.Errorf("expect=%q is not an IP address", q.Get("expect"))
			}
		}
	case kindICMP:
		if t.port != "" || strings.HasSuffix(u.Host, ":") {
			return target{}, errors.New("icmp targets take no port")
		}
		if hasPath || hasQuery {
			return target{}, errors.New("icmp targets take no path or query")
		}
		if ip := net.ParseIP(t.host); ip != nil && ip.To4() == nil {
			return target{}, errors.New("icmp targets must be IPv4")
		}
	default:
		return target{}, fmt.Errorf("unknown scheme %q (want tcp, udp, http, dns or icmp)", u.Scheme)
	}
	return t, nil
}

// checkPort validates a URL port; an empty one is an error only when required.
func checkPort(port string, required bool) error {
	if port == "" {
		if required {
			return errors.New("missing port")
		}
		return nil
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("port %q: want 1..65535", port)
	}
	return nil
}
