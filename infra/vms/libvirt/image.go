package libvirt

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/winconform/winconform/config"
)

// CheckImage refuses, before any machine is made, a golden image QEMU
// could not open: a volume the pool does not have; on a local libvirtd, a
// path that is missing, a directory, or a file the user QEMU runs as (the
// DAC label libvirt gives its domains: libvirt-qemu on Debian) cannot
// read, for want of search permission on a directory on the way or read
// permission on the file. Without it, the overlay's qemu-img failed on a
// directory, and a domain's start on "Permission denied". A path on a
// remote host is not checked here (it is not this machine's).
func (p *Provider) CheckImage(ctx context.Context, image string) error {
	fix := "set image to a volume of pool " + p.s.Pool + " (winconform images import, or virsh vol-upload), or to a path the user QEMU runs as can read"
	switch {
	case image == "":
		return nil
	case !filepath.IsAbs(image):
		if _, err := p.hostPath(ctx, image); err != nil {
			return config.Problem(field.NewPath("image"), err.Error(), fix, nil)
		}
		return nil
	case p.uri.Host != "":
		return nil
	}
	st, err := os.Stat(image)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return config.Problem(field.NewPath("image"), fmt.Sprintf("%s does not exist", image), fix, nil)
	case err != nil:
		return config.Problem(field.NewPath("image"), err.Error(), fix, nil)
	case st.IsDir():
		return config.Problem(field.NewPath("image"), fmt.Sprintf("%s is a directory, not a qcow2 image", image), "name the golden qcow2 file in it; or "+fix, nil)
	}
	uid, gid, err := p.qemuUser(ctx)
	if err != nil {
		return nil // libvirt does not say: QEMU's start will
	}
	if why := unreadable(image, uid, groupsOf(uid, gid)); why != "" {
		who := strconv.Itoa(uid)
		if u, err := user.LookupId(who); err == nil {
			who = u.Username + " (uid " + who + ")"
		}
		return config.Problem(field.NewPath("image"), fmt.Sprintf("QEMU runs as %s and cannot read %s: %s", who, image, why), fix, nil)
	}
	return nil
}

// qemuUser is the uid and gid libvirt runs the domains of p's type as: the
// DAC security model's base label in its capabilities ("+64055:+64055").
func (p *Provider) qemuUser(ctx context.Context) (int, int, error) {
	data, err := do(ctx, func() ([]byte, error) { return p.lv.Capabilities() })
	if err != nil {
		return 0, 0, err
	}
	return dacLabel(data, p.accel)
}

// dacLabel reads the DAC base label of domain type typ from libvirt's
// capabilities XML.
func dacLabel(capabilities []byte, typ string) (int, int, error) {
	var caps struct {
		Models []struct {
			Model  string `xml:"model"`
			Labels []struct {
				Type  string `xml:"type,attr"`
				Value string `xml:",chardata"`
			} `xml:"baselabel"`
		} `xml:"host>secmodel"`
	}
	if err := xml.Unmarshal(capabilities, &caps); err != nil {
		return 0, 0, err
	}
	for _, m := range caps.Models {
		if m.Model != "dac" {
			continue
		}
		for _, l := range m.Labels {
			if l.Type != typ {
				continue
			}
			u, g, ok := strings.Cut(strings.TrimSpace(l.Value), ":")
			uid, err1 := strconv.Atoi(strings.TrimPrefix(u, "+"))
			gid, err2 := strconv.Atoi(strings.TrimPrefix(g, "+"))
			if !ok || err1 != nil || err2 != nil {
				return 0, 0, fmt.Errorf("the DAC label %q is not uid:gid", l.Value)
			}
			return uid, gid, nil
		}
	}
	return 0, 0, fmt.Errorf("libvirt's capabilities have no DAC label for %s domains", typ)
}

// groupsOf is gid and the groups of the user of uid.
func groupsOf(uid, gid int) []int {
	out := []int{gid}
	u, err := user.LookupId(strconv.Itoa(uid))
	if err != nil {
		return out
	}
	ids, _ := u.GroupIds()
	for _, id := range ids {
		if g, err := strconv.Atoi(id); err == nil && g != gid {
			out = append(out, g)
		}
	}
	return out
}

// unreadable says why the user uid of groups gids cannot read the file at
// path ("" when it can): the first directory on the way it may not search,
// or the file it may not read, by their mode bits (root reads anything).
func unreadable(path string, uid int, gids []int) string {
	if uid == 0 {
		return ""
	}
	may := func(p string, bit os.FileMode) (bool, string) {
		st, err := os.Stat(p)
		if err != nil {
			return false, err.Error()
		}
		sys, ok := st.Sys().(*syscall.Stat_t)
		if !ok {
			return true, ""
		}
		mode := st.Mode().Perm()
		switch {
		case int(sys.Uid) == uid:
			return mode&(bit<<6) != 0, fmt.Sprintf("%s is mode %04o, its owner's", p, mode)
		case containsInt(gids, int(sys.Gid)):
			return mode&(bit<<3) != 0, fmt.Sprintf("%s is mode %04o, group %d's", p, mode, sys.Gid)
		}
		return mode&bit != 0, fmt.Sprintf("%s is mode %04o, owner %d group %d, and QEMU's user is neither", p, mode, sys.Uid, sys.Gid)
	}
	dir := filepath.Dir(path)
	var dirs []string
	for d := dir; ; d = filepath.Dir(d) {
		dirs = append([]string{d}, dirs...)
		if d == filepath.Dir(d) {
			break
		}
	}
	for _, d := range dirs {
		if ok, why := may(d, 0o1); !ok {
			return "it may not enter " + d + " (" + why + ")"
		}
	}
	if ok, why := may(path, 0o4); !ok {
		return "it may not read the file (" + why + ")"
	}
	return ""
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
