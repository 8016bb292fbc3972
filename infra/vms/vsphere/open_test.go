package vsphere_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/session"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/winconform/winconform/config"
	"github.com/winconform/winconform/infra/vms"
	"github.com/winconform/winconform/infra/vms/vsphere"
	"github.com/winconform/winconform/testing/configtest"
)

// fieldError asserts err is a problem of field saying want, with a fix
// and no password.
func fieldError(t *testing.T, err error, field, want string) {
	t.Helper()
	configtest.Refused(t, err, field, want)
	noSecret(t, err)
}

// Every problem with the connection or the settings is an error of Open,
// naming the field and the fix, before any machine is made.
func TestOpenRefuses(t *testing.T) {
	withVCenter(t, func(v *vcenter) {
		other := writePEM(t, "other-ca.pem", otherCA(t))
		tests := []struct {
			name, block string
			edit        func(string) string
			field, want string
		}{
			{"wrong password", stdBlock, func(s string) string { return strings.Replace(s, "VSPHERE_PASSWORD", "WRONG_PASSWORD", 1) },
				"connection.credentials[password]", "incorrect user name or password"},
			{"unknown user", stdBlock, func(s string) string { return strings.Replace(s, vcUser, "nobody@vsphere.local", 1) },
				"connection.credentials[password]", `refused user "nobody@vsphere.local"`},
			{"untrusted certificate", "  cluster: DC0_C0\n", nil, "vsphere.caBundle", "not trusted"},
			{"another CA", "  cluster: DC0_C0\n  caBundle: " + other + "\n", nil, "vsphere.caBundle", "not signed by a CA of " + other},
			{"unknown datacenter", stdBlock + "  datacenter: DC9\n", nil, "vsphere.datacenter", `no datacenter "DC9"`},
			{"unknown datacenter's choices", stdBlock + "  datacenter: DC9\n", nil, "vsphere.datacenter", "one of DC0"},
			{"no cluster with two pools", "  insecure: true\n", nil, "vsphere.cluster", "more than one cluster or host"},
			{"unknown cluster", "  cluster: C9\n  insecure: true\n", nil, "vsphere.cluster", "one of DC0_C0"},
			{"unknown resource pool", stdBlock + "  resourcePool: nightly\n", nil, "vsphere.resourcePool", `no resource pool "nightly"`},
			{"unknown host", stdBlock + "  host: esx9\n", nil, "vsphere.host", "DC0_C0_H1"},
			{"unknown datastore", stdBlock + "  datastore: ds9\n", nil, "vsphere.datastore", "one of LocalDS_0"},
			{"unknown network", stdBlock + "  network: lab\n", nil, "vsphere.network", "VM Network"},
			{"unknown folder", stdBlock + "  folder: ci\n", nil, "vsphere.folder", `no VM folder "ci"`},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				src := v.file(tc.block)
				if tc.edit != nil {
					src = tc.edit(src)
				}
				p, err := vms.Open(v.ctx, parse(t, src))
				if err == nil {
					p.Close()
					t.Fatal("Open succeeded")
				}
				t.Logf("Open: %v", err)
				fieldError(t, err, tc.field, tc.want)
			})
		}

		// The vCenter's own certificate (as a user downloads it) is
		// trusted through caBundle.
		ca := writePEM(t, "vcenter-ca.pem", serverCert(t, v.host))
		if _, _, err := v.open("  cluster: DC0_C0\n  caBundle: " + ca + "\n"); err != nil {
			t.Errorf("Open with the vCenter's certificate as caBundle: %v", err)
		}
	})
}

func TestOpenUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	v := &vcenter{t: t, host: addr}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	_, err = vms.Open(ctx, parse(t, v.file(stdBlock)))
	t.Logf("Open: %v", err)
	fieldError(t, err, "connection.endpoint", "connection refused")
}

// A vCenter that accepts the connection and never answers is an error when
// Open's context ends, not a hang.
func TestOpenGivesUpOnASilentEndpoint(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close() // held open, silent
		}
	}()
	v := &vcenter{t: t, host: l.Addr().String()}
	ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = vms.Open(ctx, parse(t, v.file(stdBlock)))
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Open took %s after its context ended", d)
	}
	t.Logf("Open: %v", err)
	fieldError(t, err, "connection.endpoint", "cannot reach the vCenter")
}

