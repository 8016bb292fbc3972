package nodeimage

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/winconform/winconform/images/assemble"
	"github.com/winconform/winconform/infra/metallb"
)

const imagePath = "PATH=/usr/local/bin:/usr/local/sbin:/usr/bin:/usr/sbin:/bin:/sbin"

var passwd = assemble.Entry{Path: "/etc/passwd", Mode: 0o644,
	Data: []byte("root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n")}

var tmpDir = assemble.Entry{Path: "/tmp", Dir: true, Mode: 0o1777}

// componentImages makes every image kubeadm lists, plus flannel's and
// MetalLB's controller and speaker, and writes them as one archive for the
// node's containerd. The kube-proxy and flannel images carry Debian's
// iptables, with the wrapper that picks the node's back end.
func (b *build) componentImages(ctx context.Context) (string, error) {
	work := filepath.Join(b.spec.CacheDir, "work", b.spec.inputs()[:12])
	os.RemoveAll(work)
	if err := os.MkdirAll(work, 0o755); err != nil {
		return "", err
	}
	ipt, err := b.iptablesEntries(ctx)
	if err != nil {
		return "", err
	}
	bin := func(src, dst string) assemble.Entry { return assemble.Entry{Path: dst, Source: src} }
	specs := map[string]struct {
		entries []assemble.Entry
		cfg     assemble.Config
	}{
		"kube-apiserver":          {[]assemble.Entry{bin(b.bins.kube["kube-apiserver"], "/usr/local/bin/kube-apiserver")}, assemble.Config{}},
		"kube-controller-manager": {[]assemble.Entry{bin(b.bins.kube["kube-controller-manager"], "/usr/local/bin/kube-controller-manager")}, assemble.Config{}},
		"kube-scheduler":          {[]assemble.Entry{bin(b.bins.kube["kube-scheduler"], "/usr/local/bin/kube-scheduler")}, assemble.Config{}},
		"etcd":                    {[]assemble.Entry{bin(b.bins.kube["etcd"], "/usr/local/bin/etcd")}, assemble.Config{}},
		"coredns":                 {[]assemble.Entry{bin(b.bins.coredns, "/coredns")}, assemble.Config{Entrypoint: []string{"/coredns"}}},
		"pause":                   {[]assemble.Entry{bin(b.bins.pause, "/pause")}, assemble.Config{Entrypoint: []string{"/pause"}}},
		"kube-proxy":              {append([]assemble.Entry{bin(b.bins.kube["kube-proxy"], "/usr/local/bin/kube-proxy")}, ipt...), assemble.Config{}},
	}
	refs := map[string]v1.Image{}
	for _, ref := range b.bins.images {
		repo := ref[:strings.LastIndex(ref, ":")]
		s, ok := specs[repo[strings.LastIndex(repo, "/")+1:]]
		if !ok {
			return "", fmt.Errorf("kubeadm lists %s, which the node image recipe does not know how to make", ref)
		}
		img, err := componentImage(work, s.entries, s.cfg)
		if err != nil {
			return "", fmt.Errorf("%s: %w", ref, err)
		}
		refs[ref] = img
	}
	// kind's containerd configuration names its own sandbox image.
	sandbox, err := sandboxImage(filepath.Join(b.rootfs, "etc/containerd/config.toml"))
	if err != nil {
		return "", err
	}
	pauseTag, _ := imageTag(b.bins.images, "pause")
	if _, ok := refs[sandbox]; !ok {
		refs[sandbox] = refs["registry.k8s.io/pause:"+pauseTag]
	}
	flannel, err := componentImage(work, append([]assemble.Entry{
		bin(b.bins.flanneld, "/opt/bin/flanneld"),
		bin(b.bins.installConf, "/opt/bin/install-conf"),
	}, ipt...), assemble.Config{Entrypoint: []string{"/opt/bin/flanneld"},
		Env: []string{"PATH=/opt/bin:/usr/local/bin:/usr/local/sbin:/usr/bin:/usr/sbin:/bin:/sbin"}})
	if err != nil {
		return "", fmt.Errorf("flannel: %w", err)
	}
	refs[FlannelImage()] = flannel
	mlb := metallb.LocalImages()
	for ref, name := range map[string]string{mlb.Controller: "controller", mlb.Speaker: "speaker"} {
		img, err := componentImage(work, []assemble.Entry{bin(b.bins.metallb[name], "/"+name)},
			assemble.Config{Entrypoint: []string{"/" + name}})
		if err != nil {
			return "", fmt.Errorf("metallb %s: %w", name, err)
		}
		refs[ref] = img
	}
	archive := filepath.Join(work, "images.tar")
	return archive, assemble.WriteArchiveFile(archive, refs)
}

func componentImage(work string, entries []assemble.Entry, cfg assemble.Config) (v1.Image, error) {
	layer, err := assemble.Layer(work, append(entries, passwd, tmpDir))
	if err != nil {
		return nil, err
	}
	if cfg.Env == nil {
		cfg.Env = []string{imagePath}
	}
	return assemble.Image(nil, layer, cfg)
}

