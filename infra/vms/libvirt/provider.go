package libvirt

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"net/url"
	"os"
	"path"
	"strings"
	"sync"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"
	"github.com/digitalocean/go-libvirt/socket/dialers"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/winconform/winconform/config"
	"github.com/winconform/winconform/infra/metallb"
	"github.com/winconform/winconform/infra/vms"
)

func init() {
	vms.Register(config.Provider{Name: "libvirt", Summary: "a libvirt host (KVM or QEMU)", Endpoint: config.Optional,
		EndpointExample: "qemu:///system or qemu+ssh://root@kvm.lab/system", User: config.Refused},
		func(ctx context.Context, f *vms.File, s *Settings) (vms.Provider, error) {
			p, err := Open(ctx, f.Connection.Endpoint, *s)
			if err != nil {
				return nil, err
			}
			if err := p.CheckImage(ctx, f.Image); err != nil {
				p.Close()
				return nil, err
			}
			return p, nil
		})
}

// Provider makes machines as transient libvirt domains, each with a qcow2
// overlay of the golden image in the provider's pool.
type Provider struct {
	lv       *golibvirt.Libvirt
	endpoint string
	uri      *url.URL
	s        Settings
	accel    string
	pool     golibvirt.StoragePool
	poolPath string
	// On a Docker network: its bridge, gateway, subnet and the VM block.
	bridge  *dockerBridge
	block   metallb.Pool
	kernel  string
	initrd  string
	closeMu sync.Mutex
	closed  bool
	// idle is how long a stream transfer may move no byte before it is
	// taken as stalled (streamIdle; shorter in tests).
	idle time.Duration
}

var (
	_ vms.Provider      = (*Provider)(nil)
	_ vms.ConsoleLogger = (*Provider)(nil)
)

// Bounds of the calls that go on when their context ends.
const (
	// dialTimeout bounds connecting to libvirtd.
	dialTimeout = 10 * time.Second
	// callTimeout bounds a libvirt call whose context has no deadline of
	// its own (a teardown's): starting a domain under TCG on loaded cores
	// takes seconds, not minutes.
	callTimeout = 5 * time.Minute
	// streamTimeout bounds one stream transfer (a console log, an image).
	streamTimeout = 10 * time.Minute
	// streamIdle is how long a transfer may move no byte before it is
	// taken as stalled and made again (see stream).
	streamIdle = 30 * time.Second
	// streamAttempts is how often a stalled or short transfer is made.
	streamAttempts = 3
	// startTimeout bounds starting a domain (DomainCreateXML), which
	// libvirt cannot cancel.
	startTimeout = 2 * time.Minute
	// cleanupTimeout bounds removing what a failed Create made.
	cleanupTimeout = 2 * time.Minute
)

// Open connects to libvirtd at endpoint (DefaultEndpoint when empty) and
// checks, before any machine is made, what the settings name: the pool
// (made when absent), the libvirt network (present and active) or the
// Docker network (its bridge and a VM block Docker never hands out), the
// domain type, and the kernel and initrd.
func Open(ctx context.Context, endpoint string, s Settings) (*Provider, error) {
	if endpoint == "" {
		endpoint = DefaultEndpoint
	}
	if s.Pool == "" {
		s.Pool = DefaultPool
	}
	if s.PoolPath == "" {
		s.PoolPath = DefaultPoolPath
	}
	if s.Network == "" && s.DockerNetwork == "" {
		s.Network = DefaultNetwork
	}
	if s.Accel == "" {
		s.Accel = "auto"
	}
	if s.DiskBus == "" {
		s.DiskBus = "virtio"
	}
	if s.NICModel == "" {
		s.NICModel = "virtio"
	}
	u, err := url.Parse(endpoint)
	if err != nil || u.Scheme == "" {
		return nil, config.Problem(field.NewPath("connection", "endpoint"), fmt.Sprintf("%q is not a libvirt URI", endpoint),
			"write a URI such as "+DefaultEndpoint+" or qemu+ssh://root@kvm.lab/system", nil)
	}
	lv, err := connect(ctx, u)
	if err != nil {
		return nil, err
	}
	p := &Provider{lv: lv, endpoint: endpoint, uri: u, s: s, idle: streamIdle}
	if err := p.check(ctx); err != nil {
		_ = lv.Disconnect()
		return nil, err
	}
	return p, nil
}

