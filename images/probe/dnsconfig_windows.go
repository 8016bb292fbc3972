package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unsafe"

	"golang.org/x/sys/windows"
	"golang.org/x/sys/windows/registry"
)

// tcpipParameters is the registry key of the resolver's global settings.
const tcpipParameters = `SYSTEM\CurrentControlSet\Services\Tcpip\Parameters`

// readDNSConfig reads the DNS servers of the network adapters that are up
// and the search list: the SearchList value of the TCP/IP parameters (what
// ipconfig shows as the "DNS Suffix Search List"), or, when that is empty,
// the adapters' own suffixes, which the resolver then appends instead.
func readDNSConfig() (dnsConfig, error) {
	servers, suffixes, err := adapterDNS()
	if err != nil {
		return dnsConfig{}, fmt.Errorf("DNS settings of the adapters: %w", err)
	}
	search, err := searchList()
	if err != nil {
		return dnsConfig{}, fmt.Errorf(`HKLM\%s SearchList: %w`, tcpipParameters, err)
	}
	if len(search) == 0 {
		search = suffixes
	}
	return dnsConfig{Servers: servers, Search: search, Source: "windows"}, nil
}

// adapterDNS lists the DNS servers and the DNS suffixes (the connection's
// suffix, then its search list) of the adapters that are up, other than
// loopback, in adapter order and without repeats.
func adapterDNS() (servers, suffixes []string, err error) {
	const flags = windows.GAA_FLAG_SKIP_UNICAST | windows.GAA_FLAG_SKIP_ANYCAST | windows.GAA_FLAG_SKIP_MULTICAST
	size := uint32(15 * 1024) // what Microsoft suggests to start with
	var buf []byte
	for range 4 { // the list can grow between two calls
		buf = make([]byte, size)
		err := windows.GetAdaptersAddresses(windows.AF_UNSPEC, flags, 0, (*windows.IpAdapterAddresses)(unsafe.Pointer(&buf[0])), &size)
		if err == nil {
			break
		}
		if !errors.Is(err, windows.ERROR_BUFFER_OVERFLOW) {
			return nil, nil, fmt.Errorf("GetAdaptersAddresses: %w", err)
		}
		buf = nil
	}
	if buf == nil {
		return nil, nil, errors.New("GetAdaptersAddresses: the adapter list kept growing")
	}
	add := func(list []string, s string) []string {
		if s == "" || slices.Contains(list, s) {
			return list
		}
		return append(list, s)
	}
	for a := (*windows.IpAdapterAddresses)(unsafe.Pointer(&buf[0])); a != nil; a = a.Next {
		if a.OperStatus != windows.IfOperStatusUp || a.IfType == windows.IF_TYPE_SOFTWARE_LOOPBACK {
			continue
		}
		for s := a.FirstDnsServerAddress; s != nil; s = s.Next {
			if ip := s.Address.IP(); ip != nil {
				servers = add(servers, ip.String())
			}
		}
		if a.DnsSuffix != nil {
			suffixes = add(suffixes, windows.UTF16PtrToString(a.DnsSuffix))
		}
		for s := a.FirstDnsSuffix; s != nil; s = s.Next {
			suffixes = add(suffixes, windows.UTF16ToString(s.String[:]))
		}
	}
	return servers, suffixes, nil
}

// searchList reads the SearchList value, a comma-separated list of domains;
// a missing key or value is an empty list.
func searchList() ([]string, error) {
	k, err := registry.OpenKey(registry.LOCAL_MACHINE, tcpipParameters, registry.QUERY_VALUE)
	if errors.Is(err, registry.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer k.Close()
	v, _, err := k.GetStringValue("SearchList")
	if errors.Is(err, registry.ErrNotExist) {
		return nil, nil
	}
	if errors.Is(err, registry.ErrUnexpectedType) {
		// Written as REG_MULTI_SZ by some tools.
		vs, _, merr := k.GetStringsValue("SearchList")
		if merr != nil {
			return nil, merr
		}
		v, err = strings.Join(vs, ","), nil
	}
	if err != nil {
		return nil, err
	}
	return strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' }), nil
}
