package vsphere

import (
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/winconform/winconform/infra/vms"
)

// Settings is the VM file's vsphere block: where in the vCenter the
// machines go, and how its certificate is trusted. The template is the VM
// file's image.
type Settings struct {
	// Datacenter is the datacenter's name or path; "" for the vCenter's
	// only one.
	Datacenter string
	// Cluster is the cluster whose root resource pool the machines run
	// in; ResourcePool a resource pool (within Cluster when both are set
	// and the pool is not an absolute path). Both "": the datacenter's
	// only resource pool.
	Cluster, ResourcePool string
	// Host pins the machines to an ESXi host; "" lets DRS place them
	// (a cluster without DRS needs it).
	Host string
	// Datastore holds the linked clones' delta disks; "" for the
	// template's datastore.
	Datastore string
	// Folder is the VM folder the machines go in; "" for the datacenter's
	// VM folder.
	Folder string
	// Network is the port group the machines' first NIC is attached to;
	// "" keeps the template's.
	Network string
	// Snapshot is the template's snapshot the linked clones are made from;
	// "" for its current snapshot.
	Snapshot string
	// CABundle is a PEM file of the CA(s) that signed the vCenter's
	// certificate (absolute); Insecure skips the check. Neither: the
	// system's CAs.
	CABundle string
	Insecure bool
}

type settingsDoc struct {
	Datacenter   yaml.Node            `yaml:"datacenter"`
	Cluster      yaml.Node            `yaml:"cluster"`
	ResourcePool yaml.Node            `yaml:"resourcePool"`
	Host         yaml.Node            `yaml:"host"`
	Datastore    yaml.Node            `yaml:"datastore"`
	Folder       yaml.Node            `yaml:"folder"`
	Network      yaml.Node            `yaml:"network"`
	Snapshot     yaml.Node            `yaml:"snapshot"`
	CABundle     yaml.Node            `yaml:"caBundle"`
	Insecure     yaml.Node            `yaml:"insecure"`
	Template     yaml.Node            `yaml:"template"`
	Unknown      map[string]yaml.Node `yaml:",inline"`
}

const blockFix = "write a mapping such as {datacenter: DC1, cluster: Cluster1, datastore: ds1, network: VM Network, caBundle: vcenter-ca.pem}"

// decode reads the vsphere block, and checks the connection's endpoint as
// a vCenter's.
func decode(b *vms.Block) any {
	checkEndpoint(b)
	var doc settingsDoc
	if !b.Decode(&doc, blockFix) {
		return nil
	}
	s := Settings{
		Datacenter:   b.String("datacenter", &doc.Datacenter),
		Cluster:      b.String("cluster", &doc.Cluster),
		ResourcePool: b.String("resourcePool", &doc.ResourcePool),
		Host:         b.String("host", &doc.Host),
		Datastore:    b.String("datastore", &doc.Datastore),
		Folder:       b.String("folder", &doc.Folder),
		Network:      b.String("network", &doc.Network),
		Snapshot:     b.String("snapshot", &doc.Snapshot),
		CABundle:     b.Path("caBundle", &doc.CABundle),
		Insecure:     b.Bool("insecure", &doc.Insecure, false),
	}
	if doc.Template.Kind != 0 {
		b.Report("template", &doc.Template, "is not a setting: the template is the VM file's image",
			"remove it and set image to the template's name or inventory path")
	}
	switch {
	case s.CABundle != "" && s.Insecure:
		b.Report("insecure", &doc.Insecure, "is set with caBundle", "keep caBundle (the vCenter's certificate is checked against it) and remove insecure")
	case s.CABundle != "":
		checkCABundle(b, &doc.CABundle, s.CABundle)
	}
	return s
}

// checkCABundle reports a CA bundle that cannot be read or holds no PEM
// certificate.
func checkCABundle(b *vms.Block, n *yaml.Node, path string) {
	const fix = "set caBundle to a PEM file of the CA that signed the vCenter's certificate (https://<vcenter>/certs/download.zip has it), or set insecure: true to skip the check"
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		b.Report("caBundle", n, fmt.Sprintf("%q does not exist", path), fix)
	case err != nil:
		b.Report("caBundle", n, fmt.Sprintf("%q cannot be read: %v", path, err), fix)
	case !x509.NewCertPool().AppendCertsFromPEM(data):
		b.Report("caBundle", n, fmt.Sprintf("%q holds no PEM certificate", path), fix)
	}
}

// endpointURL is the vCenter's SDK URL from connection.endpoint: a host
// name, or an https URL (the path defaults to /sdk).
func endpointURL(endpoint string) (*url.URL, error) {
	if strings.Contains(endpoint, "@") {
		return nil, errInlineUser // before anything prints it
	}
	raw := endpoint
	if !strings.Contains(raw, "://") {
		raw = "https://" + raw
	}
	u, err := url.Parse(strings.TrimSuffix(raw, "/"))
	switch {
	case err != nil:
		return nil, fmt.Errorf("%q is not a URL: %v", endpoint, errors.Unwrap(err))
	case u.Scheme != "https":
		return nil, fmt.Errorf("%q is not an https URL: the vCenter API is served over HTTPS, and the password would go in the clear", endpoint)
	case u.Hostname() == "":
		return nil, fmt.Errorf("%q names no host", endpoint)
	}
	if u.Path == "" {
		u.Path = "/sdk"
	}
	return u, nil
}

var errInlineUser = errors.New("holds a user or password: an inline credential is refused")

func checkEndpoint(b *vms.Block) {
	ep := b.Connection().Endpoint
	if ep == "" {
		return // reported as missing by the VM file
	}
	if _, err := endpointURL(ep); err != nil {
		fix := "set endpoint to the vCenter's name or URL, such as vcenter.lab.example or https://vcenter.lab.example/sdk"
		if errors.Is(err, errInlineUser) {
			fix = "remove it from the URL: set connection.user, and connection.credentials.password: {env: VSPHERE_PASSWORD}"
		}
		b.ReportConnection("endpoint", err.Error(), fix)
	}
}