// connect dials libvirtd within ctx (and dialTimeout).
func connect(ctx context.Context, u *url.URL) (*golibvirt.Libvirt, error) {
	ctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	return do(ctx, func() (*golibvirt.Libvirt, error) {
		if u.Scheme == "qemu" && u.Host == "" {
			opts := []dialers.LocalOption{dialers.WithLocalTimeout(dialTimeout)}
			if sock := u.Query().Get("socket"); sock != "" {
				opts = append(opts, dialers.WithSocket(sock))
			}
			lv := golibvirt.NewWithDialer(dialers.NewLocal(opts...))
			if err := lv.ConnectToURI(golibvirt.RemoteURI(u)); err != nil {
				return nil, err
			}
			return lv, nil
		}
		return golibvirt.ConnectToURI(u)
	})
}

// do runs f, a libvirt call (go-libvirt's calls take no context), and
// returns when it does or when ctx ends, whichever is first.
func do[T any](ctx context.Context, f func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, callTimeout)
		defer cancel()
	}
	ch := make(chan result, 1)
	go func() {
		v, err := f()
		ch <- result{v, err}
	}()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, fmt.Errorf("libvirt did not answer: %w", ctx.Err())
	}
}

func do0(ctx context.Context, f func() error) error {
	_, err := do(ctx, func() (struct{}, error) { return struct{}{}, f() })
	return err
}

// isLibvirt reports whether err is libvirt's error code.
func isLibvirt(err error, code golibvirt.ErrorNumber) bool {
	var e golibvirt.Error
	return errors.As(err, &e) && e.Code == uint32(code)
}

func (p *Provider) check(ctx context.Context) error {
	if err := p.ensurePool(ctx); err != nil {
		return err
	}
	if err := p.resolveAccel(ctx); err != nil {
		return err
	}
	if p.s.DockerNetwork != "" {
		n, err := inspectDockerNetwork(ctx, p.s.DockerNetwork)
		if err != nil {
			return config.Problem(field.NewPath("libvirt", "dockerNetwork"), fmt.Sprintf("cannot inspect Docker network %q: %v", p.s.DockerNetwork, err),
				"name a Docker bridge network on the libvirt host (kind's is kind; make the cluster first), or use libvirt.network", err)
		}
		block, err := vmBlock(n, p.s.Addresses)
		if err != nil {
			at := field.NewPath("libvirt", "dockerNetwork")
			if p.s.Addresses != "" {
				at = field.NewPath("libvirt", "addresses")
			}
			return config.Problem(at, err.Error(), "", err)
		}
		p.bridge, p.block = &n, block
	} else {
		net, err := do(ctx, func() (golibvirt.Network, error) { return p.lv.NetworkLookupByName(p.s.Network) })
		if err != nil {
			return config.Problem(field.NewPath("libvirt", "network"), fmt.Sprintf("libvirt has no network %q: %v", p.s.Network, err),
				"name a libvirt network (virsh net-list --all), or set libvirt.dockerNetwork", err)
		}
		active, err := do(ctx, func() (int32, error) { return p.lv.NetworkIsActive(net) })
		if err != nil {
			return err
		}
		if active == 0 {
			return config.Problem(field.NewPath("libvirt", "network"), fmt.Sprintf("libvirt network %q is not active", p.s.Network),
				"start it: virsh net-start "+p.s.Network, nil)
		}
	}
	var err error
	if p.kernel, err = p.hostPath(ctx, p.s.Kernel); err != nil {
		return config.Problem(field.NewPath("libvirt", "kernel"), err.Error(), "name a file on the libvirt host or a volume of pool "+p.s.Pool, nil)
	}
	if p.initrd, err = p.hostPath(ctx, p.s.Initrd); err != nil {
		return config.Problem(field.NewPath("libvirt", "initrd"), err.Error(), "name a file on the libvirt host or a volume of pool "+p.s.Pool, nil)
	}
	return nil
}

