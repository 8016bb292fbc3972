package hyperv

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/winconform/winconform/config"
	"github.com/winconform/winconform/infra/vms"
	"github.com/winconform/winconform/infra/windows/remote"
	"github.com/winconform/winconform/internal/runid"
)

// Name is the provider's name: the VM file's provider and its block.
const Name = "hyperv"

func init() {
	vms.Register(config.Provider{Name: Name, Summary: "a Hyper-V host (over WinRM)", Endpoint: config.Required, EndpointExample: "hv01.lab",
		User: config.Required, Credentials: []config.Credential{{Name: "password", Required: true}}}, Open)
}

// How long each script may take when the caller's context sets no earlier
// deadline. Create waits for New-VHD, New-VM and Start-VM; Delete for
// Stop-VM -TurnOff, Remove-VM and the files' removal (with its retries).
const (
	createTimeout = 10 * time.Minute
	deleteTimeout = 5 * time.Minute
	queryTimeout  = 2 * time.Minute
)

// Provider makes the harness's VMs on one Hyper-V host, running the
// embedded scripts over WinRM.
type Provider struct {
	host     *remote.WinRM
	endpoint string
	settings Settings
}

var (
	_ vms.Provider      = (*Provider)(nil)
	_ vms.ConsoleLogger = (*Provider)(nil)
)

// Open reaches the host over WinRM and checks, before any VM is made, that
// it takes the credentials, has Hyper-V and lets the account use it, and
// has the switch and the VHDX directory the VM file names.
func Open(ctx context.Context, f *vms.File, s *Settings) (vms.Provider, error) {
	cfg := f.Connection
	host, err := remote.NewWinRM(remote.Config{
		Name:          cfg.Endpoint,
		Address:       cfg.Endpoint,
		Port:          int(s.WinRM.Port),
		HTTPS:         s.WinRM.HTTPS,
		Insecure:      s.WinRM.Insecure,
		CABundle:      s.WinRM.CABundle.PEM,
		TLSServerName: s.WinRM.TLSServerName,
		Auth:          s.WinRM.Auth,
		User:          cfg.User,
		Password:      cfg.Credentials["password"].Secret.Reveal(),
	})
	if err != nil {
		return nil, err
	}
	p := &Provider{host: host, endpoint: cfg.Endpoint, settings: *s}
	var st hostStatus
	if err := p.run(ctx, queryTimeout, scriptHost, &st, param{"VhdxDir", s.VHDXDir}, param{"Switch", s.Switch}); err != nil {
		_ = host.Close()
		return nil, p.openError(cfg, err)
	}
	if err := p.checkHost(st); err != nil {
		_ = host.Close()
		return nil, err
	}
	return p, nil
}

type hostStatus struct {
	Computer     string   `json:"computer"`
	HyperV       bool     `json:"hyperV"`
	Access       string   `json:"access"`
	Switches     []string `json:"switches"`
	SwitchFound  bool     `json:"switchFound"`
	VHDXDirFound bool     `json:"vhdxDirFound"`
}

// openError makes a failure to reach the host a config.Problem naming the
// field at fault.
func (p *Provider) openError(cfg config.Connection, err error) error {
	where := fmt.Sprintf("the Hyper-V host %s (WinRM %s, port %d)", p.endpoint, scheme(p.settings.WinRM.HTTPS), p.settings.WinRM.Port)
	switch {
	case errors.Is(err, remote.ErrAuth):
		return config.Problem(field.NewPath("connection", "credentials").Key("password"), fmt.Sprintf("%s refused the credentials of %s", where, cfg.User),
			"check connection.user (a local account, or DOMAIN\\user) and the password connection.credentials.password references", err)
	case errors.Is(err, remote.ErrTLS):
		return config.Problem(field.NewPath("hyperv", "winrm", "caBundle"), fmt.Sprintf("the TLS handshake with %s failed: %v", where, err),
			"set hyperv.winrm.caBundle to the CA that issued the host's WinRM certificate (and tlsServerName to its name), or use https: false", err)
	case errors.Is(err, remote.ErrUnreachable), errors.Is(err, remote.ErrTimeout), errors.Is(err, remote.ErrConnLost):
		return config.Problem(field.NewPath("connection", "endpoint"), fmt.Sprintf("cannot reach %s: %v", where, err),
			"check the host's name, that it is up, and that its WinRM listener answers there (winrm quickconfig; hyperv.winrm.port and https must match it)", err)
	}
	return fmt.Errorf("checking the Hyper-V host %s: %w", p.endpoint, err)
}

