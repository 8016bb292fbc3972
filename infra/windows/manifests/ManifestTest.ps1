# ManifestTest.ps1: what the Pester tests of the HostProcess start scripts
# (kube-proxy-windows.ps1, flannel-windows.ps1) share. A test runs the real
# script on a fake host: its C:\ paths moved to a fresh directory, the
# volumes of the DaemonSet's pod laid out as containerd lays them out (see
# Add-FakeMount), its environment the DaemonSet's, HNS and the network
# cmdlets faked by functions of the same names, and the programs it starts
# (kube-proxy.exe, flanneld.exe) real programs that record their arguments
# and standard input and answer what the test tells them to; host-local.exe
# is a real program that keeps host-local's store (Add-FakeHostLocal).
#
# Dot-source it in BeforeAll. Written for Windows PowerShell 5.1 and
# PowerShell 7.

# New-FakeProgramBuild compiles, once per run, a console program that
# appends its arguments to <itself>.log and exits with <itself>.exit.
function New-FakeProgramBuild {
    $exe = Join-Path ([IO.Path]::GetTempPath()) 'winconform-fake-program-2.exe'
    if (Test-Path -LiteralPath $exe) { return $exe }
    $source = @'
using System;
using System.IO;
public static class FakeProgram {
    public static int Main(string[] args) {
        string self = System.Diagnostics.Process.GetCurrentProcess().MainModule.FileName;
        File.AppendAllText(self + ".log", string.Join(" ", args) + Environment.NewLine);
        int code = 0;
        if (File.Exists(self + ".exit")) { code = int.Parse(File.ReadAllText(self + ".exit").Trim()); }
        return code;
    }
}
'@
    $cs = Join-Path ([IO.Path]::GetTempPath()) 'winconform-fake-program-2.cs'
    Set-Content -LiteralPath $cs -Value $source -Encoding ASCII
    $csc = Join-Path $env:WINDIR 'Microsoft.NET\Framework64\v4.0.30319\csc.exe'
    $out = & $csc /nologo /target:exe ("/out:" + $exe) $cs 2>&1
    if ($LASTEXITCODE -ne 0) { throw "compiling the fake program with ${csc}: $out" }
    $exe
}