// ensurePool finds the pool, or makes it: a transient directory pool at
// PoolPath (libvirt makes the directory). Its files outlive it: a pool
// made again at the same path lists them.
func (p *Provider) ensurePool(ctx context.Context) error {
	pool, err := do(ctx, func() (golibvirt.StoragePool, error) { return p.lv.StoragePoolLookupByName(p.s.Pool) })
	if isLibvirt(err, golibvirt.ErrNoStoragePool) {
		def := fmt.Sprintf(`<pool type='dir'><name>%s</name><target><path>%s</path><permissions><mode>0755</mode></permissions></target></pool>`,
			esc(p.s.Pool), esc(p.s.PoolPath))
		pool, err = do(ctx, func() (golibvirt.StoragePool, error) {
			return p.lv.StoragePoolCreateXML(def, golibvirt.StoragePoolCreateWithBuild)
		})
	}
	if err != nil {
		return config.Problem(field.NewPath("libvirt", "pool"), fmt.Sprintf("storage pool %q: %v", p.s.Pool, err),
			"name a directory pool of the libvirt host (virsh pool-list --all), or let the provider make it at libvirt.poolPath", err)
	}
	active, err := do(ctx, func() (int32, error) { return p.lv.StoragePoolIsActive(pool) })
	if err == nil && active == 0 {
		err = do0(ctx, func() error { return p.lv.StoragePoolCreate(pool, 0) })
	}
	if err != nil {
		return config.Problem(field.NewPath("libvirt", "pool"), fmt.Sprintf("storage pool %q cannot be started: %v", p.s.Pool, err), "", err)
	}
	desc, err := do(ctx, func() (string, error) { return p.lv.StoragePoolGetXMLDesc(pool, 0) })
	if err != nil {
		return err
	}
	var x struct {
		Type   string `xml:"type,attr"`
		Target struct {
			Path string `xml:"path"`
		} `xml:"target"`
	}
	if err := xml.Unmarshal([]byte(desc), &x); err != nil {
		return fmt.Errorf("storage pool %q: %w", p.s.Pool, err)
	}
	if x.Type != "dir" {
		return config.Problem(field.NewPath("libvirt", "pool"), fmt.Sprintf("storage pool %q is a %s pool, not a directory", p.s.Pool, x.Type),
			"name a directory pool, or a new name for the provider to make one", nil)
	}
	p.pool, p.poolPath = pool, x.Target.Path
	return nil
}

// resolveAccel turns auto into kvm when the host's QEMU offers it (the
// domain capabilities for virttype kvm), else qemu. A host whose /dev/kvm
// is there but does not work (software-only nested KVM) needs accel: qemu.
func (p *Provider) resolveAccel(ctx context.Context) error {
	p.accel = p.s.Accel
	if p.accel != "auto" {
		return nil
	}
	_, err := do(ctx, func() (string, error) {
		return p.lv.ConnectGetDomainCapabilities(nil, golibvirt.OptString{"x86_64"}, nil, golibvirt.OptString{"kvm"}, 0)
	})
	p.accel = "kvm"
	if err != nil {
		p.accel = "qemu"
	}
	return nil
}

// Accel is the domain type the provider creates: kvm or qemu.
func (p *Provider) Accel() string { return p.accel }

// hostPath resolves a file setting: "" stays "", an absolute path is the
// libvirt host's, anything else a volume of the pool.
func (p *Provider) hostPath(ctx context.Context, name string) (string, error) {
	if name == "" || path.IsAbs(name) {
		return name, nil
	}
	vol, err := do(ctx, func() (golibvirt.StorageVol, error) { return p.lv.StorageVolLookupByName(p.pool, name) })
	if isLibvirt(err, golibvirt.ErrNoStorageVol) {
		if err2 := p.refresh(ctx); err2 == nil {
			vol, err = do(ctx, func() (golibvirt.StorageVol, error) { return p.lv.StorageVolLookupByName(p.pool, name) })
		}
	}
	if err != nil {
		return "", fmt.Errorf("no volume %q in pool %s: %v", name, p.s.Pool, err)
	}
	return do(ctx, func() (string, error) { return p.lv.StorageVolGetPath(vol) })
}

func (p *Provider) refresh(ctx context.Context) error {
	return do0(ctx, func() error { return p.lv.StoragePoolRefresh(p.pool, 0) })
}

// Close disconnects from libvirtd.
func (p *Provider) Close() error {
	p.closeMu.Lock()
	defer p.closeMu.Unlock()
	if p.closed {
		return nil
	}
	p.closed = true
	return p.lv.Disconnect()
}

