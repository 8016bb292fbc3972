# ManifestTest.ps1: what the Pester tests of the HostProcess start scripts
# (kube-proxy-windows.ps1, flannel-windows.ps1) share. A test runs the real
# script on a fake host: its C:\ paths moved to a fresh directory, the
# container's sandbox a directory of the files the DaemonSet mounts, its
# environment the DaemonSet's, HNS and the network cmdlets faked by
# functions of the same names, and the programs it starts (kube-proxy.exe,
# flanneld.exe, host-local.exe) real programs that record their arguments
# and standard input and answer what the test tells them to.
#
# Dot-source it in BeforeAll. Written for Windows PowerShell 5.1 and
# PowerShell 7.

# New-FakeProgramBuild compiles, once per run, a console program that
# appends its arguments (and, when <itself>.stdin exists, its standard
# input) to <itself>.log, prints <itself>.out and exits with <itself>.exit.
function New-FakeProgramBuild {
    $exe = Join-Path ([IO.Path]::GetTempPath()) 'winconform-fake-program.exe'
    if (Test-Path -LiteralPath $exe) { return $exe }
    $source = @'
using System;
using System.IO;
public static class FakeProgram {
    public static int Main(string[] args) {
        string self = System.Diagnostics.Process.GetCurrentProcess().MainModule.FileName;
        string input = "";
        if (File.Exists(self + ".stdin")) { input = Console.In.ReadToEnd(); }
        File.AppendAllText(self + ".log", string.Join(" ", args) + Environment.NewLine + input);
        if (File.Exists(self + ".out")) { Console.Write(File.ReadAllText(self + ".out")); }
        int code = 0;
        if (File.Exists(self + ".exit")) { code = int.Parse(File.ReadAllText(self + ".exit").Trim()); }
        return code;
    }
}
'@
    $cs = Join-Path ([IO.Path]::GetTempPath()) 'winconform-fake-program.cs'
    Set-Content -LiteralPath $cs -Value $source -Encoding ASCII
    $csc = Join-Path $env:WINDIR 'Microsoft.NET\Framework64\v4.0.30319\csc.exe'
    $out = & $csc /nologo /target:exe ("/out:" + $exe) $cs 2>&1
    if ($LASTEXITCODE -ne 0) { throw "compiling the fake program with ${csc}: $out" }
    $exe
}

# New-FakeHost makes an empty host: its C:\ and the container's sandbox.
function New-FakeHost {
    $base = Join-Path $env:SystemDrive ('wcpester\' + [guid]::NewGuid().ToString('N').Substring(0, 12))
    $root = Join-Path $base 'c'
    $sandbox = Join-Path $base 'sandbox'
    New-Item -ItemType Directory -Force -Path $root, $sandbox | Out-Null
    # A path already moved (anything under $base) is not moved again.
    $tail = ''
    if ($base.StartsWith('C:\')) { $tail = $base.Substring(3) + '\' }
    @{
        Base        = $base
        Root        = $root
        Sandbox     = $sandbox
        PathPattern = New-Object regex ('C:\\(?!' + [regex]::Escape($tail) + ')')
        Networks    = New-Object 'Collections.Generic.List[object]'
        Policies    = $false
        HnsCalls    = New-Object 'Collections.Generic.List[string]'
        Removed     = New-Object 'Collections.Generic.List[string]'
        IP          = '10.1.0.4'
        Adapter     = 'Ethernet 2'
    }
}

function Remove-FakeHost {
    param($FakeHost)
    if (Test-Path -LiteralPath $FakeHost.Base) { Remove-Item -LiteralPath $FakeHost.Base -Recurse -Force }
}

function ConvertTo-HostPath {
    param($FakeHost, [string] $Text)
    $FakeHost.PathPattern.Replace($Text, $FakeHost.Root.Replace('$', '$$') + '\')
}

# Add-FakeProgram puts the fake program at a C:\ path of the host, with what
# it prints and its exit code; -ReadsStdin makes it record its input.
function Add-FakeProgram {
    param($FakeHost, [string] $Path, [string] $Out = '', [int] $Exit = 0, [switch] $ReadsStdin)
    $exe = ConvertTo-HostPath $FakeHost $Path
    New-Item -ItemType Directory -Force -Path (Split-Path -Parent $exe) | Out-Null
    Copy-Item -LiteralPath (New-FakeProgramBuild) -Destination $exe -Force
    if ($Out -ne '') { [IO.File]::WriteAllText($exe + '.out', $Out) }
    [IO.File]::WriteAllText($exe + '.exit', [string]$Exit)
    if ($ReadsStdin) { [IO.File]::WriteAllText($exe + '.stdin', '') }
    $exe
}

# Get-FakeProgramLog is what a fake program recorded, '' when it never ran.
function Get-FakeProgramLog {
    param($FakeHost, [string] $Path)
    $log = (ConvertTo-HostPath $FakeHost $Path) + '.log'
    if (-not (Test-Path -LiteralPath $log)) { return '' }
    [IO.File]::ReadAllText($log)
}

# Set-SandboxFile writes a file the DaemonSet mounts into the container.
function Set-SandboxFile {
    param($FakeHost, [string] $Path, [string] $Content)
    $file = Join-Path $FakeHost.Sandbox $Path
    New-Item -ItemType Directory -Force -Path (Split-Path -Parent $file) | Out-Null
    [IO.File]::WriteAllText($file, $Content)
}

# Invoke-StartScript runs a start script on the host with the DaemonSet's
# environment (restored afterwards) and returns its output lines, its error
# and its exit code.
function Invoke-StartScript {
    param($FakeHost, [string] $Script, [hashtable] $Environment)
    $text = ConvertTo-HostPath $FakeHost ([IO.File]::ReadAllText((Join-Path $PSScriptRoot $Script)))
    $file = Join-Path $FakeHost.Base $Script
    [IO.File]::WriteAllText($file, $text, (New-Object Text.UTF8Encoding($true)))
    $saved = @{}
    $vars = @{ CONTAINER_SANDBOX_MOUNT_POINT = $FakeHost.Sandbox }
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

function Get-NetRoute {
    [CmdletBinding()]
    param([string] $DestinationPrefix)
    [pscustomobject]@{ DestinationPrefix = $DestinationPrefix; ifIndex = 7; RouteMetric = 0 }
    [pscustomobject]@{ DestinationPrefix = $DestinationPrefix; ifIndex = 9; RouteMetric = 25 }
}

function Get-NetIPAddress {
    [CmdletBinding()]
    param([int] $InterfaceIndex, [string] $AddressFamily, [string] $IPAddress)
    if ($IPAddress -ne '' -and $IPAddress -ne $WcHost.IP) { return }
    if ($PSBoundParameters.ContainsKey('InterfaceIndex') -and $InterfaceIndex -ne 7) { return }
    [pscustomobject]@{ IPAddress = $WcHost.IP; InterfaceIndex = 7 }
}

function Get-NetAdapter {
    [CmdletBinding()]
    param([int] $InterfaceIndex)
    if ($InterfaceIndex -eq 7) { [pscustomobject]@{ Name = $WcHost.Adapter; ifIndex = 7 } }
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