// checkHost turns what hyperv-host found into the VM file's fields at fault.
func (p *Provider) checkHost(st hostStatus) error {
	switch {
	case !st.HyperV:
		return config.Problem(field.NewPath("connection", "endpoint"), fmt.Sprintf("%s (%s) has no Hyper-V module: it is not a Hyper-V host", p.endpoint, st.Computer),
			"point endpoint at a Hyper-V host, or install the role and its tools there (Install-WindowsFeature Hyper-V -IncludeManagementTools)", nil)
	case st.Access != "":
		return config.Problem(field.NewPath("connection", "user"), fmt.Sprintf("the account may not use Hyper-V on %s: %s", p.endpoint, firstLine(st.Access)),
			"use an account of the host's Administrators or Hyper-V Administrators group", nil)
	case !st.SwitchFound:
		have := "the host has no virtual switch"
		if len(st.Switches) > 0 {
			have = "the host's switches are " + strings.Join(st.Switches, ", ")
		}
		return config.Problem(field.NewPath("hyperv", "switch"), fmt.Sprintf("%q is not a virtual switch of %s (%s)", p.settings.Switch, p.endpoint, have),
			"set switch to one of the host's switches (Get-VMSwitch), or make it (New-VMSwitch)", nil)
	case !st.VHDXDirFound:
		return config.Problem(field.NewPath("hyperv", "vhdxDir"), fmt.Sprintf("%s is not a directory on %s", p.settings.VHDXDir, p.endpoint),
			"create it on the host (New-Item -ItemType Directory), on a volume with room for the VMs' disks, or fix the path", nil)
	}
	return nil
}

// Close closes the connections to the host.
func (p *Provider) Close() error { return p.host.Close() }

// imagePath is the golden image: a VHDX (or, for generation 1, a VHD) on
// the host's own disks.
var imagePath = regexp.MustCompile(`(?i)^[a-z]:\\[^<>:"/|?*\x00-\x1f]+\.(vhdx|vhd)$`)