// Create makes the machine: an address (on a Docker network), the overlay,
// then the domain, started; each names the machine's run, so that List
// finds what a killed run left at any point. On an error it removes what
// it made.
func (p *Provider) Create(ctx context.Context, spec vms.Spec) (vms.Machine, error) {
	if spec.Image == "" {
		return vms.Machine{}, config.Problem(field.NewPath("image"), "is empty", "set image to the golden qcow2: a path on the libvirt host or a volume of pool "+p.s.Pool, nil)
	}
	if spec.CPUs <= 0 {
		spec.CPUs = 1
	}
	if spec.MemoryMiB <= 0 {
		spec.MemoryMiB = 512
	}
	golden, err := p.hostPath(ctx, spec.Image)
	if err != nil && ctx.Err() != nil {
		return vms.Machine{}, fmt.Errorf("libvirt: creating %s: %w", spec.Name, ctx.Err())
	}
	if err != nil {
		return vms.Machine{}, config.Problem(field.NewPath("image"), err.Error(), "name the golden qcow2: a path on the libvirt host or a volume of pool "+p.s.Pool, nil)
	}
	vn := volumeName{runID: spec.RunID, created: spec.Created.UTC().Truncate(time.Second), uuid: newUUID(), name: spec.Name}
	d := domainSpec{spec: spec, uuid: vn.uuid, accel: p.accel, network: p.s.Network, kernel: p.kernel, initrd: p.initrd,
		cmdline: p.s.Cmdline, diskBus: p.s.DiskBus, nicModel: p.s.NICModel}
	m := vms.Machine{ID: vn.uuid, Name: spec.Name, RunID: spec.RunID, Created: vn.created}
	// What Create makes (an address's lease, the overlay, the console log,
	// the domain) is made with calls it waits for (bounded) even when ctx
	// ends: libvirt finishes a call it was sent whatever the caller does,
	// so a call given up on would leave a volume nobody knows of (an up
	// interrupted there left an overlay that no Create returned, and that
	// its run then took for another invocation's). Once made, it is
	// removed on any failure, ctx's end among them.
	mk := context.WithoutCancel(ctx)
	release := func() {}
	undo := func() {
		cctx, cancel := context.WithTimeout(mk, cleanupTimeout)
		defer cancel()
		_ = p.Delete(cctx, vn.uuid)
		release()
	}
	interrupted := func() error {
		if err := ctx.Err(); err != nil {
			undo()
			return fmt.Errorf("libvirt: creating %s: %w", spec.Name, err)
		}
		return nil
	}
	if p.bridge != nil {
		addr, err := p.holdAddress(mk)
		if err != nil {
			return vms.Machine{}, err
		}
		// Until the overlay names it, the address's volume is all that
		// holds it: give it back if the machine is not made.
		release = func() { _ = p.deleteVolume(mk, leaseName(addr)) }
		vn.address = addr.String()
		d.bridge, d.mac, d.gateway = p.bridge.Bridge, macFor(addr), p.bridge.Gateway
		d.address = netip.PrefixFrom(addr, p.bridge.Subnet.Bits())
		if err := interrupted(); err != nil {
			return vms.Machine{}, err
		}
	}
	if err := p.createOverlay(mk, vn, golden); err != nil {
		undo()
		return vms.Machine{}, err
	}
	if err := interrupted(); err != nil {
		return vms.Machine{}, err
	}
	// The console log is a volume made here, empty, which virtlogd then
	// writes: the pool knows it without a refresh (which libvirt refuses
	// while another volume is being made, uploaded or downloaded).
	logDef := fmt.Sprintf(`<volume><name>%s</name><capacity unit='bytes'>0</capacity><target><format type='raw'/><permissions><mode>0600</mode></permissions></target></volume>`,
		esc(vn.base()+consoleExt))
	if _, err := do(mk, func() (golibvirt.StorageVol, error) { return p.lv.StorageVolCreateXML(p.pool, logDef, 0) }); err != nil {
		undo()
		return vms.Machine{}, fmt.Errorf("libvirt: creating the console log of %s in pool %s: %w", spec.Name, p.s.Pool, err)
	}
	if err := interrupted(); err != nil {
		return vms.Machine{}, err
	}
	d.overlay = path.Join(p.poolPath, vn.base()+overlayExt)
	d.console = path.Join(p.poolPath, vn.base()+consoleExt)
	xmlDesc := d.xml()
	// libvirt cannot cancel a domain's start: wait for it (bounded) even
	// when ctx ends, so that what it made is known and removed, not left
	// starting behind a Delete that found nothing yet.
	sctx, cancel := context.WithTimeout(mk, startTimeout)
	defer cancel()
	if _, err := do(sctx, func() (golibvirt.Domain, error) { return p.lv.DomainCreateXML(xmlDesc, 0) }); err != nil {
		undo()
		return vms.Machine{}, fmt.Errorf("libvirt: creating domain %s: %w", spec.Name, err)
	}
	if err := interrupted(); err != nil {
		return vms.Machine{}, err
	}
	return m, nil
}

