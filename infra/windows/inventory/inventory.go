package inventory

import (
	"crypto/x509"
	"errors"
	"io/fs"
	"net"
	"os"
	"strconv"

	corev1 "k8s.io/api/core/v1"
)

// Inventory is a loaded and validated inventory file: every machine has its
// defaults applied, its password read and its CA bundle loaded.
type Inventory struct {
	// Path is the inventory file, as given to Load or Parse.
	Path string `json:"path"`
	// Machines are in file order; their names are unique.
	Machines []Machine `json:"machines"`
}

// Machine is one Windows machine to join to the cluster.
type Machine struct {
	// Name is the machine's Kubernetes node name: a lower-case DNS label.
	Name string `json:"name"`
	// Address is the machine's IP address or DNS name.
	Address string `json:"address"`
	// NodeIP is the node's address on the cluster's network, "" for the
	// kubelet's own choice (the interface of the default route). On a
	// machine with several network interfaces it says which one the node
	// uses: the kubelet gets it as --node-ip (through kubeadm, which writes
	// it into kubeadm-flags.env), and flannel takes the interface that holds
	// it.
	NodeIP string `json:"nodeIP,omitempty"`
	// WinRM is how to reach the machine.
	WinRM WinRM `json:"winrm"`
	// User is the account WinRM logs in as.
	User string `json:"user"`
	// Password is the account's password. It prints and encodes as
	// "********"; use Password.Reveal() to send it.
	Password Secret `json:"password"`
	// PasswordFrom says where Password was read from.
	PasswordFrom PasswordSource `json:"passwordFrom"`
	// ExpectedBuild is the Windows build the machine must have; zero when
	// the inventory sets none.
	ExpectedBuild Build `json:"expectedBuild,omitzero"`
	// Labels are node labels to apply.
	Labels map[string]string `json:"labels,omitempty"`
	// Taints are node taints to apply.
	Taints []corev1.Taint `json:"taints,omitempty"`
	// Binaries maps a component (containerd, kubelet...) to where its
	// binaries come from: an http(s) URL, or an absolute path on the machine.
	Binaries map[string]string `json:"binaries,omitempty"`
	// KubeletVersion is the version of the node's kubelet (and kubeadm and
	// kube-proxy), such as v1.36.3, when it is not the cluster's: the
	// version binaries.kubelet (or binaries.kubernetes) holds, or the one
	// the join downloads from dl.k8s.io. "" for the version the sources
	// name, else the cluster's.
	KubeletVersion string `json:"kubeletVersion,omitempty"`
	// ContainerdVersion is the version of containerd the node runs, such as
	// 2.3.7: the version binaries.containerd holds, or the one the join
	// downloads from containerd's releases. "" for the version the source
	// names, else the harness's default (kubelines.DefaultContainerd).
	ContainerdVersion string `json:"containerdVersion,omitempty"`
	// DefenderExclusions asks for Microsoft Defender exclusions for the
	// node's directories and processes.
	DefenderExclusions bool `json:"defenderExclusions"`
	// CloudMetadataRoute asks for the host's route to the cloud's instance
	// metadata service, 169.254.169.254, for a machine in a cloud.
	CloudMetadataRoute bool `json:"cloudMetadataRoute"`
	// PrepullImages asks the join to pull the node's images into containerd
	// (from where the image overrides point: a mirror), before the node
	// needs them; binaries.images names an archive of them to import first.
	PrepullImages bool `json:"prepullImages"`
	// Underlay is how the machine reaches the kind network (infra/underlay).
	Underlay Underlay `json:"underlay,omitzero"`
}

// Underlay says how a machine reaches the kind network: its shape (routed,
// same-host or none; "" for the default, routed) and the kind host's
// address it routes through ("" for this host's address toward it).
type Underlay struct {
	Shape string `json:"shape,omitempty"`
	Via   string `json:"via,omitempty"`
}

// Auth is a WinRM authentication method.
type Auth string

