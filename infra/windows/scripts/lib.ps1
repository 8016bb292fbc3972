# winconform-library: common
# Helpers for the steps; the harness puts them after the step's parameters,
# all but the functions the step does not call (directly or through another
# function). A function runs from its "function Name {" line, with the comment
# lines right above it, to the next line that is "}" alone.
Set-StrictMode -Version Latest
$ErrorActionPreference = 'Stop'
$ProgressPreference = 'SilentlyContinue'
[Net.ServicePointManager]::SecurityProtocol = [Net.ServicePointManager]::SecurityProtocol -bor [Net.SecurityProtocolType]::Tls12

$WinconformDir = 'C:\winconform'
$StateDir = Join-Path $WinconformDir 'state'

# Write-Status prints the step's result as one line of JSON. It must be the
# last line the step prints: the harness parses it.
function Write-Status {
    param([Parameter(Mandatory = $true)][System.Collections.IDictionary] $Status)
    $out = [ordered]@{ step = $StepName }
    foreach ($key in $Status.Keys) { $out[$key] = $Status[$key] }
    Write-Output (ConvertTo-Json -InputObject $out -Compress -Depth 6)
    # A program run earlier (and whose failure the step tolerated) must not
    # make the step's exit code: the harness's stdin bootstrap exits with
    # $LASTEXITCODE when it is not 0.
    $global:LASTEXITCODE = 0
}

# Invoke-Native runs a program and returns its output lines (stdout and
# stderr, in order) and its exit code. Windows PowerShell 5.1 turns a native
# program's stderr into error records, which would stop the script under
# $ErrorActionPreference = 'Stop': the call runs under 'Continue'.
function Invoke-Native {
    param(
        [Parameter(Mandatory = $true)][string] $FilePath,
        [string[]] $ArgumentList = @()
    )
    if ([IO.Path]::IsPathRooted($FilePath) -and -not (Test-Path -LiteralPath $FilePath)) {
        throw "$FilePath does not exist"
    }
    $saved = $ErrorActionPreference
    $ErrorActionPreference = 'Continue'
    try {
        $lines = @(& $FilePath @ArgumentList 2>&1 | ForEach-Object { "$_" })
        $code = $LASTEXITCODE
    } finally {
        $ErrorActionPreference = $saved
    }
    [pscustomobject]@{ Output = $lines; ExitCode = $code }
}

# New-WorkDir returns an empty scratch directory for the step.
function New-WorkDir {
    param([Parameter(Mandatory = $true)][string] $Name)
    $dir = Join-Path (Join-Path $WinconformDir 'work') $Name
    if (Test-Path -LiteralPath $dir) { Remove-Item -LiteralPath $dir -Recurse -Force }
    New-Item -ItemType Directory -Force -Path $dir | Out-Null
    $dir
}

function Test-Url {
    param([string] $Source)
    $Source -match '^https?://'
}

# Get-SourceName is the file name a source ends with, without a URL's query.
function Get-SourceName {
    param([string] $Source)
    $clean = ($Source -split '[?#]')[0]
    ($clean -split '[\\/]' | Where-Object { $_ -ne '' } | Select-Object -Last 1)
}

function Test-Archive {
    param([string] $Source)
    (Get-SourceName $Source) -match '\.(zip|tgz|tar\.gz)$'
}

# Get-SourceFile makes a source available as a local file: an http(s) URL is
# downloaded to $Destination, a path on this machine is used as it is.
function Get-SourceFile {
    param(
        [Parameter(Mandatory = $true)][string] $Source,
        [Parameter(Mandatory = $true)][string] $Destination
    )
    if (Test-Url $Source) {
        New-Item -ItemType Directory -Force -Path (Split-Path -Parent $Destination) | Out-Null
        Invoke-WebRequest -UseBasicParsing -Uri $Source -OutFile $Destination
        return $Destination
    }
    if (-not (Test-Path -LiteralPath $Source)) { throw "$Source does not exist on this machine" }
    $Source
}

