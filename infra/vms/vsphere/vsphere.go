package vsphere

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/vmware/govmomi/fault"
	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/session"
	"github.com/vmware/govmomi/session/keepalive"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/winconform/winconform/config"
	"github.com/winconform/winconform/infra/vms"
)

func init() {
	vms.Register(config.Provider{Name: "vsphere", Summary: "a vCenter", Endpoint: config.Required, EndpointExample: "vcenter.lab.example",
		User: config.Required, Credentials: []config.Credential{{Name: "password", Required: true}}}, Open)
}

const (
	// openTimeout bounds Open (connect, log in, look everything up) when
	// its context allows longer.
	openTimeout = 2 * time.Minute
	// dialTimeout bounds one TCP connect and TLS handshake.
	dialTimeout = 30 * time.Second
)

// keepAliveIdle is how often an idle session is kept alive: vCenter ends
// an API session idle for 30 minutes by default
// (config.vmacore.soap.sessionTimeout), and a run's machines are deleted
// hours after they are made.
var keepAliveIdle = 5 * time.Minute

// Provider makes machines as linked clones in a vCenter. Open returns one.
type Provider struct {
	c        *vim25.Client
	sm       *session.Manager
	ka       *keepalive.HandlerSOAP
	endpoint string
	s        Settings

	// What Open looked up: where the clones go.
	dc        *object.Datacenter
	folder    *object.Folder
	pool      *object.ResourcePool
	host      *object.HostSystem                 // nil: DRS places them
	datastore *object.Datastore                  // nil: the template's
	backing   types.BaseVirtualDeviceBackingInfo // nil: the template's network

	closeOnce sync.Once
	closeErr  error
}