// The WinRM authentication methods.
const (
	// AuthNTLM is NTLM: local or domain accounts, every message sealed
	// (what a stock Windows Server accepts over HTTP). The default.
	AuthNTLM Auth = "ntlm"
	// AuthBasic is HTTP basic authentication: local accounts only, over
	// HTTPS only, to a listener that enables it.
	AuthBasic Auth = "basic"
)

// WinRM is how the harness reaches a machine's WinRM service.
type WinRM struct {
	// Port is the WinRM listener's port (5985 for HTTP, 5986 for HTTPS unless set).
	Port int `json:"port"`
	// HTTPS is false unless the inventory sets https: true: a stock
	// Windows Server listens only for HTTP.
	HTTPS bool `json:"https"`
	// CABundlePath is the absolute path of the PEM file trusted for the
	// machine's certificate, or "" to trust the system's roots.
	CABundlePath string `json:"caBundle,omitempty"`
	// CABundle is the content of CABundlePath: PEM certificates.
	CABundle []byte `json:"-"`
	// Insecure skips the check of the machine's certificate (HTTPS only).
	Insecure bool `json:"insecure"`
	// TLSServerName is the name to verify in the machine's certificate, or
	// "" for the address.
	TLSServerName string `json:"tlsServerName,omitempty"`
	// Auth is ntlm unless set; basic only over HTTPS.
	Auth Auth `json:"auth"`
}

// PasswordSource is where a machine's password comes from: exactly one of
// Env and File is set.
type PasswordSource struct {
	// Env is the environment variable that holds the password.
	Env string `json:"env,omitempty"`
	// File is the absolute path of the file that holds the password.
	File string `json:"file,omitempty"`
}

// String describes the source: "env WIN_A_PASSWORD" or "file /path".
func (p PasswordSource) String() string {
	if p.File != "" {
		return "file " + p.File
	}
	return "env " + p.Env
}

// Machine returns the machine with the given name.
func (inv *Inventory) Machine(name string) (Machine, bool) {
	for _, m := range inv.Machines {
		if m.Name == name {
			return m, true
		}
	}
	return Machine{}, false
}

// Endpoint is the machine's WinRM URL, such as
// https://192.168.56.20:5986/wsman.
func (m Machine) Endpoint() string {
	scheme := "http"
	if m.WinRM.HTTPS {
		scheme = "https"
	}
	return scheme + "://" + net.JoinHostPort(m.Address, strconv.Itoa(m.WinRM.Port)) + "/wsman"
}

// CertPool returns a pool of the CA bundle's certificates, or nil when the
// machine has no CA bundle (the system's roots apply).
func (w WinRM) CertPool() *x509.CertPool {
	if len(w.CABundle) == 0 {
		return nil
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(w.CABundle) // checked when loaded
	return pool
}

// LoadFromOS is Load with the process's environment.
func LoadFromOS(path string) (*Inventory, error) { return Load(path, os.LookupEnv) }

// Load reads, decodes and validates the inventory file at path. env looks
// up the environment variables that passwordFrom.env names (os.LookupEnv
// when nil). Relative paths in the file (caBundle, passwordFrom.file) are
// relative to the file's directory.
//
// When anything is wrong, Load returns a *Error that lists every problem.
func Load(path string, env func(string) (string, bool)) (*Inventory, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		p := Problem{Message: "cannot read the inventory: " + err.Error(), Fix: "check the path and the file's permissions"}
		if errors.Is(err, fs.ErrNotExist) {
			p.Message = "the inventory file does not exist"
			p.Fix = "check the path (a relative path is from the working directory)"
		}
		return nil, &Error{Path: path, Problems: []Problem{p}, cause: err}
	}
	return Parse(path, data, env)
}

// Parse decodes and validates an inventory file's content; path names the
// file in errors, and relative paths in the file are relative to its
// directory. env is as for Load.
//
// When anything is wrong, Parse returns a *Error that lists every problem.
func Parse(path string, data []byte, env func(string) (string, bool)) (*Inventory, error) {
	if env == nil {
		env = os.LookupEnv
	}
	d := newDecoder(path, env)
	machines := d.decode(data)
	if len(d.Problems) > 0 {
		return nil, d.err()
	}
	return &Inventory{Path: path, Machines: machines}, nil
}