// holdAddress takes the first address of the block no machine holds, by
// making its volume (which libvirt refuses when it exists).
func (p *Provider) holdAddress(ctx context.Context) (netip.Addr, error) {
	for _, a := range addresses(p.block) {
		def := fmt.Sprintf(`<volume><name>%s</name><capacity unit='bytes'>0</capacity><target><format type='raw'/><permissions><mode>0600</mode></permissions></target></volume>`, leaseName(a))
		_, err := do(ctx, func() (golibvirt.StorageVol, error) { return p.lv.StorageVolCreateXML(p.pool, def, 0) })
		switch {
		case err == nil:
			return a, nil
		case isLibvirt(err, golibvirt.ErrStorageVolExist):
			continue
		default:
			return netip.Addr{}, fmt.Errorf("libvirt: holding address %s (volume %s in pool %s): %w", a, leaseName(a), p.s.Pool, err)
		}
	}
	return netip.Addr{}, fmt.Errorf("every address of the VM block %s on Docker network %s is held by a machine: delete machines (winconform vms sweep) or widen libvirt.addresses",
		p.block, p.s.DockerNetwork)
}

// createOverlay makes the machine's qcow2 overlay of the golden image.
func (p *Provider) createOverlay(ctx context.Context, vn volumeName, golden string) error {
	def := fmt.Sprintf(`<volume><name>%s</name><target><format type='qcow2'/><permissions><mode>0600</mode></permissions></target>`+
		`<backingStore><path>%s</path><format type='qcow2'/></backingStore></volume>`, esc(vn.base()+overlayExt), esc(golden))
	if _, err := do(ctx, func() (golibvirt.StorageVol, error) { return p.lv.StorageVolCreateXML(p.pool, def, 0) }); err != nil {
		return fmt.Errorf("libvirt: creating the overlay of %s for %s in pool %s: %w", golden, vn.name, p.s.Pool, err)
	}
	return nil
}

// Delete destroys the domain (a transient domain is then gone) and removes
// the machine's overlay, console log and address. Absent is no error.
func (p *Provider) Delete(ctx context.Context, id string) error {
	u, err := parseUUID(id)
	if err != nil {
		return err
	}
	var addr string
	dom, err := do(ctx, func() (golibvirt.Domain, error) { return p.lv.DomainLookupByUUID(u) })
	switch {
	case err == nil:
		if md, err := p.metadata(ctx, dom); err == nil {
			addr = md.Address
		}
		err = do0(ctx, func() error { return p.lv.DomainDestroy(dom) })
		if err != nil && !isLibvirt(err, golibvirt.ErrNoDomain) && !isLibvirt(err, golibvirt.ErrOperationInvalid) {
			return fmt.Errorf("libvirt: destroying domain %s (%s): %w", dom.Name, id, err)
		}
		// A domain that was defined (made persistent by hand) stays
		// after destroy: undefine it too.
		_ = do0(ctx, func() error { return p.lv.DomainUndefine(dom) })
	case isLibvirt(err, golibvirt.ErrNoDomain):
	default:
		return fmt.Errorf("libvirt: looking up domain %s: %w", id, err)
	}
	vols, err := p.volumes(ctx)
	if err != nil {
		return err
	}
	for _, v := range vols {
		vn, _, ok := parseVolume(v.Name)
		if !ok || vn.uuid != id {
			continue
		}
		if vn.address != "" {
			addr = vn.address
		}
		if err := p.deleteVolume(ctx, v.Name); err != nil {
			return err
		}
	}
	if a, err := netip.ParseAddr(addr); err == nil {
		if err := p.deleteVolume(ctx, leaseName(a)); err != nil {
			return err
		}
	}
	return nil
}

func (p *Provider) deleteVolume(ctx context.Context, name string) error {
	vol, err := do(ctx, func() (golibvirt.StorageVol, error) { return p.lv.StorageVolLookupByName(p.pool, name) })
	if err == nil {
		err = do0(ctx, func() error { return p.lv.StorageVolDelete(vol, 0) })
	}
	if err != nil && !isLibvirt(err, golibvirt.ErrNoStorageVol) {
		return fmt.Errorf("libvirt: removing volume %s from pool %s: %w", name, p.s.Pool, err)
	}
	return nil
}