# New-FakeHost makes an empty host: its C:\ and the container's root (see
# Add-FakeMount for -Layout and -NoRootLinks).
function New-FakeHost {
    param([ValidateSet('containerd-1.6', 'containerd-1.7')][string] $Layout = 'containerd-1.7', [switch] $NoRootLinks)
    $base = Join-Path $env:SystemDrive ('wcpester\' + [guid]::NewGuid().ToString('N').Substring(0, 12))
    $root = Join-Path $base 'c'
    # containerd 1.6 (hcsshim 0.9): C:\C\<container id>\; 1.7 and 2.x
    # (hcsshim 0.10 and later, with the bind filter): C:\hpc\.
    $sandbox = Join-Path $base 'hpc'
    if ($Layout -eq 'containerd-1.6') { $sandbox = Join-Path $base 'C-0123456789ab' }
    New-Item -ItemType Directory -Force -Path $root, $sandbox | Out-Null
    # A path already moved (anything under $base) is not moved again.
    $tail = ''
    if ($base.StartsWith('C:\')) { $tail = $base.Substring(3) + '\' }
    @{
        Base        = $base
        Root        = $root
        Sandbox     = $sandbox
        Layout      = $Layout
        RootLinks   = -not $NoRootLinks
        Mounts      = New-Object 'Collections.Generic.List[object]'
        PathPattern = New-Object regex ('C:\\(?!' + [regex]::Escape($tail) + ')')
        Networks    = New-Object 'Collections.Generic.List[object]'
        Policies    = $false
        Removed     = New-Object 'Collections.Generic.List[string]'
        # The machine's interfaces: two NICs, each with a default route.
        Interfaces  = @(
            [pscustomobject]@{ ifIndex = 7; IP = '10.1.0.4'; Adapter = 'Ethernet 2'; RouteMetric = 0; InterfaceMetric = 15 }
            [pscustomobject]@{ ifIndex = 9; IP = '10.2.0.4'; Adapter = 'Ethernet 3'; RouteMetric = 0; InterfaceMetric = 25 }
        )
    }
}

function Remove-FakeHost {
    param($FakeHost)
    foreach ($m in $FakeHost.Mounts) {
        if ($m.Protected) { Set-ReadOnlyDirectory $m.Bind -Off }
    }
    if (Test-Path -LiteralPath $FakeHost.Base) { Remove-Item -LiteralPath $FakeHost.Base -Recurse -Force }
}

# Set-ReadOnlyDirectory denies everyone any change under a directory (the
# deny entry is inherited by what it holds), as a read-only bind does; -Off
# takes the entry away again.
function Set-ReadOnlyDirectory {
    param([string] $Path, [switch] $Off)
    $everyone = New-Object Security.Principal.SecurityIdentifier 'S-1-1-0'
    $rights = [Security.AccessControl.FileSystemRights]'WriteData, AppendData, WriteExtendedAttributes, WriteAttributes, Delete, DeleteSubdirectoriesAndFiles'
    $rule = New-Object Security.AccessControl.FileSystemAccessRule($everyone, $rights, 'ContainerInherit, ObjectInherit', 'None', 'Deny')
    $acl = Get-Acl -LiteralPath $Path
    if ($Off) { [void]$acl.RemoveAccessRuleAll($rule) } else { $acl.AddAccessRule($rule) }
    Set-Acl -LiteralPath $Path -AclObject $acl
}

# Add-FakeMount lays out a volume of the pod, mounted at $MountPath (as in
# the DaemonSet's volumeMounts, without the drive), holding $Files (name to
# content), as containerd does:
#   containerd 1.6 (hcsshim 0.9, internal/jobcontainers/mounts.go
#   setupMounts): a link under the container's root only; nothing at
#   C:\<mountPath>.
#   containerd 1.7 and 2.x (hcsshim 0.10 and later, setupMounts with the
#   bind filter): bound at C:\<mountPath>, read-only when the kubelet says
#   so (ConfigMap, Secret, projected: all of this DaemonSet's volumes), and
#   linked under the root as well, best effort (-NoRootLinks: not).
# Bound directories shadow the host's: a directory already there is
# replaced.
function Add-FakeMount {
    param($FakeHost, [string] $MountPath, [hashtable] $Files)
    $relative = $MountPath.TrimStart('\', '/').Replace('/', '\')
    $link = Join-Path $FakeHost.Sandbox $relative
    $bind = Join-Path $FakeHost.Root $relative
    $dirs = @()
    if ($FakeHost.Layout -eq 'containerd-1.6' -or $FakeHost.RootLinks) { $dirs += $link }
    if ($FakeHost.Layout -eq 'containerd-1.7') {
        if (Test-Path -LiteralPath $bind) { Remove-Item -LiteralPath $bind -Recurse -Force }
        $dirs += $bind
    }
    foreach ($dir in $dirs) {
        New-Item -ItemType Directory -Force -Path $dir | Out-Null
        foreach ($name in $Files.Keys) { [IO.File]::WriteAllText((Join-Path $dir $name), [string]$Files[$name]) }
    }
    $mount = [pscustomobject]@{ MountPath = $MountPath; Dirs = $dirs; Bind = $bind; Protected = $false; Before = '' }
    if ($FakeHost.Layout -eq 'containerd-1.7') {
        Set-ReadOnlyDirectory $bind
        $mount.Protected = $true
    }
    $mount.Before = Get-MountContent $mount
    $FakeHost.Mounts.Add($mount)
}

# Get-MountContent lists what a volume holds, wherever the container sees it.
function Get-MountContent {
    param($Mount)
    $lines = foreach ($dir in $Mount.Dirs) {
        Get-ChildItem -LiteralPath $dir -Recurse -Force | Sort-Object FullName | ForEach-Object {
            $text = ''
            if (-not $_.PSIsContainer) { $text = [IO.File]::ReadAllText($_.FullName) }
            $_.FullName + ' ' + $text
        }
    }
    ($lines -join "`n")
}

# Get-ChangedMounts names the volumes whose content the script changed.
function Get-ChangedMounts {
    param($FakeHost)
    foreach ($m in $FakeHost.Mounts) {
        if ((Get-MountContent $m) -ne $m.Before) { $m.MountPath }
    }
}

function ConvertTo-HostPath {
    param($FakeHost, [string] $Text)
    $FakeHost.PathPattern.Replace($Text, $FakeHost.Root.Replace('$', '$$') + '\')
}

# Add-FakeProgram puts the fake program at a C:\ path of the host, with its
# exit code.
function Add-FakeProgram {
    param($FakeHost, [string] $Path, [int] $Exit = 0)
    $exe = ConvertTo-HostPath $FakeHost $Path
    New-Item -ItemType Directory -Force -Path (Split-Path -Parent $exe) | Out-Null
    Copy-Item -LiteralPath (New-FakeProgramBuild) -Destination $exe -Force
    [IO.File]::WriteAllText($exe + '.exit', [string]$Exit)
    $exe
}

# Get-FakeProgramLog is what a fake program recorded, '' when it never ran.
function Get-FakeProgramLog {
    param($FakeHost, [string] $Path)
    $log = (ConvertTo-HostPath $FakeHost $Path) + '.log'
    if (-not (Test-Path -LiteralPath $log)) { return '' }
    [IO.File]::ReadAllText($log)
}

# New-FakeHostLocalBuild compiles, once per run, a host-local IPAM plugin
# that keeps host-local's store as host-local does
# (containernetworking/plugins, plugins/ipam/host-local/backend/disk): one
# file per reserved address, named by the address and holding
# "<container id>\r\n<ifname>", under <store>\<network name>. ADD refuses an
# ID that holds an address of the requested range ("duplicate allocation is
# not allowed", allocator.Get) and else reserves the first free address
# after the gateway (.1); DEL releases every address the ID and interface
# hold in the network, of any range (ReleaseByID). Like skel, it wants
# CNI_COMMAND, CNI_CONTAINERID, CNI_IFNAME and CNI_PATH, and CNI_NETNS for
# ADD, and prints its errors as JSON on standard output. Each call is
# appended to <itself>.log as "COMMAND ID IFNAME" and the request. The store
# is <itself>.store (the script names C:/var/lib/cni/networks, which the
# fake host does not move).
function New-FakeHostLocalBuild {
    $exe = Join-Path ([IO.Path]::GetTempPath()) 'winconform-fake-host-local.exe'
    if (Test-Path -LiteralPath $exe) { return $exe }
    $source = @'
using System;
using System.IO;
using System.Net;
using System.Text.RegularExpressions;
public static class FakeHostLocal {
    static uint ToUInt(IPAddress ip) {
        byte[] b = ip.GetAddressBytes();
        return ((uint)b[0] << 24) | ((uint)b[1] << 16) | ((uint)b[2] << 8) | b[3];
    }
    static string FromUInt(uint a) {
        return (a >> 24) + "." + ((a >> 16) & 255) + "." + ((a >> 8) & 255) + "." + (a & 255);
    }
    static int Fail(string msg) {
        Console.Write("{\"code\":999,\"msg\":\"" + msg + "\"}");
        return 1;
    }
    public static int Main(string[] args) {
        string self = System.Diagnostics.Process.GetCurrentProcess().MainModule.FileName;
        string input = Console.In.ReadToEnd();
        string command = Environment.GetEnvironmentVariable("CNI_COMMAND") ?? "";
        string id = Environment.GetEnvironmentVariable("CNI_CONTAINERID") ?? "";
        string ifname = Environment.GetEnvironmentVariable("CNI_IFNAME") ?? "";
        File.AppendAllText(self + ".log", command + " " + id + " " + ifname + Environment.NewLine + input + Environment.NewLine);
        foreach (string v in new string[] { "CNI_COMMAND", "CNI_CONTAINERID", "CNI_IFNAME", "CNI_PATH" }) {
            if (string.IsNullOrEmpty(Environment.GetEnvironmentVariable(v))) { return Fail("required env variables [" + v + "] missing"); }
        }
        if (command == "ADD" && string.IsNullOrEmpty(Environment.GetEnvironmentVariable("CNI_NETNS"))) { return Fail("required env variables [CNI_NETNS] missing"); }
        Match name = Regex.Match(input, "\"name\"\\s*:\\s*\"([^\"]+)\"");
        Match subnet = Regex.Match(input, "\"subnet\"\\s*:\\s*\"([0-9.]+)/([0-9]+)\"");
        if (!name.Success || !subnet.Success) { return Fail("the request names no network or no subnet"); }
        string store = Path.Combine(self + ".store", name.Groups[1].Value);
        Directory.CreateDirectory(store);
        string key = id.Trim() + "\r\n" + ifname;
        if (command == "DEL") {
            foreach (string f in Directory.GetFiles(store)) {
                if (File.ReadAllText(f).Trim() == key) { File.Delete(f); }
            }
            return 0;
        }
        if (command != "ADD") { return Fail("unknown CNI_COMMAND " + command); }
        int bits = int.Parse(subnet.Groups[2].Value);
        uint mask = bits == 0 ? 0u : 0xFFFFFFFFu << (32 - bits);
        uint net = ToUInt(IPAddress.Parse(subnet.Groups[1].Value)) & mask;
        foreach (string f in Directory.GetFiles(store)) {
            IPAddress held;
            if (!IPAddress.TryParse(Path.GetFileName(f), out held)) { continue; }
            if (File.ReadAllText(f).Trim() == key && (ToUInt(held) & mask) == net) {
                return Fail("failed to allocate for range 0: " + Path.GetFileName(f) + " has been allocated to " + id + ", duplicate allocation is not allowed");
            }
        }
        for (uint a = net + 2; a < (net | ~mask); a++) {
            string f = Path.Combine(store, FromUInt(a));
            if (File.Exists(f)) { continue; }
            File.WriteAllText(f, key);
            Console.Write("{\"cniVersion\":\"0.3.0\",\"ips\":[{\"version\":\"4\",\"address\":\"" + FromUInt(a) + "/" + bits + "\",\"gateway\":\"" + FromUInt(net + 1) + "\"}],\"dns\":{}}");
            return 0;
        }
        return Fail("failed to allocate for range 0: no IP addresses available in range set: " + FromUInt(net + 1) + "-" + FromUInt((net | ~mask) - 1));
    }
}
'@
    $cs = Join-Path ([IO.Path]::GetTempPath()) 'winconform-fake-host-local.cs'
    Set-Content -LiteralPath $cs -Value $source -Encoding ASCII
    $csc = Join-Path $env:WINDIR 'Microsoft.NET\Framework64\v4.0.30319\csc.exe'
    $out = & $csc /nologo /target:exe ("/out:" + $exe) $cs 2>&1
    if ($LASTEXITCODE -ne 0) { throw "compiling the fake host-local with ${csc}: $out" }
    $exe
}

# Add-FakeHostLocal puts the fake host-local at a C:\ path of the host.
function Add-FakeHostLocal {
    param($FakeHost, [string] $Path)
    $exe = ConvertTo-HostPath $FakeHost $Path
    New-Item -ItemType Directory -Force -Path (Split-Path -Parent $exe) | Out-Null
    Copy-Item -LiteralPath (New-FakeHostLocalBuild) -Destination $exe -Force
    $exe
}

# Set-HostLocalReservation puts a reservation in the fake host-local's
# store, as an earlier ADD left it; Get-HostLocalReservations lists the
# store as "address id".
function Set-HostLocalReservation {
    param($FakeHost, [string] $Path, [string] $Network, [string] $Address, [string] $ContainerId, [string] $IfName = 'none')
    $dir = Join-Path ((ConvertTo-HostPath $FakeHost $Path) + '.store') $Network
    New-Item -ItemType Directory -Force -Path $dir | Out-Null
    [IO.File]::WriteAllText((Join-Path $dir $Address), $ContainerId + "`r`n" + $IfName)
}

function Get-HostLocalReservations {
    param($FakeHost, [string] $Path, [string] $Network)
    $dir = Join-Path ((ConvertTo-HostPath $FakeHost $Path) + '.store') $Network
    if (-not (Test-Path -LiteralPath $dir)) { return }
    foreach ($f in (Get-ChildItem -LiteralPath $dir -File | Sort-Object Name)) {
        $f.Name + ' ' + ([IO.File]::ReadAllText($f.FullName) -split "`r`n")[0]
    }
}

# Invoke-StartScript runs a start script on the host with the DaemonSet's
# environment (restored afterwards) and returns its output lines, its error
# and its exit code.
function Invoke-StartScript {
    param($FakeHost, [string] $Script, [hashtable] $Environment)
    # run.ps1 is hostprocess.ps1 then the script, as prepare.go renders it.
    $run = [IO.File]::ReadAllText((Join-Path $PSScriptRoot 'hostprocess.ps1')) + "`n" + [IO.File]::ReadAllText((Join-Path $PSScriptRoot $Script))
    $text = ConvertTo-HostPath $FakeHost $run
    $file = Join-Path $FakeHost.Base $Script
    [IO.File]::WriteAllText($file, $text, (New-Object Text.UTF8Encoding($true)))
    $saved = @{}
    # hcsshim sets it with a trailing backslash in both layouts.
    $vars = @{ CONTAINER_SANDBOX_MOUNT_POINT = $FakeHost.Sandbox + '\' }
    foreach ($k in $Environment.Keys) { $vars[$k] = $Environment[$k] }
    foreach ($k in $vars.Keys) {
        $saved[$k] = [Environment]::GetEnvironmentVariable($k)
        [Environment]::SetEnvironmentVariable($k, (ConvertTo-HostPath $FakeHost ([string]$vars[$k])))
    }
    $WcHost = $FakeHost
    $output = New-Object 'Collections.Generic.List[string]'
    $thrown = $null
    $global:LASTEXITCODE = 0
    try {
        & $file *>&1 | ForEach-Object { foreach ($l in (([string]$_) -split '\r?\n')) { $output.Add($l) } }
    } catch {
        $thrown = $_
    } finally {
        foreach ($k in $saved.Keys) { [Environment]::SetEnvironmentVariable($k, $saved[$k]) }
    }
    [pscustomobject]@{ Output = $output.ToArray(); Error = $thrown; ExitCode = $global:LASTEXITCODE }
}

# ------------------------------------------------------------ the fakes

function Get-HnsNetwork {
    foreach ($n in @($WcHost.Networks)) { $n }
}

function Get-HnsPolicyList {
    if ($WcHost.Policies) { [pscustomobject]@{ Id = 'policy-1' } }
}

function Remove-HnsPolicyList {
    [CmdletBinding()]
    param([Parameter(ValueFromPipeline = $true)] $InputObject)
    process { $WcHost.Removed.Add([string]$InputObject.Id) }
}

function Get-Command {
    [CmdletBinding()]
    param([Parameter(Position = 0)][string[]] $Name)
    if (@($Name).Count -eq 1 -and $Name[0] -eq 'Get-HnsPolicyList') {
        if ($WcHost.Policies) { return [pscustomobject]@{ Name = $Name[0] } }
        return
    }
    Microsoft.PowerShell.Core\Get-Command @PSBoundParameters
}

# The network cmdlets answer from the host's interfaces, as Windows does:
# Get-NetRoute gives each route's own metric and its interface's (Windows
# takes the route of the lowest sum); Get-NetIPAddress fails when nothing
# matches ("No matching MSFT_NetIPAddress objects"), unless told not to.
function Get-NetRoute {
    [CmdletBinding()]
    param([string] $DestinationPrefix)
    foreach ($i in $WcHost.Interfaces) {
        [pscustomobject]@{ DestinationPrefix = $DestinationPrefix; ifIndex = $i.ifIndex; RouteMetric = $i.RouteMetric; InterfaceMetric = $i.InterfaceMetric }
    }
}

function Get-NetIPAddress {
    [CmdletBinding()]
    param([int] $InterfaceIndex, [string] $AddressFamily, [string] $IPAddress)
    $found = @($WcHost.Interfaces | Where-Object {
            ($IPAddress -eq '' -or $_.IP -eq $IPAddress) -and (-not $PSBoundParameters.ContainsKey('InterfaceIndex') -or $_.ifIndex -eq $InterfaceIndex)
        })
    if ($found.Count -eq 0) {
        Write-Error "No matching MSFT_NetIPAddress objects found by CIM query for instances of the ROOT/StandardCimv2/MSFT_NetIPAddress class on the  CIM server"
        return
    }
    foreach ($i in $found) { [pscustomobject]@{ IPAddress = $i.IP; InterfaceIndex = $i.ifIndex; AddressFamily = 'IPv4' } }
}

function Get-NetAdapter {
    [CmdletBinding()]
    param([int] $InterfaceIndex)
    foreach ($i in $WcHost.Interfaces) {
        if ($i.ifIndex -eq $InterfaceIndex) { [pscustomobject]@{ Name = $i.Adapter; ifIndex = $i.ifIndex } }
    }
}

function Start-Sleep {
    [CmdletBinding()]
    param([int] $Seconds)
    throw 'the script waited: the fake host has nothing to wait for'
}

# Add-Type hands the script the fake HNS API in place of vmcompute.dll's.
function Add-Type {
    [CmdletBinding()]
    param([string] $MemberDefinition, [string] $Namespace, [string] $Name, [switch] $PassThru)
    [WinconformTest.FakeHns]::Reset()
    [WinconformTest.FakeHns]
}

if (-not ('WinconformTest.FakeHns' -as [type])) {
    Microsoft.PowerShell.Utility\Add-Type -TypeDefinition @'
namespace WinconformTest {
    public static class FakeHns {
        public static System.Collections.Generic.List<string> Calls = new System.Collections.Generic.List<string>();
        public static string Answer = "{\"Success\":true}";
        public static void Reset() { Calls.Clear(); }
        public static void HNSCall(string method, string path, string request, out string response) {
            Calls.Add(method + " " + path + " " + request);
            response = Answer;
        }
    }
}
'@
}