// Open connects to the vCenter of cfg, logs in and looks up the datacenter,
// resource pool, host, datastore, folder and network the settings name,
// so that every problem with them is an error here, naming its field,
// before any machine is made.
func Open(ctx context.Context, cfg *vms.File, s *Settings) (vms.Provider, error) {
	ctx, cancel := context.WithTimeout(ctx, openTimeout)
	defer cancel()
	u, err := endpointURL(cfg.Connection.Endpoint)
	if err != nil {
		return nil, config.Problem(field.NewPath("connection", "endpoint"), err.Error(), "set endpoint to the vCenter's name or URL, such as vcenter.lab.example", nil)
	}
	sc := soap.NewClient(u, s.Insecure)
	if s.CABundle.Path != "" {
		if err := sc.SetRootCAs(s.CABundle.Path); err != nil {
			return nil, config.Problem(field.NewPath("vsphere", "caBundle"), err.Error(), "set caBundle to a PEM file of the vCenter's CA", err)
		}
	}
	// The TLS dial honours the context and a timeout (soap's own ignores
	// both): a vCenter that does not answer is an error, not a hang.
	tr := sc.DefaultTransport()
	tr.DialTLSContext = (&tls.Dialer{NetDialer: &net.Dialer{Timeout: dialTimeout}, Config: tr.TLSClientConfig}).DialContext
	tr.TLSHandshakeTimeout = dialTimeout

	p := &Provider{endpoint: u.Host, s: *s}
	c, err := vim25.NewClient(ctx, sc)
	if err != nil {
		return nil, p.connectError(err)
	}
	if api := c.ServiceContent.About.ApiType; api != "VirtualCenter" {
		return nil, config.Problem(field.NewPath("connection", "endpoint"), fmt.Sprintf("%s is %s (API type %s), not a vCenter: templates and linked clones are vCenter's", p.endpoint, c.ServiceContent.About.FullName, api),
			"set endpoint to the vCenter that manages the hosts", nil)
	}
	p.ka = keepalive.NewHandlerSOAP(c.RoundTripper, keepAliveIdle, nil)
	login := url.UserPassword(cfg.Connection.User, cfg.Connection.Credentials["password"].Secret.Reveal())
	c.RoundTripper = &relogin{rt: p.ka, login: func(ctx context.Context) error { return p.sm.Login(ctx, login) }}
	p.c = c
	p.sm = session.NewManager(c)
	if err := p.sm.Login(ctx, login); err != nil {
		return nil, p.loginError(cfg.Connection.User, err)
	}
	if err := p.lookUp(ctx); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

// connectError says why the vCenter could not be reached.
func (p *Provider) connectError(err error) error {
	if soap.IsCertificateUntrusted(err) {
		msg := fmt.Sprintf("the certificate of %s is not trusted: %v", p.endpoint, err)
		if p.s.CABundle.Path != "" {
			msg = fmt.Sprintf("the certificate of %s is not signed by a CA of %s: %v", p.endpoint, p.s.CABundle.Path, err)
		}
		return config.Problem(field.NewPath("vsphere", "caBundle"), msg,
			"set vsphere.caBundle to a PEM file of the CA that signed it (https://<vcenter>/certs/download.zip has it), or vsphere.insecure: true to skip the check", err)
	}
	return config.Problem(field.NewPath("connection", "endpoint"), fmt.Sprintf("cannot reach the vCenter at %s: %v", p.endpoint, err),
		"check the endpoint, and that the vCenter is up and reachable from here (port 443)", err)
}

// loginError says why the vCenter refused the login.
func (p *Provider) loginError(user string, err error) error {
	if fault.Is(err, &types.InvalidLogin{}) {
		return config.Problem(field.NewPath("connection", "credentials").Key("password"), fmt.Sprintf("the vCenter at %s refused user %q with the password connection.credentials.password references: incorrect user name or password", p.endpoint, user),
			"check connection.user (with its domain, such as winconform@vsphere.local) and the password the reference holds", err)
	}
	return config.Problem(field.NewPath("connection", "user"), fmt.Sprintf("the vCenter at %s refused the login of %q: %s", p.endpoint, user, describe(err)),
		"check connection.user and its permissions in the vCenter", err)
}

// lookUp finds what the settings name, each failure naming its field.
func (p *Provider) lookUp(ctx context.Context) error {
	f := find.NewFinder(p.c)
	var err error
	if p.dc, err = f.DatacenterOrDefault(ctx, p.s.Datacenter); err != nil {
		return lookupError(ctx, field.NewPath("vsphere", "datacenter"), "datacenter", p.s.Datacenter, err, func() ([]string, error) {
			l, err := f.DatacenterList(ctx, "*")
			return names(l, err)
		})
	}
	f.SetDatacenter(p.dc)
	if err := p.lookUpPool(ctx, f); err != nil {
		return err
	}
	if p.s.Host != "" {
		if p.host, err = f.HostSystem(ctx, p.s.Host); err != nil {
			return lookupError(ctx, field.NewPath("vsphere", "host"), "host", p.s.Host, err, func() ([]string, error) {
				l, err := f.HostSystemList(ctx, "*/*")
				return names(l, err)
			})
		}
	}
	if p.s.Datastore != "" {
		if p.datastore, err = f.Datastore(ctx, p.s.Datastore); err != nil {
			return lookupError(ctx, field.NewPath("vsphere", "datastore"), "datastore", p.s.Datastore, err, func() ([]string, error) {
				l, err := f.DatastoreList(ctx, "*")
				return names(l, err)
			})
		}
	}
	if p.folder, err = f.FolderOrDefault(ctx, p.s.Folder); err != nil {
		return lookupError(ctx, field.NewPath("vsphere", "folder"), "VM folder", p.s.Folder, err, nil)
	}
	if p.s.Network != "" {
		n, err := f.Network(ctx, p.s.Network)
		if err != nil {
			return lookupError(ctx, field.NewPath("vsphere", "network"), "network", p.s.Network, err, func() ([]string, error) {
				l, err := f.NetworkList(ctx, "*")
				if err != nil {
					return nil, err
				}
				var out []string
				for _, n := range l {
					out = append(out, n.GetInventoryPath()[strings.LastIndex(n.GetInventoryPath(), "/")+1:])
				}
				return out, nil
			})
		}
		if p.backing, err = n.EthernetCardBackingInfo(ctx); err != nil {
			return config.Problem(field.NewPath("vsphere", "network"), fmt.Sprintf("cannot attach a NIC to network %q: %s", p.s.Network, describe(err)),
				"use a standard or distributed port group the user may assign", err)
		}
	}
	return nil
}

// lookUpPool finds the resource pool: resourcePool (within cluster), the
// cluster's root pool, or the datacenter's only pool.
func (p *Provider) lookUpPool(ctx context.Context, f *find.Finder) error {
	var cluster *object.ClusterComputeResource
	clusters := func() ([]string, error) {
		l, err := f.ClusterComputeResourceList(ctx, "*")
		return names(l, err)
	}
	if p.s.Cluster != "" {
		var err error
		if cluster, err = f.ClusterComputeResource(ctx, p.s.Cluster); err != nil {
			return lookupError(ctx, field.NewPath("vsphere", "cluster"), "cluster", p.s.Cluster, err, clusters)
		}
	}
	var err error
	switch {
	case p.s.ResourcePool != "":
		path := p.s.ResourcePool
		if cluster != nil && !strings.HasPrefix(path, "/") {
			path = cluster.InventoryPath + "/Resources/" + path
		}
		if p.pool, err = f.ResourcePool(ctx, path); err != nil {
			return lookupError(ctx, field.NewPath("vsphere", "resourcePool"), "resource pool", p.s.ResourcePool, err, nil)
		}
	case cluster != nil:
		if p.pool, err = cluster.ResourcePool(ctx); err != nil {
			return config.Problem(field.NewPath("vsphere", "cluster"), fmt.Sprintf("cannot read the resource pool of cluster %q: %s", p.s.Cluster, describe(err)),
				"check the user's permissions on the cluster", err)
		}
	default:
		if p.pool, err = f.DefaultResourcePool(ctx); err != nil {
			return lookupError(ctx, field.NewPath("vsphere", "cluster"), "cluster or host", "", err, clusters)
		}
	}
	return nil
}

// lookupError makes a finder's error a problem of the field at, listing
// the choices (when choices is set and answers).
func lookupError(ctx context.Context, at *field.Path, kind, name string, err error, choices func() ([]string, error)) error {
	msg, fix, choose := lookupProblem(ctx, kind, name, err)
	if choose && choices != nil {
		if l, err := choices(); err == nil && len(l) > 0 {
			sort.Strings(l)
			fix += ": one of " + strings.Join(l, ", ")
		}
	}
	return config.Problem(at, msg, fix, err)
}

// lookupProblem says what a finder's error is (msg) and what to do (fix);
// choose is whether the fix is to name one of the vCenter's.
func lookupProblem(ctx context.Context, kind, name string, err error) (msg, fix string, choose bool) {
	var (
		nf  *find.NotFoundError
		mf  *find.MultipleFoundError
		dnf *find.DefaultNotFoundError
		dmf *find.DefaultMultipleFoundError
	)
	switch {
	case errors.As(err, &dmf):
		return fmt.Sprintf("is not set, and the vCenter has more than one %s", kind), "set it", true
	case errors.As(err, &dnf):
		return fmt.Sprintf("is not set, and the vCenter has no %s the user can see", kind), "set it, and check the user's permissions", true
	case errors.As(err, &nf):
		return fmt.Sprintf("the vCenter has no %s %q (or the user cannot see it)", kind, name), "use its name or inventory path", true
	case errors.As(err, &mf):
		return fmt.Sprintf("%q names more than one %s", name, kind), "use its inventory path", false
	case ctx.Err() != nil:
		return fmt.Sprintf("looking up %s %q did not finish: %v", kind, name, ctx.Err()), "check that the vCenter answers", false
	}
	return fmt.Sprintf("cannot look up %s %q: %s", kind, name, describe(err)), "check the user's permissions", false
}

// names returns the objects' names.
func names[T interface{ Name() string }](l []T, err error) ([]string, error) {
	if err != nil {
		return nil, err
	}
	out := make([]string, len(l))
	for i, o := range l {
		out[i] = o.Name()
	}
	return out, nil
}

// Close logs out and stops keeping the session alive.
func (p *Provider) Close() error {
	p.closeOnce.Do(func() {
		if p.sm == nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), dialTimeout)
		defer cancel()
		p.closeErr = p.sm.Logout(ctx)
		p.ka.Stop()
		if p.closeErr != nil {
			p.closeErr = fmt.Errorf("vsphere: logging out of %s: %s", p.endpoint, describe(p.closeErr))
		}
	})
	return p.closeErr
}