// volumes lists the pool's volumes. Everything the provider keeps there it
// made through the pool, which knows it without a refresh.
func (p *Provider) volumes(ctx context.Context) ([]golibvirt.StorageVol, error) {
	vols, err := do(ctx, func() ([]golibvirt.StorageVol, error) {
		v, _, err := p.lv.StoragePoolListAllVolumes(p.pool, 1, 0)
		return v, err
	})
	if err != nil {
		return nil, fmt.Errorf("libvirt: listing pool %s: %w", p.s.Pool, err)
	}
	return vols, nil
}

// metadata reads the provider's element of a domain's <metadata>;
// ErrNoDomainMetadata for a domain that is not the harness's.
func (p *Provider) metadata(ctx context.Context, dom golibvirt.Domain) (metadata, error) {
	s, err := do(ctx, func() (string, error) {
		return p.lv.DomainGetMetadata(dom, int32(golibvirt.DomainMetadataElement), golibvirt.OptString{Namespace}, 0)
	})
	if err != nil {
		return metadata{}, err
	}
	return parseMetadata(s)
}

// List returns every domain whose metadata carries the run tag, and every
// overlay whose domain is gone (a run killed between the two, a guest
// whose QEMU exited), so that sweep removes those too.
func (p *Provider) List(ctx context.Context) ([]vms.Machine, error) {
	doms, err := do(ctx, func() ([]golibvirt.Domain, error) {
		d, _, err := p.lv.ConnectListAllDomains(1, 0)
		return d, err
	})
	if err != nil {
		return nil, fmt.Errorf("libvirt: listing domains: %w", err)
	}
	var out []vms.Machine
	seen := map[string]bool{}
	for _, dom := range doms {
		md, err := p.metadata(ctx, dom)
		if isLibvirt(err, golibvirt.ErrNoDomainMetadata) || isLibvirt(err, golibvirt.ErrNoDomain) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("libvirt: domain %s: %w", dom.Name, err)
		}
		if md.tag(vms.TagRun) == "" {
			continue
		}
		id := formatUUID(dom.UUID)
		m, err := md.machine(id)
		if err != nil {
			return nil, err
		}
		seen[id] = true
		out = append(out, m)
	}
	vols, err := p.volumes(ctx)
	if err != nil {
		return nil, err
	}
	for _, v := range vols {
		vn, ext, ok := parseVolume(v.Name)
		if !ok || ext != overlayExt || seen[vn.uuid] {
			continue
		}
		seen[vn.uuid] = true
		out = append(out, vms.Machine{ID: vn.uuid, Name: vn.name, RunID: vn.runID, Created: vn.created})
	}
	return out, nil
}