// machineName is a machine's name: a lower-case DNS label.
var machineName = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?$`)

// checkSpec refuses a spec the host could not make, before any remote work.
func (p *Provider) checkSpec(spec vms.Spec) error {
	var problems []string
	if !machineName.MatchString(spec.Name) || len(spec.Name) > 63 {
		problems = append(problems, fmt.Sprintf("the name %q is not a lower-case DNS label", spec.Name))
	}
	if err := runid.Check(spec.RunID); err != nil {
		problems = append(problems, err.Error())
	}
	switch img := spec.Image; {
	case strings.HasPrefix(img, `\\`):
		problems = append(problems, fmt.Sprintf(`image %q is a network path: over WinRM the host cannot reach a share with the harness's credentials (the second hop); copy the golden VHDX to the host's own disks`, img))
	case !imagePath.MatchString(img):
		problems = append(problems, fmt.Sprintf(`image %q is not the path of a VHDX on the host, such as D:\golden\win2022.vhdx`, img))
	case p.settings.Generation == 2 && !strings.EqualFold(img[len(img)-5:], ".vhdx"):
		problems = append(problems, fmt.Sprintf("image %q is a VHD: a generation 2 VM boots only from a VHDX (convert it with Convert-VHD, or set hyperv.generation: 1)", img))
	}
	if spec.CPUs < 1 {
		problems = append(problems, fmt.Sprintf("%d CPUs is not a number of CPUs", spec.CPUs))
	}
	if spec.MemoryMiB < 32 {
		problems = append(problems, fmt.Sprintf("%d MiB of memory is less than Hyper-V's least (32 MiB)", spec.MemoryMiB))
	}
	if len(problems) > 0 {
		return fmt.Errorf("hyperv: machine %s: %s", spec.Name, strings.Join(problems, "; "))
	}
	return nil
}

type createStatus struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Created string `json:"created"`
	Stage   string `json:"stage"`
	Error   string `json:"error"`
	Left    bool   `json:"left"`
}

// Create makes the machine: a differencing disk of the golden image, the
// VM on it, tagged in its Notes by the same script, started.
func (p *Provider) Create(ctx context.Context, spec vms.Spec) (vms.Machine, error) {
	if err := p.checkSpec(spec); err != nil {
		return vms.Machine{}, err
	}
	var st createStatus
	err := p.run(ctx, createTimeout, scriptCreate, &st,
		param{"Name", spec.Name}, param{"RunID", spec.RunID}, param{"Image", spec.Image},
		param{"VhdxDir", p.settings.VHDXDir}, param{"Switch", p.settings.Switch},
		param{"Generation", strconv.Itoa(p.settings.Generation)}, param{"SecureBootTemplate", p.settings.SecureBootTemplate},
		param{"CPUs", strconv.Itoa(spec.CPUs)}, param{"MemoryBytes", strconv.FormatInt(int64(spec.MemoryMiB)<<20, 10)},
		param{"Notes", formatNotes(spec.Tags())})
	if err != nil {
		return vms.Machine{}, fmt.Errorf("hyperv: creating machine %s on %s: %w", spec.Name, p.endpoint, err)
	}
	if st.Error != "" {
		return vms.Machine{}, p.createError(spec, st)
	}
	created, err := time.Parse(time.RFC3339Nano, st.Created)
	if err != nil || st.ID == "" {
		return vms.Machine{}, fmt.Errorf("hyperv: creating machine %s on %s: the host answered id %q and creation time %q", spec.Name, p.endpoint, st.ID, st.Created)
	}
	return vms.Machine{ID: strings.ToLower(st.ID), Name: st.Name, RunID: spec.RunID, Created: created.UTC()}, nil
}

// Win32 errors in Hyper-V's messages, as "(0x800700NN)".
const (
	errDiskFull       = "0x80070070" // ERROR_DISK_FULL: There is not enough space on the disk.
	errHandleDiskFull = "0x80070027" // ERROR_HANDLE_DISK_FULL: The disk is full.
	errAccessDenied   = "0x80070005" // ERROR_ACCESS_DENIED
)

// createError says what failed, what is left, and the fix where the
// message shows one.
func (p *Provider) createError(spec vms.Spec, st createStatus) error {
	msg := fmt.Sprintf("hyperv: creating machine %s on %s: %s failed: %s", spec.Name, p.endpoint, st.Stage, oneLine(st.Error))
	switch {
	case st.Stage == "image":
		msg += fmt.Sprintf("; fix the VM file's image (a path on the host %s)", p.endpoint)
	case strings.Contains(st.Error, errDiskFull), strings.Contains(st.Error, errHandleDiskFull), strings.Contains(strings.ToLower(st.Error), "not enough space on the disk"):
		msg += fmt.Sprintf("; the volume of hyperv.vhdxDir (%s) is full: free space there, or point vhdxDir at a volume with room", p.settings.VHDXDir)
	case strings.Contains(st.Error, errAccessDenied):
		msg += "; the account, or the host's Virtual Machines group, may not use the golden image or vhdxDir: check their permissions"
	}
	if st.Left {
		msg += fmt.Sprintf(" (its folder %s could not be removed: sweep removes it later)", p.folder(spec.RunID, spec.Name))
	} else {
		msg += " (nothing of it is left on the host)"
	}
	return errors.New(msg)
}

func (p *Provider) folder(runID, name string) string {
	return p.settings.VHDXDir + `\` + runID + `\` + name
}

// A machine's ID is its VM's ID (a GUID, lower case); a machine folder
// that no tagged VM uses (a Create cut short) is "folder:<run ID>\<name>".
const folderPrefix = "folder:"

var vmID = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// parseID returns the VM ID or the folder (<run ID>\<name>) id names.
func parseID(id string) (vm, folder string, err error) {
	id = strings.ToLower(id)
	if f, ok := strings.CutPrefix(id, folderPrefix); ok {
		run, name, ok := strings.Cut(f, `\`)
		if ok && runid.Check(run) == nil && isMachineFolder(run, name) {
			return "", run + `\` + name, nil
		}
	} else if vmID.MatchString(id) {
		return id, "", nil
	}
	return "", "", fmt.Errorf("hyperv: %q is not a machine ID of this provider (a VM's GUID, or folder:<run>\\<name>)", id)
}

// isMachineFolder reports whether name, in the run folder run, is the name
// of one of the run's machines: <prefix>-<run>-<n>.
func isMachineFolder(run, name string) bool {
	head, n, ok := cutLast(name, "-")
	if !ok || !machineName.MatchString(name) {
		return false
	}
	if _, err := strconv.Atoi(n); err != nil {
		return false
	}
	prefix, ok := strings.CutSuffix(head, "-"+run)
	return ok && prefix != ""
}

func cutLast(s, sep string) (string, string, bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+len(sep):], true
}

type deleteStatus struct {
	RemovedVMs   []string `json:"removedVMs"`
	RemovedPaths []string `json:"removedPaths"`
}

// Delete turns the VM off, removes it and its machine folder (the
// differencing disk, the configuration), or removes a machine folder left
// by a Create cut short with the untagged VM on it. What is not there is
// no error.
func (p *Provider) Delete(ctx context.Context, id string) error {
	vm, folder, err := parseID(id)
	if err != nil {
		return err
	}
	var st deleteStatus
	if err := p.run(ctx, deleteTimeout, scriptDelete, &st, param{"VMId", vm}, param{"Folder", folder}, param{"VhdxDir", p.settings.VHDXDir}); err != nil {
		return fmt.Errorf("hyperv: deleting machine %s on %s: %w", id, p.endpoint, err)
	}
	return nil
}

type listStatus struct {
	VMs []struct {
		ID      string   `json:"id"`
		Name    string   `json:"name"`
		Notes   string   `json:"notes"`
		Created string   `json:"created"`
		Disks   []string `json:"disks"`
	} `json:"vms"`
	Folders []struct {
		Run     string `json:"run"`
		Name    string `json:"name"`
		Path    string `json:"path"`
		Created string `json:"created"`
	} `json:"folders"`
}

// List returns the VMs whose Notes carry the run tag, and the machine
// folders of the VHDX directory that no such VM uses (what a Create cut
// short leaves: a disk alone, or a disk and a VM not yet tagged).
func (p *Provider) List(ctx context.Context) ([]vms.Machine, error) {
	var st listStatus
	if err := p.run(ctx, queryTimeout, scriptList, &st, param{"VhdxDir", p.settings.VHDXDir}); err != nil {
		return nil, fmt.Errorf("hyperv: listing the machines of %s: %w", p.endpoint, err)
	}
	var out []vms.Machine
	used := map[string]bool{}
	for _, v := range st.VMs {
		tags := parseNotes(v.Notes)
		run := tags[vms.TagRun]
		if run == "" {
			continue
		}
		m := vms.Machine{ID: strings.ToLower(v.ID), Name: v.Name, RunID: run, Keep: vms.ParseKeep(tags[vms.TagKeep])}
		if t, err := time.Parse(time.RFC3339Nano, v.Created); err == nil {
			m.Created = t.UTC()
		} else if t, err := time.Parse(time.RFC3339, tags[vms.TagCreated]); err == nil {
			m.Created = t.UTC()
		}
		out = append(out, m)
		for _, d := range v.Disks {
			used[strings.ToLower(parentDir(d))] = true
		}
	}
	for _, f := range st.Folders {
		run, name := strings.ToLower(f.Run), strings.ToLower(f.Name)
		if runid.Check(run) != nil || !isMachineFolder(run, name) || used[strings.ToLower(strings.TrimRight(f.Path, `\`))] {
			continue
		}
		m := vms.Machine{ID: folderPrefix + run + `\` + name, Name: name, RunID: run}
		if t, err := time.Parse(time.RFC3339Nano, f.Created); err == nil {
			m.Created = t.UTC()
		}
		out = append(out, m)
	}
	return out, nil
}

// parentDir is a Windows path's directory.
func parentDir(path string) string {
	path = strings.TrimRight(path, `\`)
	if i := strings.LastIndex(path, `\`); i >= 0 {
		return path[:i]
	}
	return ""
}

type addressStatus struct {
	Found     bool     `json:"found"`
	State     string   `json:"state"`
	Addresses []string `json:"addresses"`
}

// Addresses returns what the VM's network adapters report through KVP:
// nothing until the guest's integration services run, link-local
// addresses included. A machine folder without its VM has none: it is
// ErrNotFound, as an absent VM is.
func (p *Provider) Addresses(ctx context.Context, id string) ([]string, error) {
	vm, _, err := parseID(id)
	if err != nil {
		return nil, err
	}
	if vm == "" {
		return nil, fmt.Errorf("hyperv: machine %s has no VM: %w", id, vms.ErrNotFound)
	}
	var st addressStatus
	if err := p.run(ctx, queryTimeout, scriptAddresses, &st, param{"VMId", vm}); err != nil {
		return nil, fmt.Errorf("hyperv: the addresses of machine %s on %s: %w", id, p.endpoint, err)
	}
	if !st.Found {
		return nil, fmt.Errorf("hyperv: machine %s is not on %s: %w", id, p.endpoint, vms.ErrNotFound)
	}
	return st.Addresses, nil
}

// run renders script with params, runs it on the host within timeout (or
// ctx's earlier deadline), and decodes its status line into out.
func (p *Provider) run(ctx context.Context, timeout time.Duration, script string, out any, params ...param) error {
	text, err := render(script, params...)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res, err := p.host.RunPS(ctx, script, text)
	if err != nil {
		return err
	}
	if err := res.Err(); err != nil {
		return err
	}
	line := lastJSONLine(res.Stdout)
	if line == "" {
		return fmt.Errorf("script %s printed no status line (stdout %q)", script, tail(res.Stdout, 300))
	}
	if err := json.Unmarshal([]byte(line), out); err != nil {
		return fmt.Errorf("script %s printed a status line that is not its JSON: %v (%q)", script, err, tail(line, 300))
	}
	return nil
}

func lastJSONLine(stdout string) string {
	lines := strings.Split(strings.ReplaceAll(stdout, "\r\n", "\n"), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" {
			if strings.HasPrefix(l, "{") {
				return l
			}
			return ""
		}
	}
	return ""
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(strings.ReplaceAll(s, "\r\n", "\n")), "\n")
	return s
}

// oneLine joins a multi-line message (Hyper-V's are) into one line.
func oneLine(s string) string {
	var parts []string
	for _, l := range strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, " ")
}

func scheme(https bool) string {
	if https {
		return "https"
	}
	return "http"
}

// The Hyper-V worker's boot events (microsoft/openvmm
// petri/src/vm/hyperv/powershell.rs), named in the console log.
var bootEvents = map[int]string{
	18601: "boot succeeded",
	18602: "boot succeeded, secure boot failed",
	18603: "boot failed",
	18604: "boot failed: secure boot (check hyperv.secureBootTemplate against the image)",
	18605: "boot failed: no boot device (a generation 1 image on a generation 2 VM, or the reverse?)",
}

type consoleStatus struct {
	Found    bool   `json:"found"`
	Computer string `json:"computer"`
	Name     string `json:"name"`
	State    string `json:"state"`
	Status   string `json:"status"`
	Uptime   string `json:"uptime"`
	Created  string `json:"created"`
	Services []struct {
		Name    string `json:"name"`
		Enabled bool   `json:"enabled"`
		Status  string `json:"status"`
	} `json:"services"`
	Addresses []string `json:"addresses"`
	Events    []struct {
		Time    string `json:"time"`
		ID      int    `json:"id"`
		Level   string `json:"level"`
		Log     string `json:"log"`
		Message string `json:"message"`
	} `json:"events"`
	EventsError string `json:"eventsError"`
}

// ConsoleLog writes what the host knows of the VM in place of a console
// log, which Hyper-V does not keep (a COM port can be a named pipe, but a
// pipe keeps nothing written while no client reads it, and a reader on the
// host would have to outlive the WinRM command that starts it): the VM's
// state, its integration services (Heartbeat "No Contact": the guest never
// ran them), the addresses KVP reports, and the Hyper-V worker's and
// management service's events about it since it was made, boot events
// named.
func (p *Provider) ConsoleLog(ctx context.Context, id string, w io.Writer) error {
	vm, _, err := parseID(id)
	if err != nil {
		return err
	}
	if vm == "" {
		return fmt.Errorf("hyperv: machine %s has no VM: %w", id, vms.ErrNotFound)
	}
	var st consoleStatus
	if err := p.run(ctx, queryTimeout, scriptConsole, &st, param{"VMId", vm}); err != nil {
		return fmt.Errorf("hyperv: the console log of machine %s on %s: %w", id, p.endpoint, err)
	}
	if !st.Found {
		return fmt.Errorf("hyperv: machine %s is not on %s: %w", id, p.endpoint, vms.ErrNotFound)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Hyper-V keeps no console log; this is what the host %s knows of the VM.\n", st.Computer)
	fmt.Fprintf(&b, "VM %s (%s), made %s: state %s, status %q, uptime %s\n", st.Name, vm, st.Created, st.State, st.Status, st.Uptime)
	b.WriteString("Integration services:\n")
	for _, s := range st.Services {
		status := s.Status
		if !s.Enabled {
			status = "disabled"
		}
		fmt.Fprintf(&b, "  %s: %s\n", s.Name, status)
	}
	fmt.Fprintf(&b, "Addresses (KVP): %s\n", orNone(strings.Join(st.Addresses, ", ")))
	b.WriteString("Events of Hyper-V-Worker-Admin and Hyper-V-VMMS-Admin about the VM:\n")
	if len(st.Events) == 0 {
		b.WriteString("  (none)\n")
	}
	for _, e := range st.Events {
		fmt.Fprintf(&b, "  %s %s %d %s: %s", e.Time, e.Level, e.ID, e.Log, oneLine(e.Message))
		if what, ok := bootEvents[e.ID]; ok {
			fmt.Fprintf(&b, " [%s]", what)
		}
		b.WriteString("\n")
	}
	if st.EventsError != "" {
		fmt.Fprintf(&b, "  (the events could not be read: %s)\n", oneLine(st.EventsError))
	}
	_, err = io.WriteString(w, b.String())
	return err
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