// An ESXi host answers the same API, but has no templates or clones.
func TestOpenRefusesAnESXiHost(t *testing.T) {
	m := simulator.ESX()
	if err := m.Create(); err != nil {
		t.Fatal(err)
	}
	m.Service.TLS = new(tls.Config)
	m.Service.Listen = &url.URL{User: url.UserPassword(vcUser, vcPassword)}
	if err := m.Run(func(_ context.Context, c *vim25.Client) error {
		v := &vcenter{t: t, host: c.URL().Host}
		_, err := vms.Open(t.Context(), parse(t, v.file("  insecure: true\n")))
		t.Logf("Open: %v", err)
		fieldError(t, err, "connection.endpoint", "not a vCenter")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// A template that is not there, has no snapshot, or not the one named,
// is an error of Create naming image or vsphere.snapshot, before any clone.
func TestCreateRefusesBadImage(t *testing.T) {
	withVCenter(t, func(v *vcenter) {
		// A template imported and marked without a snapshot, as
		// image-builder's Windows build leaves it.
		bare := v.find("DC0_H0_VM0")
		v.wait(bare.PowerOff(v.ctx))
		v.must(bare.MarkAsTemplate(v.ctx))
		tests := []struct {
			name, block, image string
			field, want        string
		}{
			{"unknown template", stdBlock, "windows-2019", "image", `no template "windows-2019"`},
			{"template without snapshot", stdBlock, "DC0_H0_VM0", "image", "has no snapshot"},
			{"unknown snapshot", stdBlock + "  snapshot: kube-1.35\n", tplName, "vsphere.snapshot", `no snapshot "kube-1.35"`},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				f, p := v.provider(tc.block)
				s := spec(f, "bad", 1)
				s.Image = tc.image
				_, err := p.Create(v.ctx, s)
				t.Logf("Create: %v", err)
				fieldError(t, err, tc.field, tc.want)
				if v.exists(s.Name) {
					t.Errorf("%s was made", s.Name)
				}
			})
		}
		v.tpl.mu.Lock()
		defer v.tpl.mu.Unlock()
		if len(v.tpl.specs) != 0 {
			t.Errorf("the template was cloned %d times", len(v.tpl.specs))
		}
	})
}

// The VM file's vsphere block and connection are checked when it is
// loaded.
func TestVMFileRefuses(t *testing.T) {
	v := &vcenter{t: t, host: "vcenter.lab.example"}
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "ca.txt")
	if err := os.WriteFile(notPEM, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	good := v.file(stdBlock)
	tests := []struct {
		name, src   string
		field, want string
	}{
		{"template in the block", good + "  template: x\n", "vsphere.template", "the template is the VM file's image"},
		{"caBundle and insecure", v.file("  caBundle: " + notPEM + "\n  insecure: true\n"), "vsphere.insecure", "is set with caBundle"},
		{"caBundle missing", v.file("  caBundle: nowhere.pem\n"), "vsphere.caBundle", "does not exist"},
		{"caBundle not PEM", v.file("  caBundle: " + notPEM + "\n"), "vsphere.caBundle", "holds no PEM certificate"},
		{"insecure not a bool", v.file("  insecure: please\n"), "vsphere.insecure", "not true or false"},
		{"unknown setting", good + "  datacentre: DC0\n", "vsphere.datacentre", `did you mean "datacenter"`},
		{"block not a mapping", strings.Replace(good, "vsphere:\n"+stdBlock, "vsphere: DC0\n", 1), "vsphere", "not a mapping"},
		{"http endpoint", strings.Replace(good, "endpoint: vcenter.lab.example", "endpoint: http://vcenter.lab.example/sdk", 1), "connection.endpoint", "not an https URL"},
		{"password in the endpoint", strings.Replace(good, "endpoint: vcenter.lab.example", "endpoint: https://root:"+vcPassword+"@vcenter.lab.example", 1), "connection.endpoint", "holds a password inside a URL"},
		{"user in the endpoint", strings.Replace(good, "endpoint: vcenter.lab.example", "endpoint: https://root@vcenter.lab.example", 1), "connection.endpoint", "inline credential is refused"},
		{"no user", strings.Replace(good, "  user: "+vcUser+"\n", "", 1), "connection.user", "is missing"},
		{"no password", strings.Replace(good, "    password: {env: VSPHERE_PASSWORD}\n", "    token: {env: VSPHERE_PASSWORD}\n", 1), "connection.credentials[password]", "is missing"},
		{"password inline", strings.Replace(good, "{env: VSPHERE_PASSWORD}", vcPassword, 1), "connection.credentials[password]", "inline secret is refused"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := config.Parse[config.Machines](filepath.Join(dir, "vms.yaml"), []byte(tc.src), env)
			noSecret(t, err)
			configtest.Refused(t, err, tc.field, tc.want)
		})
	}
	// The endpoint's forms: a name, a URL without a path, a URL.
	for _, ep := range []string{"vcenter.lab.example", "https://vcenter.lab.example", "https://vcenter.lab.example:8443/sdk"} {
		if _, err := config.Parse[config.Machines]("vms.yaml", []byte(strings.Replace(good, "endpoint: vcenter.lab.example", "endpoint: "+ep, 1)), env); err != nil {
			t.Errorf("endpoint %s: %v", ep, err)
		}
	}
}