# Expand-Source returns a directory holding a source's files: an archive
# (.zip, .tgz, .tar.gz) is unpacked into $Work, a directory is used as it is,
# and a single file is copied into $Work.
function Expand-Source {
    param(
        [Parameter(Mandatory = $true)][string] $Source,
        [Parameter(Mandatory = $true)][string] $Work
    )
    $name = Get-SourceName $Source
    if (Test-Archive $Source) {
        $archive = Get-SourceFile -Source $Source -Destination (Join-Path $Work $name)
        $out = Join-Path $Work 'expanded'
        New-Item -ItemType Directory -Force -Path $out | Out-Null
        if ($archive -match '\.zip$') {
            Expand-Archive -LiteralPath $archive -DestinationPath $out -Force
        } else {
            # tar.exe ships with Windows Server 2019 and later.
            $tar = Invoke-Native -FilePath "$env:SystemRoot\System32\tar.exe" -ArgumentList @('-xzf', $archive, '-C', $out)
            if ($tar.ExitCode -ne 0) { throw "unpacking ${Source}: $($tar.Output -join '; ')" }
        }
        return $out
    }
    if (-not (Test-Url $Source) -and (Test-Path -LiteralPath $Source -PathType Container)) {
        return $Source
    }
    $file = Get-SourceFile -Source $Source -Destination (Join-Path $Work $name)
    if ($file -ne (Join-Path $Work $name)) { Copy-Item -LiteralPath $file -Destination (Join-Path $Work $name) -Force }
    $Work
}

# Find-SourceFile returns the path of the file called $Name that a source
# holds: the source itself when it is that file, else the file found in the
# archive or directory it names.
function Find-SourceFile {
    param(
        [Parameter(Mandatory = $true)][string] $Source,
        [Parameter(Mandatory = $true)][string] $Name,
        [Parameter(Mandatory = $true)][string] $Work
    )
    if (-not (Test-Archive $Source) -and (Get-SourceName $Source) -match '\.exe$') {
        return Get-SourceFile -Source $Source -Destination (Join-Path $Work $Name)
    }
    $dir = Expand-Source -Source $Source -Work $Work
    $found = Get-ChildItem -LiteralPath $dir -Recurse -File -Filter $Name | Select-Object -First 1
    if ($null -eq $found) { throw "$Source holds no $Name" }
    $found.FullName
}

# Get-State and Set-State keep what a step installed, and from where, in
# C:\winconform\state\<name>.json.
function Get-State {
    param([Parameter(Mandatory = $true)][string] $Name)
    $path = Join-Path $StateDir ($Name + '.json')
    if (-not (Test-Path -LiteralPath $path)) { return @{} }
    $state = @{}
    $data = Get-Content -Raw -LiteralPath $path | ConvertFrom-Json
    foreach ($p in $data.PSObject.Properties) { $state[$p.Name] = [string]$p.Value }
    $state
}

function Set-State {
    param(
        [Parameter(Mandatory = $true)][string] $Name,
        [Parameter(Mandatory = $true)][System.Collections.IDictionary] $Value
    )
    New-Item -ItemType Directory -Force -Path $StateDir | Out-Null
    ConvertTo-Json -InputObject $Value -Compress | Set-Content -LiteralPath (Join-Path $StateDir ($Name + '.json')) -Encoding UTF8
}

function Get-StateValue {
    param([System.Collections.IDictionary] $State, [string] $Key)
    if ($State.Contains($Key)) { return $State[$Key] }
    ''
}

# Get-ExeVersion runs a program with $ArgumentList and returns the first
# version (v1.34.4, 1.7.28...) it prints, or '' when it prints none or is absent.
function Get-ExeVersion {
    param([Parameter(Mandatory = $true)][string] $Path, [string[]] $ArgumentList = @('--version'))
    if (-not (Test-Path -LiteralPath $Path)) { return '' }
    $r = Invoke-Native -FilePath $Path -ArgumentList $ArgumentList
    $m = [regex]::Match(($r.Output -join ' '), 'v?(\d+\.\d+\.\d+[-+.0-9A-Za-z]*)')
    if ($m.Success) { return $m.Value }
    ''
}

# Add-MachinePath puts a directory on the machine's PATH; true when it did.
function Add-MachinePath {
    param([Parameter(Mandatory = $true)][string] $Dir)
    $path = [Environment]::GetEnvironmentVariable('Path', 'Machine')
    $parts = @($path -split ';' | Where-Object { $_ -ne '' })
    if ($parts -contains $Dir) { return $false }
    [Environment]::SetEnvironmentVariable('Path', (($parts + $Dir) -join ';'), 'Machine')
    $true
}

# Test-Administrator reports whether this process has an administrator's
# rights (its token holds the Administrators group, elevated).
function Test-Administrator {
    $principal = New-Object Security.Principal.WindowsPrincipal([Security.Principal.WindowsIdentity]::GetCurrent())
    $principal.IsInRole([Security.Principal.WindowsBuiltInRole]::Administrator)
}

# Get-RoutableAddress lists the IPv4 addresses another machine may reach
# this one on, as 'ADDRESS on ALIAS': preferred, neither loopback nor
# link-local (169.254/16), on an adapter other than a Hyper-V switch's host
# adapter (vEthernet (...): HNS moves the node's address onto one when it
# makes the node's first network, and gives networks their own).
function Get-RoutableAddress {
    @(Get-NetIPAddress -AddressFamily IPv4 -AddressState Preferred -ErrorAction SilentlyContinue |
            Where-Object { $_.IPAddress -notlike '127.*' -and $_.IPAddress -notlike '169.254.*' -and $_.InterfaceAlias -notlike 'vEthernet (*' } |
            Sort-Object -Property @('InterfaceIndex', 'IPAddress') |
            ForEach-Object { '{0} on {1}' -f $_.IPAddress, $_.InterfaceAlias })
}

