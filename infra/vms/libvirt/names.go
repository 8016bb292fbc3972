package libvirt

import (
	"crypto/rand"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"
)

// What the provider keeps in its pool is named so that a machine whose
// domain is gone (a run killed between making the overlay and the domain,
// or a guest that crashed: a transient domain ends with its QEMU) is still
// found, with its run, by List, and removed by Delete:
//
//	winconform_<run>_<created unix>_<uuid>_<name>_<address or dhcp>.qcow2   the overlay
//	winconform_<run>_<created unix>_<uuid>_<name>_<address or dhcp>.log     the serial console
//	winconform-ip_<address>                                                 an address held (dockerNetwork)
//
// Runs and names are DNS labels and UUIDs hex with hyphens: none holds an
// underscore. An address is held by making its volume, which libvirt
// refuses when it exists: two runs (or two hosts' harnesses) never hand
// out one address twice.
const (
	volumePrefix = "winconform_"
	leasePrefix  = "winconform-ip_"
	overlayExt   = ".qcow2"
	consoleExt   = ".log"
	dhcpAddress  = "dhcp"
)

// volumeName is a machine's volume's name (without the extension).
type volumeName struct {
	runID   string
	created time.Time
	uuid    string
	name    string
	address string // "" for a libvirt network's DHCP
}

func (v volumeName) base() string {
	addr := v.address
	if addr == "" {
		addr = dhcpAddress
	}
	return strings.Join([]string{strings.TrimSuffix(volumePrefix, "_"), v.runID, strconv.FormatInt(v.created.Unix(), 10), v.uuid, v.name, addr}, "_")
}

// parseVolume reads a volume name the provider made; ok is false for any
// other volume (a golden image, another tool's).
func parseVolume(s string) (v volumeName, ext string, ok bool) {
	for _, e := range []string{overlayExt, consoleExt} {
		if strings.HasSuffix(s, e) {
			ext = e
		}
	}
	if ext == "" || !strings.HasPrefix(s, volumePrefix) {
		return v, "", false
	}
	parts := strings.Split(strings.TrimSuffix(s, ext), "_")
	if len(parts) != 6 {
		return v, "", false
	}
	unix, err := strconv.ParseInt(parts[2], 10, 64)
	if err != nil {
		return v, "", false
	}
	if _, err := parseUUID(parts[3]); err != nil {
		return v, "", false
	}
	v = volumeName{runID: parts[1], created: time.Unix(unix, 0).UTC(), uuid: parts[3], name: parts[4], address: parts[5]}
	if v.address == dhcpAddress {
		v.address = ""
	} else if _, err := netip.ParseAddr(v.address); err != nil {
		return v, "", false
	}
	return v, ext, true
}

func leaseName(addr netip.Addr) string { return leasePrefix + addr.String() }

// newUUID returns a random (version 4) UUID.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return formatUUID(b)
}

func formatUUID(b [16]byte) string {
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// parseUUID reads a UUID in its usual form.
func parseUUID(s string) (golibvirt.UUID, error) {
	var u golibvirt.UUID
	hex := strings.ReplaceAll(s, "-", "")
	if len(s) != 36 || len(hex) != 32 {
		return u, fmt.Errorf("%q is not a libvirt domain's UUID", s)
	}
	for i := range u {
		v, err := strconv.ParseUint(hex[2*i:2*i+2], 16, 8)
		if err != nil {
			return u, fmt.Errorf("%q is not a libvirt domain's UUID", s)
		}
		u[i] = byte(v)
	}
	return u, nil
}