// Addresses returns, on a Docker network, the address the provider gave
// the machine; on a libvirt network, what its DHCP leases say, else the
// guest agent. A machine whose domain is gone is ErrNotFound.
func (p *Provider) Addresses(ctx context.Context, id string) ([]string, error) {
	u, err := parseUUID(id)
	if err != nil {
		return nil, err
	}
	dom, err := do(ctx, func() (golibvirt.Domain, error) { return p.lv.DomainLookupByUUID(u) })
	if isLibvirt(err, golibvirt.ErrNoDomain) {
		return nil, fmt.Errorf("libvirt: domain %s: %w", id, vms.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("libvirt: looking up domain %s: %w", id, err)
	}
	md, err := p.metadata(ctx, dom)
	if err != nil {
		return nil, fmt.Errorf("libvirt: domain %s: %w", id, err)
	}
	if md.Address != "" {
		return []string{md.Address}, nil
	}
	var out []string
	for _, src := range []golibvirt.DomainInterfaceAddressesSource{golibvirt.DomainInterfaceAddressesSrcLease, golibvirt.DomainInterfaceAddressesSrcAgent} {
		ifaces, err := do(ctx, func() ([]golibvirt.DomainInterface, error) { return p.lv.DomainInterfaceAddresses(dom, uint32(src), 0) })
		if err != nil {
			if ctx.Err() != nil {
				return nil, err
			}
			continue // no agent in the guest, or it does not answer yet
		}
		for _, ifc := range ifaces {
			for _, a := range ifc.Addrs {
				out = append(out, a.Addr)
			}
		}
		if len(out) > 0 {
			break
		}
	}
	return out, nil
}

// ConsoleLog writes the machine's serial console, as logged so far, to w:
// the log is a volume of the pool, read through libvirt, so that it works
// for a remote host too.
func (p *Provider) ConsoleLog(ctx context.Context, id string, w io.Writer) error {
	vols, err := p.volumes(ctx)
	if err != nil {
		return err
	}
	for _, v := range vols {
		vn, ext, ok := parseVolume(v.Name)
		if !ok || ext != consoleExt || vn.uuid != id {
			continue
		}
		return p.download(ctx, v, w)
	}
	return fmt.Errorf("libvirt: no console log of machine %s in pool %s: %w", id, p.s.Pool, vms.ErrNotFound)
}

// Import copies a local file into the pool as the volume name (readable by
// QEMU), unless the pool has it already, and returns its path on the
// libvirt host: how a golden image (or a stand-in's kernel) reaches a
// remote host. name should change whenever the content does. A volume
// whose upload did not finish (no "<name>.done" beside it) is uploaded
// again.
func (p *Provider) Import(ctx context.Context, local, name string) (string, error) {
	if strings.ContainsAny(name, "/_") || strings.HasPrefix(name, "winconform") {
		return "", fmt.Errorf("volume name %q: use no slash or underscore, and no winconform prefix (the provider's own)", name)
	}
	done := name + ".done"
	if _, err := do(ctx, func() (golibvirt.StorageVol, error) { return p.lv.StorageVolLookupByName(p.pool, done) }); err == nil {
		return p.hostPath(ctx, name)
	}
	f, err := os.Open(local)
	if err != nil {
		return "", err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", err
	}
	def := fmt.Sprintf(`<volume><name>%s</name><capacity unit='bytes'>%d</capacity><target><format type='raw'/><permissions><mode>0644</mode></permissions></target></volume>`,
		esc(name), st.Size())
	if n, err := retryTransfer(ctx, func() error { return p.upload(ctx, f, uint64(st.Size()), name, def) }); err != nil {
		return "", fmt.Errorf("libvirt: uploading %s to volume %s (%d attempts): %w", local, name, n, err)
	}
	marker := fmt.Sprintf(`<volume><name>%s</name><capacity unit='bytes'>0</capacity><target><format type='raw'/></target></volume>`, esc(done))
	if _, err := do(ctx, func() (golibvirt.StorageVol, error) { return p.lv.StorageVolCreateXML(p.pool, marker, 0) }); err != nil {
		return "", fmt.Errorf("libvirt: marking volume %s complete: %w", name, err)
	}
	return p.hostPath(ctx, name)
}

// upload makes volume name from def, empty, and uploads size bytes of f
// (from its start) into it.
func (p *Provider) upload(ctx context.Context, f io.ReadSeeker, size uint64, name, def string) error {
	if err := p.deleteVolume(ctx, name); err != nil {
		return err
	}
	vol, err := do(ctx, func() (golibvirt.StorageVol, error) { return p.lv.StorageVolCreateXML(p.pool, def, 0) })
	if err != nil {
		return fmt.Errorf("creating the volume: %w", err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	r := &meteredReader{r: f, m: &meter{}}
	if err := p.stream(ctx, func(lv *golibvirt.Libvirt) error { return lv.StorageVolUpload(vol, r, 0, size, 0) }, r.m, nil); err != nil {
		return err
	}
	if n := r.m.bytes(); n != size {
		return fmt.Errorf("libvirt ended the transfer after %d of %d bytes", n, size)
	}
	return nil
}

// stream runs f, one stream transfer, on a libvirt connection of its own,
// within streamTimeout, and returns when f does, when done is closed (the
// caller has all it asked for), or when m has seen no byte move for
// p.idle (stalled), whichever is first.
//
// go-libvirt (digitalocean/go-libvirt#241, rpc.go's callback and
// requestStream) reads a connection's replies in one goroutine that hands
// each to its call's channel while holding the lock every call takes. A
// stream's call reply and its data packets come from different threads of
// libvirtd, in either order; a packet that arrives when its reader has
// gone, or before it reads, holds that lock for good. Seen here, about
// once in a hundred downloads of a small volume (TestStreamsAreWhole):
// the download returns at once, no error and no byte, or never returns;
// and the connection's every later call hangs (a CI run's teardown waited
// on List forever; another's ConsoleLog for 10 minutes). So a transfer
// has a connection of its own, which a stall takes with it (its
// goroutines are left to the stall), and its callers check what moved
// and make a stalled or short transfer again.
func (p *Provider) stream(ctx context.Context, f func(*golibvirt.Libvirt) error, m *meter, done <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(ctx, streamTimeout)
	defer cancel()
	lv, err := connect(ctx, p.uri)
	if err != nil {
		return err
	}
	defer func() { go func() { _ = lv.Disconnect() }() }() // a stalled connection never lets go
	ch := make(chan error, 1)
	m.touch()
	go func() { ch <- f(lv) }()
	tick := time.NewTicker(max(p.idle/4, 10*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case err := <-ch:
			return err
		case <-done:
			return nil
		case <-tick.C:
			if idle := m.idle(); idle >= p.idle {
				return fmt.Errorf("libvirt moved no byte of the transfer for %v (%d bytes moved): stalled", idle.Round(time.Millisecond), m.bytes())
			}
		case <-ctx.Done():
			return fmt.Errorf("libvirt did not finish the transfer: %w", ctx.Err())
		}
	}
}

// download copies volume v to w: the bytes it has when asked, read on a
// connection of their own (see stream) into memory first, so that neither
// a slow w nor a stalled stream holds a libvirt connection. A transfer
// that stalls or ends short is made again.
func (p *Provider) download(ctx context.Context, v golibvirt.StorageVol, w io.Writer) error {
	_, capacity, _, err := do3(ctx, func() (int8, uint64, uint64, error) { return p.lv.StorageVolGetInfo(v) })
	if err != nil {
		return fmt.Errorf("libvirt: volume %s: %w", v.Name, err)
	}
	var b []byte
	n, err := retryTransfer(ctx, func() error {
		buf := newSizedBuffer(capacity)
		err := p.stream(ctx, func(lv *golibvirt.Libvirt) error { return lv.StorageVolDownload(v, buf, 0, capacity, 0) }, buf.m, buf.full)
		b = buf.bytes()
		if err == nil && uint64(len(b)) != capacity {
			err = fmt.Errorf("libvirt ended the transfer after %d of %d bytes", len(b), capacity)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("libvirt: downloading volume %s (%d attempts): %w", v.Name, n, err)
	}
	_, err = w.Write(b)
	return err
}

// retryTransfer runs transfer until it succeeds, streamAttempts times at
// most, or until ctx ends, and returns how often it ran and its last
// error.
func retryTransfer(ctx context.Context, transfer func() error) (int, error) {
	for attempt := 1; ; attempt++ {
		err := transfer()
		if err == nil || attempt == streamAttempts || ctx.Err() != nil {
			return attempt, err
		}
	}
}

// meter follows a transfer: how many bytes it moved and when it last
// moved one (stream starts its clock).
type meter struct {
	mu   sync.Mutex
	n    uint64
	last time.Time
}

func (m *meter) moved(k int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.n += uint64(k)
	m.last = time.Now()
}

func (m *meter) touch() { m.moved(0) }

func (m *meter) bytes() uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.n
}

func (m *meter) idle() time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	return time.Since(m.last)
}

// meteredReader is an upload's source.
type meteredReader struct {
	r io.Reader
	m *meter
}

func (r *meteredReader) Read(b []byte) (int, error) {
	n, err := r.r.Read(b)
	r.m.moved(n)
	return n, err
}

// sizedBuffer collects want bytes and closes full once it has them; what
// arrives after that (or after bytes was called) is dropped.
type sizedBuffer struct {
	m    *meter
	mu   sync.Mutex
	b    []byte
	want uint64
	full chan struct{}
	done bool
}

func newSizedBuffer(want uint64) *sizedBuffer {
	s := &sizedBuffer{m: &meter{}, want: want, full: make(chan struct{})}
	if want == 0 {
		s.done = true
		close(s.full)
	}
	return s
}

func (s *sizedBuffer) Write(b []byte) (int, error) {
	s.m.moved(len(b))
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return len(b), nil
	}
	s.b = append(s.b, b...)
	if uint64(len(s.b)) >= s.want {
		s.b = s.b[:s.want]
		s.done = true
		close(s.full)
	}
	return len(b), nil
}

func (s *sizedBuffer) bytes() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.done {
		s.done = true
		close(s.full)
	}
	return s.b
}

// do3 is do for libvirt calls of three results.
func do3[A, B, C any](ctx context.Context, f func() (A, B, C, error)) (A, B, C, error) {
	type r3 struct {
		a A
		b B
		c C
	}
	r, err := do(ctx, func() (r3, error) {
		a, b, c, err := f()
		return r3{a, b, c}, err
	})
	return r.a, r.b, r.c, err
}