// describe is an error's message, with the kind of the vCenter's fault
// (and its details when the vCenter sent no message).
func describe(err error) string {
	if err == nil {
		return ""
	}
	msg := strings.TrimPrefix(err.Error(), "ServerFaultCode: ")
	var f types.BaseMethodFault
	fault.In(err, func(bf types.BaseMethodFault, _ string, _ []types.LocalizableMessage) bool {
		f = bf
		return true
	})
	if f == nil {
		return msg
	}
	kind := strings.TrimPrefix(fmt.Sprintf("%T", f), "*types.")
	if msg == "" || msg == kind || msg == "*types."+kind {
		msg = detail(f)
	}
	if !strings.Contains(msg, kind) {
		msg = strings.TrimSpace(msg + " (" + kind + ")")
	}
	return msg
}

// detail says what some common faults mean.
func detail(f types.BaseMethodFault) string {
	switch f := f.(type) {
	case *types.NoDiskSpace:
		return fmt.Sprintf("no space left on datastore %s", f.Datastore)
	case *types.NoPermission:
		return fmt.Sprintf("permission denied: the user lacks privilege %s", f.PrivilegeId)
	case *types.DuplicateName:
		return fmt.Sprintf("the name %s is taken", f.Name)
	case *types.NotAuthenticated:
		return "the vCenter ended the session"
	case *types.InvalidArgument:
		return fmt.Sprintf("invalid argument %s", f.InvalidProperty)
	}
	return ""
}
