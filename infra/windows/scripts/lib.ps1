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

# Wait-Condition polls $Test until it returns true or $Seconds pass.
function Wait-Condition {
    param([Parameter(Mandatory = $true)][scriptblock] $Test, [int] $Seconds = 60, [string] $What = 'the condition')
    $deadline = (Get-Date).AddSeconds($Seconds)
    while (-not (& $Test)) {
        if ((Get-Date) -gt $deadline) { throw "timed out after ${Seconds}s waiting for $What" }
        Start-Sleep -Seconds 1
    }
}