// sandboxRe finds the sandbox image in containerd's configuration. kind's
// file is in containerd's version 2 format (sandbox_image in the table of
// the plugin io.containerd.grpc.v1.cri); containerd 2 migrates it on load
// to the later formats' sandbox key of io.containerd.cri.v1.images'
// pinned_images (containerd v2.3.7 plugins/cri/images/plugin.go, its
// TestSandboxImageConfigMigration), which `containerd config default`
// writes single-quoted (version 4, containerd 2.3's current one).
var sandboxRe = regexp.MustCompile(`(?m)^\s*(?:sandbox_image|sandbox)\s*=\s*(?:"([^"]+)"|'([^']+)')`)

func sandboxImage(configPath string) (string, error) {
	data, err := os.ReadFile(configPath)
	if err != nil {
		return "", err
	}
	m := sandboxRe.FindSubmatch(data)
	if m != nil && len(m[1]) == 0 {
		m[1] = m[2]
	}
	if m == nil {
		return "", fmt.Errorf("%s names no sandbox image (sandbox_image or pinned_images' sandbox)", configPath)
	}
	return string(m[1]), nil
}

// iptablesEntries are Debian's iptables (both back ends), conntrack, every
// xtables extension, and the shared libraries all of them load, from the
// node's root file system; the plain command names go to the wrapper.
func (b *build) iptablesEntries(ctx context.Context) ([]assemble.Entry, error) {
	r := b.rootfs
	const lib = "/usr/lib/x86_64-linux-gnu"
	var entries []assemble.Entry
	for _, bin := range []string{"xtables-legacy-multi", "xtables-nft-multi", "conntrack"} {
		entries = append(entries, assemble.Entry{Path: "/usr/sbin/" + bin, Source: filepath.Join(r, "usr/sbin", bin)})
	}
	entries = append(entries, assemble.Entry{Path: "/usr/sbin/iptables-wrapper", Source: b.bins.wrapper})
	for _, fam := range []string{"iptables", "ip6tables"} {
		for _, suffix := range []string{"", "-save", "-restore"} {
			entries = append(entries,
				assemble.Entry{Path: "/usr/sbin/" + fam + "-legacy" + suffix, Link: "xtables-legacy-multi"},
				assemble.Entry{Path: "/usr/sbin/" + fam + "-nft" + suffix, Link: "xtables-nft-multi"},
				assemble.Entry{Path: "/usr/sbin/" + fam + suffix, Link: "iptables-wrapper"})
		}
	}
	exts, _ := filepath.Glob(filepath.Join(r, lib, "xtables", "*.so"))
	if len(exts) == 0 {
		return nil, fmt.Errorf("no xtables extensions under %s", filepath.Join(r, lib, "xtables"))
	}
	for _, e := range exts {
		entries = append(entries, assemble.Entry{Path: lib + "/xtables/" + filepath.Base(e), Source: e, Mode: 0o644})
	}
	libs, err := sharedLibraries(ctx, r, "/usr/sbin/xtables-legacy-multi /usr/sbin/xtables-nft-multi /usr/sbin/conntrack "+lib+"/xtables/*.so")
	if err != nil {
		return nil, err
	}
	for name, resolved := range libs {
		dst := lib + "/" + name
		if name == "ld-linux-x86-64.so.2" {
			dst = "/lib64/" + name
		}
		entries = append(entries, assemble.Entry{Path: dst, Source: filepath.Join(r, resolved)})
	}
	return append(entries,
		assemble.Entry{Path: "/lib", Link: "usr/lib"},
		assemble.Entry{Path: "/sbin", Link: "usr/sbin"},
		assemble.Entry{Path: "/run", Dir: true},
	), nil
}

// sharedLibraries returns, for the files matching glob inside root, the name
// under which each needed library is loaded and its real path in root. The
// extensions count: libxt_statistic.so needs libm, which no binary does.
func sharedLibraries(ctx context.Context, root, glob string) (map[string]string, error) {
	script := `for f in $(ldd ` + glob + ` 2>/dev/null | grep -o '/[^ ]*\.so[^ :]*' | grep -v /xtables/ | sort -u); do echo "$f $(readlink -f $f)"; done`
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, "chroot", root, "/bin/sh", "-c", script)
	cmd.Stdout = &out
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("listing iptables' shared libraries: %w", err)
	}
	libs := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		f := strings.Fields(line)
		if len(f) == 2 {
			libs[filepath.Base(f[0])] = f[1]
		}
	}
	for _, need := range []string{"libc.so.6", "libm.so.6", "ld-linux-x86-64.so.2", "libxtables.so.12"} {
		if _, ok := libs[need]; !ok {
			names := make([]string, 0, len(libs))
			for n := range libs {
				names = append(names, n)
			}
			sort.Strings(names)
			return nil, fmt.Errorf("iptables' libraries lack %s (found %v)", need, names)
		}
	}
	return libs, nil
}
