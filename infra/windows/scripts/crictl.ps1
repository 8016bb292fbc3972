# winconform-step: crictl
# parameters: Source, Version, InstallDir, Endpoint
# Installs crictl, the CRI's command line (kubernetes-sigs/cri-tools), at
# $InstallDir\crictl.exe from $Source (cri-tools' crictl-<version>-windows-
# amd64.tar.gz, a directory or crictl.exe; a URL or a path on the machine),
# and writes crictl.yaml beside it, pointing crictl at containerd's pipe,
# $Endpoint. crictl reads %USERPROFILE%\.crictl\crictl.yaml, and when that
# file does not exist, the crictl.yaml of its own directory: every account
# without a configuration of its own finds this one. Nothing changes when
# $Version (or, without one, the same $Source) is installed and crictl.yaml
# says the same.
$exe = Join-Path $InstallDir 'crictl.exe'
$changed = $false
$state = Get-State 'crictl'
$installed = Get-ExeVersion -Path $exe
$upToDate = $false
if ($installed -ne '') {
    if ($Version -ne '') {
        $upToDate = ($installed.TrimStart('v') -eq $Version.TrimStart('v'))
    } else {
        $upToDate = ((Get-StateValue $state 'source') -eq $Source)
    }
}
if (-not $upToDate) {
    $found = Find-SourceFile -Source $Source -Name 'crictl.exe' -Work (New-WorkDir 'crictl')
    New-Item -ItemType Directory -Force -Path $InstallDir | Out-Null
    # An operator's crictl (logs -f, events) may be running it.
    Install-Program -Source $found -Destination $exe | Out-Null
    $installed = Get-ExeVersion -Path $exe
    if ($Version -ne '' -and $installed.TrimStart('v') -ne $Version.TrimStart('v')) {
        throw "$Source installed crictl $installed, not $Version"
    }
    Set-State 'crictl' ([ordered]@{ source = $Source; version = $installed })
    $changed = $true
}

# The runtime and image endpoints, as sig-windows-tools' Install-Containerd.ps1
# writes them: without them crictl tries its deprecated default endpoints in
# turn, warning each time.
$configPath = Join-Path $InstallDir 'crictl.yaml'
$config = "runtime-endpoint: $Endpoint`nimage-endpoint: $Endpoint`n"
$current = ''
if (Test-Path -LiteralPath $configPath) { $current = [IO.File]::ReadAllText($configPath) }
if ($current -ne $config) {
    [IO.File]::WriteAllText($configPath, $config, (New-Object Text.UTF8Encoding($false)))
    $changed = $true
}
Write-Status ([ordered]@{ changed = $changed; version = $installed; config = $configPath })
