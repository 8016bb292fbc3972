package startscript

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func writes(t *testing.T, script string, env Env) []string {
	t.Helper()
	s, err := Parse("test.ps1", script)
	if err != nil {
		t.Fatal(err)
	}
	ws, err := s.Writes(env)
	if err != nil {
		t.Fatalf("Writes: %v", err)
	}
	var out []string
	for _, w := range ws {
		for _, p := range w.Paths {
			out = append(out, w.What+" "+p)
		}
	}
	return out
}

// The reader finds the write forms of PowerShell 5.1 and 7 that a start
// script may use, with their paths resolved.
func TestWritesFindsEveryForm(t *testing.T) {
	t.Parallel()
	script := `
Set-StrictMode -Version Latest
$dir = 'C:\state'
$file = Join-Path $dir 'a.conf'
"text" | Set-Content -LiteralPath $file -Encoding ASCII
Set-Content "$dir\b.txt" 'value'
Add-Content -Path (Join-Path $env:STATE 'c.log') -Value x
Out-File -FilePath "${dir}\d.txt" -InputObject 1
New-Item -ItemType Directory -Force -Path $dir, 'C:\other' | Out-Null
New-Item -Path $dir -Name 'e.txt' -Value 'x'
Copy-Item -LiteralPath 'C:\src.txt' (Join-Path $dir 'f.txt') -Force
Move-Item -LiteralPath "$file.new" -Destination $file -Force
Remove-Item -Recurse -Force -Path 'C:\gone'
mkdir C:\made
Write-Output x > "$dir\g.txt"
Write-Output x 2>&1 *>&1 > $null
[IO.File]::WriteAllText((Join-Path $dir 'h.txt'), 'x')
[System.IO.Directory]::CreateDirectory("$($env:STATE)\i")
$net = @{
    Type = 'Overlay'
    Name = 'External'
}
# Set-Content -LiteralPath 'C:\in-a-comment'
Write-Output 'Set-Content -LiteralPath C:\in-a-string'
`
	got := writes(t, script, Env{"STATE": `C:\var\state`})
	want := []string{
		`Set-Content -LiteralPath C:\state\a.conf`,
		`Set-Content -Path C:\state\b.txt`,
		`Add-Content -Path C:\var\state\c.log`,
		`Out-File -Path C:\state\d.txt`,
		`New-Item -Path C:\state`,
		`New-Item -Path C:\other`,
		`New-Item -Path C:\state\e.txt`,
		`Copy-Item -Destination C:\state\f.txt`,
		`Move-Item -LiteralPath C:\state\a.conf.new`,
		`Move-Item -Destination C:\state\a.conf`,
		`Remove-Item -Path C:\gone`,
		`mkdir -Path C:\made`,
		`redirection > C:\state\g.txt`,
		`[IO.File]::WriteAllText C:\state\h.txt`,
		`[System.IO.Directory]::CreateDirectory C:\var\state\i`,
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("writes:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A variable assigned more than once may hold each value: all are checked.
func TestWritesTakesEveryValueOfAVariable(t *testing.T) {
	t.Parallel()
	got := writes(t, `
$dir = 'C:\one'
if ($x) { $dir = "C:\two" }
Set-Content -LiteralPath (Join-Path $dir 'f') -Value 1
`, nil)
	if want := []string{`Set-Content -LiteralPath C:\one\f`, `Set-Content -LiteralPath C:\two\f`}; !slices.Equal(got, want) {
		t.Errorf("writes %v, want %v", got, want)
	}
}

// What the model cannot read is an error, never a write it did not see.
func TestWritesRefusesWhatItCannotRead(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, script, want string }{
		{"a function's parameter", "function Save {\n    param($Path)\n    Set-Content -LiteralPath $Path -Value 1\n}", "$path is not assigned in the script"},
		{"a value from a command", "$dir = Get-Location\nSet-Content -LiteralPath (Join-Path $dir 'f') -Value 1", "cannot resolve Get-Location"},
		{"a variable from outside the manifest", "Set-Content -LiteralPath (Join-Path $env:NODE_NAME 'f') -Value 1", "$env:NODE_NAME comes from outside the manifest"},
		{"a variable not in the environment", "Set-Content -LiteralPath (Join-Path $env:NOPE 'f') -Value 1", "$env:nope is not in the container's environment"},
		{"a program the model does not know", "& 'C:\\k\\kubelet.exe' --v=2", `starts C:\k\kubelet.exe: the model does not know what it writes`},
		{"a .NET method the model does not know", "[IO.File]::Encrypt('C:\\x')", "the model does not know whether it writes"},
		{"a write command without a path", "$x | Set-Content", "names no path the model can find"},
	} {
		s, err := Parse("test.ps1", c.script)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if _, err := s.Writes(Env{"NODE_NAME": Unknown}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.name, err, c.want)
		}
	}
}

// The programs the scripts start write what their flags say, or their
// defaults.
func TestWritesOfPrograms(t *testing.T) {
	t.Parallel()
	got := writes(t, `
$request = '{"cniVersion": "0.3.0", "ipam": {"type": "host-local", "dataDir": "C:/var/lib/cni/networks"}}'
$request | & (Join-Path $env:CNI_BIN_PATH 'host-local.exe')
$args1 = @('--kube-subnet-mgr', "--iface=$ip")
& 'C:\k\flanneld.exe' @args1
$args2 = @(
    '--proxy-mode=kernelspace',
    "--log-file=C:\logs\kube-proxy.log"
)
& 'C:\k\kube-proxy.exe' @args2
`, Env{"CNI_BIN_PATH": `C:\opt\cni\bin`})
	want := []string{
		`flanneld.exe --subnet-file (its default) C:\run\flannel\subnet.env`,
		`host-local.exe (its store, under the request's dataDir) C:\var\lib\cni\networks`,
		`kube-proxy.exe --log-file C:\logs\kube-proxy.log`,
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("writes:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestReadsAndPatterns(t *testing.T) {
	t.Parallel()
	s, err := Parse("test.ps1", `
$flags = 'C:\var\lib\kubelet\kubeadm-flags.env'
if (Test-Path -LiteralPath $flags) {
    $line = Get-Content -LiteralPath $flags | Where-Object { $_ -match '^KUBELET_KUBEADM_ARGS=' }
    if ($line -match "not a literal $x") {}
}
Get-Content -LiteralPath (Join-Path (Get-MountDir '/etc/x' 'f') 'f')
`)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range s.Reads(nil) {
		got = append(got, r.What+" "+strings.Join(r.Paths, ","))
	}
	want := []string{`Test-Path -LiteralPath C:\var\lib\kubelet\kubeadm-flags.env`, `Get-Content -LiteralPath C:\var\lib\kubelet\kubeadm-flags.env`}
	if !slices.Equal(got, want) {
		t.Errorf("reads %v, want %v (a path found at run time is left out)", got, want)
	}
	if p := s.Patterns(); !slices.Equal(p, []string{"^KUBELET_KUBEADM_ARGS="}) {
		t.Errorf("patterns %q", p)
	}
}

func TestVolumesAndLayouts(t *testing.T) {
	t.Parallel()
	spec := &corev1.PodSpec{
		Containers: []corev1.Container{{Name: "c", VolumeMounts: []corev1.VolumeMount{
			{Name: "cfg", MountPath: "/var/lib/cfg"},
			{Name: "scratch", MountPath: "/scratch"},
		}}},
		Volumes: []corev1.Volume{
			{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}}},
			{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		},
	}
	vols, err := Volumes(spec, "c")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range vols {
		got = append(got, v.Name+" "+v.MountPath+" "+map[bool]string{true: "ro", false: "rw"}[v.ReadOnly])
	}
	want := []string{"cfg /var/lib/cfg ro", "scratch /scratch rw", "kube-api-access /var/run/secrets/kubernetes.io/serviceaccount ro"}
	if !slices.Equal(got, want) {
		t.Errorf("volumes %v, want %v", got, want)
	}
	no := false
	spec.AutomountServiceAccountToken = &no
	if vols, _ := Volumes(spec, "c"); len(vols) != 2 {
		t.Errorf("automountServiceAccountToken false: %v", vols)
	}

	layouts := Layouts(vols)
	l16, l17 := layouts[0], layouts[1]
	for _, c := range []struct {
		layout Layout
		path   string
		dir    bool
		want   string
	}{
		{l16, `C:\var\lib\cfg\state.json`, false, ""},
		{l17, `C:\var\lib\cfg\state.json`, false, `read-only ConfigMap cfg volume cfg, which containerd 1.7 and 2.x (hcsshim 0.10+: volumes bound at their mountPath) binds at its mountPath, C:\var\lib\cfg`},
		{l17, `c:\VAR\lib\CFG`, false, "read-only ConfigMap cfg"},
		{l17, `C:\var\lib\cfg`, true, ""},
		{l17, `C:\var\lib\cfgx\state.json`, false, ""},
		{l16, `C:\C\0123456789ab\var\lib\cfg\state.json`, false, "links under the container's root"},
		{l17, `C:\hpc\var\lib\cfg\state.json`, false, "links under the container's root"},
		{l17, `C:\hpc\state.json`, false, "a restarted container starts from its image again"},
		{l17, `C:\scratch\state.json`, false, "writable emptyDir volume scratch"},
		{l17, `C:\var\run\secrets\kubernetes.io\serviceaccount\token`, false, "read-only projected (the ServiceAccount token)"},
		{l16, `C:\var\run\secrets\kubernetes.io\serviceaccount\token`, false, ""},
	} {
		err := c.layout.CheckWrite(Access{Dir: c.dir}, c.path)
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: write %s: %v, want %q", c.layout.Name, c.path, err, c.want)
		}
	}
	if v := l17.Shadowed(`C:\var\lib\cfg\x`); v == nil || v.Volume.Name != "cfg" {
		t.Errorf("containerd 1.7: C:\\var\\lib\\cfg\\x shadowed by %v", v)
	}
	if v := l16.Shadowed(`C:\var\lib\cfg\x`); v != nil {
		t.Errorf("containerd 1.6: C:\\var\\lib\\cfg\\x shadowed by %v", v)
	}
}

// PowerShell's parser refuses "$name:" followed by no name; the model does
// too, so that such a script fails here rather than on a node.
func TestParseRefusesVariableColon(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{`Write-Output "the subnet $subnet: taken"`, "Write-Output @\"\nline $x:\n\"@"} {
		if _, err := Parse("test.ps1", bad); err == nil || !strings.Contains(err.Error(), "is not a variable PowerShell reads") {
			t.Errorf("%s: %v", bad, err)
		}
	}
	for _, good := range []string{`Write-Output "the subnet ${subnet}: taken $env:PATH $x::y ` + "`" + `$x: $(1):"`, `Write-Output 'a $x: b'`} {
		if _, err := Parse("test.ps1", good); err != nil {
			t.Errorf("%s: %v", good, err)
		}
	}
}