# Wait-Condition polls $Test until it returns true or $Seconds pass.
function Wait-Condition {
    param([Parameter(Mandatory = $true)][scriptblock] $Test, [int] $Seconds = 60, [string] $What = 'the condition')
    $deadline = (Get-Date).AddSeconds($Seconds)
    while (-not (& $Test)) {
        if ((Get-Date) -gt $deadline) { throw "timed out after ${Seconds}s waiting for $What" }
        Start-Sleep -Seconds 1
    }
}

# Install-Program copies the file $Source to $Destination, a program that may
# be running. Windows refuses to overwrite or delete the file of a running
# program but lets it be moved on its volume, the process running on from
# there; and stopping the process frees nothing at once (Stop-Process returns
# before the process has exited, and the kubelet starts a DaemonSet's
# container again). So the file in place is first moved into
# C:\winconform\work\replaced, and the copies moved there by earlier runs
# are deleted when nothing runs them any more. It returns where the old file
# went, '' when there was none.
function Install-Program {
    param(
        [Parameter(Mandatory = $true)][string] $Source,
        [Parameter(Mandatory = $true)][string] $Destination
    )
    $replaced = Join-Path (Join-Path $WinconformDir 'work') 'replaced'
    $leaf = Split-Path -Leaf $Destination
    if (Test-Path -LiteralPath $replaced) {
        foreach ($old in @(Get-ChildItem -LiteralPath $replaced -File -Filter ($leaf + '.*'))) {
            try { Remove-Item -LiteralPath $old.FullName -Force } catch { Write-Verbose "$($old.FullName) still runs: $_" }
        }
    }
    $aside = ''
    if (Test-Path -LiteralPath $Destination) {
        New-Item -ItemType Directory -Force -Path $replaced | Out-Null
        $n = 1
        while (Test-Path -LiteralPath (Join-Path $replaced ($leaf + '.' + $n))) { $n++ }
        $aside = Join-Path $replaced ($leaf + '.' + $n)
        Move-Item -LiteralPath $Destination -Destination $aside -Force
    }
    Copy-Item -LiteralPath $Source -Destination $Destination -Force
    $aside
}

# Get-PendingReboot lists what makes a reboot pending, by the registry
# entries Windows keeps for it: Component Based Servicing's RebootPending
# (a feature or an update installed), Windows Update's RebootRequired, and
# the Session Manager's PendingFileRenameOperations (files replaced at the
# next boot). None: an empty list.
function Get-PendingReboot {
    $reasons = @()
    $keys = [ordered]@{
        'Component Based Servicing\RebootPending'  = 'HKLM:\SOFTWARE\Microsoft\Windows\CurrentVersion\Component Based Servicing\RebootPending'
        'WindowsUpdate\Auto Update\RebootRequired' = 'HKLM:\SOFTWARE\Microsoft\Windows\CurrentVersion\WindowsUpdate\Auto Update\RebootRequired'
    }
    foreach ($name in $keys.Keys) {
        if (Test-Path -LiteralPath $keys[$name]) { $reasons += $name }
    }
    $sm = Get-ItemProperty -LiteralPath 'HKLM:\SYSTEM\CurrentControlSet\Control\Session Manager' -ErrorAction SilentlyContinue
    if ($null -ne $sm -and $null -ne $sm.PSObject.Properties['PendingFileRenameOperations'] -and @($sm.PendingFileRenameOperations | Where-Object { $_ }).Count -gt 0) {
        $reasons += 'Session Manager\PendingFileRenameOperations'
    }
    $reasons
}

# Update-SessionPath sets this session's PATH, and so the PATH of the
# programs it runs, to the machine's and the user's, as a new logon would
# have it. A WinRM shell inherits the environment the WinRM service started
# with (at boot): what an earlier step put on the machine's PATH is not on
# it, and kubeadm join's preflight runs kubelet --version by name.
function Update-SessionPath {
    $parts = foreach ($scope in 'Machine', 'User') {
        [Environment]::GetEnvironmentVariable('Path', $scope) -split ';' | Where-Object { $_ -ne '' }
    }
    $env:Path = @($parts | Select-Object -Unique) -join ';'
}

