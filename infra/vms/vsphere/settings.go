package vsphere

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/winconform/winconform/config"
	"github.com/winconform/winconform/infra/vms"
)

// Settings is the VM file's vsphere block: where in the vCenter the
// machines go, and how its certificate is trusted. The template is the VM
// file's image.
type Settings struct {
	// Datacenter is the datacenter's name or path; "" for the vCenter's
	// only one.
	Datacenter string `yaml:"datacenter"`
	// Cluster is the cluster whose root resource pool the machines run
	// in; ResourcePool a resource pool (within Cluster when both are set
	// and the pool is not an absolute path). Both "": the datacenter's
	// only resource pool.
	Cluster      string `yaml:"cluster"`
	ResourcePool string `yaml:"resourcePool"`
	// Host pins the machines to an ESXi host; "" lets DRS place them
	// (a cluster without DRS needs it).
	Host string `yaml:"host"`
	// Datastore holds the linked clones' delta disks; "" for the
	// template's datastore.
	Datastore string `yaml:"datastore"`
	// Folder is the VM folder the machines go in; "" for the datacenter's
	// VM folder.
	Folder string `yaml:"folder"`
	// Network is the port group the machines' first NIC is attached to;
	// "" keeps the template's.
	Network string `yaml:"network"`
	// Snapshot is the template's snapshot the linked clones are made from;
	// "" for its current snapshot.
	Snapshot string `yaml:"snapshot"`
	// CABundle is a PEM file of the CA(s) that signed the vCenter's
	// certificate; Insecure skips the check. Neither: the system's CAs.
	CABundle config.PEMFile `yaml:"caBundle"`
	Insecure bool           `yaml:"insecure"`
	// Template is refused: the template is the VM file's image.
	Template string `yaml:"template"`
}

// Check returns the block's problems, and those of connection.endpoint
// as a vCenter's.
func (s *Settings) Check(f *vms.File, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.Template != "" {
		errs = append(errs, config.Invalid(p.Child("template"), "is not a setting: the template is the VM file's image",
			"remove it and set image to the template's name or inventory path"))
	}
	if s.CABundle.Path != "" && s.Insecure {
		errs = append(errs, config.Invalid(p.Child("insecure"), "is set with caBundle", "keep caBundle (the vCenter's certificate is checked against it) and remove insecure"))
	}
	if ep := f.Connection.Endpoint; ep != "" {
		if _, err := endpointURL(ep); err != nil {
			fix := "set endpoint to the vCenter's name or URL, such as vcenter.lab.example or https://vcenter.lab.example/sdk"
			if errors.Is(err, errInlineUser) {
				fix = "remove it from the URL: set connection.user, and connection.credentials.password: {env: VSPHERE_PASSWORD}"
			}
			errs = append(errs, config.Invalid(field.NewPath("connection", "endpoint"), err.Error(), fix))
		}
	}
	return errs
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