// serverCert is the certificate host serves.
func serverCert(t *testing.T, host string) []byte {
	t.Helper()
	conn, err := tls.Dial("tcp", host, &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0].Raw
}

// otherCA is a CA certificate that signed nothing of the vCenter's.
func otherCA(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "another CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

func writePEM(t *testing.T, name string, der []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// vCenter ends an API session idle for config.vmacore.soap.sessionTimeout
// (30 minutes by default: williamlam.com/2022/10/vsphere-session-timeout-overview.html,
// VMware KB 1031039), and vcsim honours the same option; a run deletes its
// machines hours after it made them. The provider keeps its session alive
// while it is open, logs in again when the vCenter ends it anyway (it
// restarted, an administrator ended it), and logs out on Close: sessions
// left behind count against the vCenter's limit
// (config.vmacore.soap.maxSessionCount) until they time out.
func TestSessionKeptAliveRenewedAndLoggedOut(t *testing.T) {
	withVCenter(t, func(v *vcenter) {
		om := object.NewOptionManager(v.c, *v.c.ServiceContent.Setting)
		v.must(om.Update(v.ctx, []types.BaseOptionValue{&types.OptionValue{Key: "config.vmacore.soap.sessionTimeout", Value: "500ms"}}))
		admin := v.sessionKeys()
		restore := vsphere.SetKeepAliveIdle(time.Hour)
		_, idle := v.provider(stdBlock)
		restore()
		idleKey := v.newSession(admin)
		defer vsphere.SetKeepAliveIdle(100 * time.Millisecond)()
		_, kept := v.provider(stdBlock)
		keptKey := v.newSession(append(admin, idleKey))

		time.Sleep(1500 * time.Millisecond)
		keys := v.sessionKeys()
		if slices.Contains(keys, idleKey) {
			t.Fatal("a session idle past the timeout is still there: the simulator does not end idle sessions, and this test shows nothing")
		}
		if !slices.Contains(keys, keptKey) {
			t.Errorf("the provider's session ended while it was open: it was not kept alive")
		}
		if _, err := idle.List(v.ctx); err != nil {
			t.Errorf("List after the vCenter ended the session: %v, want it logged in again", err)
		}
		v.must(session.NewManager(v.c).TerminateSession(v.ctx, []string{keptKey}))
		if _, err := kept.List(v.ctx); err != nil {
			t.Errorf("List after an administrator ended the session: %v, want it logged in again", err)
		}

		v.must(idle.Close())
		v.must(kept.Close())
		if keys := v.sessionKeys(); len(keys) != len(admin) {
			t.Errorf("%d sessions after Close, want %d: the provider's sessions are left behind", len(keys), len(admin))
		}
	})
}

// sessionKeys are the keys of the vCenter's sessions.
func (v *vcenter) sessionKeys() []string {
	var sm mo.SessionManager
	v.must(property.DefaultCollector(v.c).RetrieveOne(v.ctx, *v.c.ServiceContent.SessionManager, []string{"sessionList"}, &sm))
	var keys []string
	for _, s := range sm.SessionList {
		keys = append(keys, s.Key)
	}
	return keys
}

// newSession is the one session key not in before.
func (v *vcenter) newSession(before []string) string {
	v.t.Helper()
	var added []string
	for _, k := range v.sessionKeys() {
		if !slices.Contains(before, k) {
			added = append(added, k)
		}
	}
	if len(added) != 1 {
		v.t.Fatalf("%d new sessions, want 1", len(added))
	}
	return added[0]
}