# Get-KubeletCommandLine returns the kubelet service's command line: the
# harness's ($Command), the node's name and address, and the flags kubeadm
# join wrote into $FlagsFile (kubeadm-flags.env, KUBELET_KUBEADM_ARGS="..."),
# which a kubelet run as a Windows service cannot read itself. A flag of
# kubeadm's takes the place of the same flag; the others go at the end. A
# node joined with another address than $NodeIP must join again: kubeadm's
# file is what flannel reads the node's address from.
function Get-KubeletCommandLine {
    param(
        [Parameter(Mandatory = $true)][string] $Command,
        [Parameter(Mandatory = $true)][string] $NodeName,
        [AllowEmptyString()][string] $NodeIP = '',
        [Parameter(Mandatory = $true)][string] $FlagsFile
    )
    $line = "$Command --hostname-override=$NodeName"
    if ($NodeIP -ne '') { $line += " --node-ip=$NodeIP" }
    if (-not (Test-Path -LiteralPath $FlagsFile)) { return $line }
    $text = ([IO.File]::ReadAllText($FlagsFile)).Trim()
    $prefix = 'KUBELET_KUBEADM_ARGS='
    if (-not $text.StartsWith($prefix)) { throw "$FlagsFile does not set $prefix" }
    $tokens = @($text.Substring($prefix.Length).Trim('"') -split '\s+' | Where-Object { $_ -ne '' })
    for ($i = 0; $i -lt $tokens.Count; $i++) {
        $flag = $tokens[$i]
        if (-not $flag.StartsWith('--')) { throw "${FlagsFile}: $flag is no flag" }
        if (-not $flag.Contains('=') -and $i + 1 -lt $tokens.Count -and -not $tokens[$i + 1].StartsWith('--')) {
            $i++
            $flag += '=' + $tokens[$i]
        }
        $name, $value = $flag.Substring(2) -split '=', 2
        if ($name -eq 'node-ip' -and $NodeIP -ne '' -and $value -ne $NodeIP) {
            throw "the node joined with $flag ($FlagsFile), but its address is now ${NodeIP}: reset the machine and join it again"
        }
        $pattern = New-Object regex ('(?<=\s)--' + [regex]::Escape($name) + '(=\S*)?(?=\s|$)')
        if ($pattern.IsMatch($line)) {
            $line = $pattern.Replace($line, $flag.Replace('$', '$$'), 1)
        } else {
            $line += ' ' + $flag
        }
    }
    $line
}

# Set-KubeletService makes the kubelet service run $CommandLine, depending on
# containerd, through the service control manager: Windows reads a
# service's registry key (ImagePath) at boot only, and a start runs the
# manager's own copy. A running kubelet restarts to take the change. It
# returns whether it changed anything.
function Set-KubeletService {
    param([Parameter(Mandatory = $true)][string] $CommandLine)
    $service = Get-CimInstance -ClassName Win32_Service -Filter "Name='kubelet'"
    if ($null -eq $service) {
        New-Service -Name kubelet -DisplayName 'kubelet' -BinaryPathName $CommandLine -StartupType Manual -DependsOn containerd | Out-Null
        return $true
    }
    if ($service.PathName -ceq $CommandLine) { return $false }
    $r = Invoke-CimMethod -InputObject $service -MethodName Change -Arguments @{ PathName = $CommandLine; ServiceDependencies = [string[]]@('containerd') }
    if ($r.ReturnValue -ne 0) { throw "Win32_Service.Change of the kubelet service returned $($r.ReturnValue)" }
    if ((Get-Service -Name kubelet).Status -ne 'Stopped') { Restart-Service -Name kubelet -Force }
    $true
}

# Remove-Tree removes a directory and what it holds. A directory link in it
# (a symbolic link, a junction) is removed as a link, its target left as it
# is: Windows PowerShell 5.1's Remove-Item -Recurse stops at one ("There is
# a mismatch between the tag specified in the request and the tag present
# in the reparse point", PowerShell issue #621), where .NET removes a link
# with RemoveDirectory, whatever its target holds.
function Remove-Tree {
    param([Parameter(Mandatory = $true)][string] $Path)
    $reparse = [IO.FileAttributes]::ReparsePoint
    $root = New-Object IO.DirectoryInfo($Path)
    if (-not $root.Exists) { return }
    if (($root.Attributes -band $reparse) -ne 0) { $root.Delete(); return }
    $dirs = New-Object 'Collections.Generic.Stack[IO.DirectoryInfo]'
    $dirs.Push($root)
    while ($dirs.Count -gt 0) {
        foreach ($child in $dirs.Pop().GetDirectories()) {
            if (($child.Attributes -band $reparse) -ne 0) { $child.Delete() } else { $dirs.Push($child) }
        }
    }
    Remove-Item -LiteralPath $Path -Recurse -Force
}
