<#
.SYNOPSIS
Builds the probe's image index with `winconform images push`, loads it into
this machine's Docker without a registry of its own, and runs its Windows
variant with process isolation.

.DESCRIPTION
No registry container runs Windows, so the index goes to an in-memory
registry served on 127.0.0.1 by tools/localregistry (go-containerregistry's),
which Docker treats as insecure by default. Docker then pulls the variant of
this machine's build. In the container:

  - probe serve answers over HTTP from the host (its page and /json);
  - probe dnsconfig reads the container's DNS configuration;
  - probe connect reaches the host (HTTP, TCP and ICMP to a probe serving on
    the host, at the NAT network's gateway).

Run it from the repository's root after building _output/bin (see
.github/workflows/windows.yml). -Release is the Windows release of this
machine: ltsc2022 or ltsc2025. -BaseTag pins its nanoserver base to a
version tag (10.0.20348.2340): a floating tag may be of a later update than
the host, which process isolation cannot run (see Assert-ImageRuns.ps1).
Logs go to _output/logs.
#>
[CmdletBinding()]
param(
    [Parameter(Mandatory = $true)][ValidateSet('ltsc2019', 'ltsc2022', 'ltsc2025')][string] $Release,
    [string] $BaseTag = '',
    [string] $Bin = '_output/bin',
    [string] $Registry = '127.0.0.1:5000',
    [string] $Logs = '_output/logs'
)
Set-StrictMode -Version Latest
$ErrorActionPreference = 'Stop'
$ProgressPreference = 'SilentlyContinue'

New-Item -ItemType Directory -Force -Path $Logs | Out-Null
$Bin = (Resolve-Path $Bin).Path
$Logs = (Resolve-Path $Logs).Path
$ref = "$Registry/winconform/probe:ci"
$container = 'winconform-probe'
$hostPorts = @(18080, 18081)
$started = @()

# Invoke-Checked runs a native command, shows what it printed (stderr too),
# fails on a non-zero exit code, and returns its output lines.
function Invoke-Checked {
    param([string] $What, [scriptblock] $Command)
    Write-Host "> $What"
    $ErrorActionPreference = 'Continue'
    $out = @(& $Command 2>&1 | ForEach-Object { "$_" })
    $code = $LASTEXITCODE
    $ErrorActionPreference = 'Stop'
    $out | ForEach-Object { Write-Host "  $_" }
    if ($code -ne 0) { throw "$What failed (exit code $code)" }
    $out
}

. (Join-Path $PSScriptRoot 'Wait-Http.ps1')
. (Join-Path $PSScriptRoot 'Assert-ImageRuns.ps1')

try {
    # The registry.
    $started += Start-Process -FilePath (Join-Path $Bin 'localregistry.exe') -ArgumentList @('-addr', $Registry) -PassThru -NoNewWindow `
        -RedirectStandardError (Join-Path $Logs 'localregistry.log') -RedirectStandardOutput (Join-Path $Logs 'localregistry.out')
    Wait-Http "http://$Registry/v2/" | Out-Null

    # The index: the Linux image and this release's Windows image only.
    $others = @('ltsc2019', 'ltsc2022', 'ltsc2025') | Where-Object { $_ -ne $Release } | ForEach-Object { '--base'; "$_=" }
    if ($BaseTag -ne '') { $others += @('--base', "$Release=mcr.microsoft.com/windows/nanoserver:$BaseTag") }
    Invoke-Checked "winconform images push --ref $ref" {
        & (Join-Path $Bin 'winconform.exe') images push --ref $ref --insecure `
            --linux-binary (Join-Path $Bin 'probe-linux-amd64') --windows-binary (Join-Path $Bin 'probe-windows-amd64.exe') @others
    } | Out-Null

    # Docker picks the variant of this machine's build.
    Invoke-Checked "docker pull $ref" { docker pull $ref } | Out-Null
    Assert-ImageRuns $ref

    # probe serve, in the container, with process isolation.
    Invoke-Checked 'docker run (process isolation)' { docker run -d --isolation process --name $container $ref } | Out-Null
    $ip = ((Invoke-Checked 'container address' { docker inspect $container --format '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' }) -join '').Trim()
    $gateway = ((Invoke-Checked 'NAT gateway' { docker inspect $container --format '{{range .NetworkSettings.Networks}}{{.Gateway}}{{end}}' }) -join '').Trim()
    $hostname = ((Invoke-Checked 'container hostname' { docker inspect $container --format '{{.Config.Hostname}}' }) -join '').Trim()
    $page = Wait-Http "http://${ip}:8080/"
    if ($page.Content -notlike '*winconform probe web server*' -or $page.Content -notlike "*hostname $hostname*") { throw "probe serve's page: $($page.Content)" }
    $info = (Wait-Http "http://${ip}:8080/json").Content | ConvertFrom-Json
    if ($info.hostname -ne $hostname -or $info.callerCount -lt 1) { throw "probe serve's /json: $($info | ConvertTo-Json -Compress)" }
    Write-Host "probe serve answers the host from $ip (container $hostname)"

    # probe dnsconfig.
    $dns = (Invoke-Checked 'probe dnsconfig' { docker exec $container C:\probe\probe.exe dnsconfig }) -join '' | ConvertFrom-Json
    if ($dns.source -ne 'windows' -or @($dns.servers).Count -eq 0) { throw "probe dnsconfig: $($dns | ConvertTo-Json -Compress)" }
    Write-Host "probe dnsconfig: servers $($dns.servers -join ', '), search $($dns.search -join ', ')"

    # probe connect, from the container to a probe serving on the host.
    New-NetFirewallRule -Name 'winconform-probe-test' -DisplayName 'winconform probe test' -Direction Inbound -Protocol TCP -LocalPort $hostPorts -Action Allow | Out-Null
    New-NetFirewallRule -Name 'winconform-probe-test-icmp' -DisplayName 'winconform probe test (ICMP)' -Direction Inbound -Protocol ICMPv4 -IcmpType 8 -Action Allow | Out-Null
    $started += Start-Process -FilePath (Join-Path $Bin 'probe-windows-amd64.exe') -PassThru -NoNewWindow `
        -ArgumentList @('serve', '--http-port', $hostPorts[0], '--tcp-port', $hostPorts[1], '--udp-port', '0', '--name', 'runner') `
        -RedirectStandardOutput (Join-Path $Logs 'host-probe.log') -RedirectStandardError (Join-Path $Logs 'host-probe.err')
    Wait-Http "http://127.0.0.1:$($hostPorts[0])/healthz" | Out-Null
    $lines = Invoke-Checked 'probe connect (container to host)' {
        docker exec $container C:\probe\probe.exe connect --timeout 5s --attempts 3 "http://${gateway}:$($hostPorts[0])/json" "tcp://${gateway}:$($hostPorts[1])" "icmp://$gateway"
    }
    foreach ($line in $lines) {
        $r = $line | ConvertFrom-Json
        if (-not $r.ok) { throw "probe connect to $($r.target): $($r.errorClass) $($r.error)" }
    }
    Write-Host "probe connect reaches the host at $gateway (HTTP, TCP, ICMP)"
} finally {
    docker logs $container *> (Join-Path $Logs 'probe-container.log')
    docker rm -f $container *> $null
    foreach ($p in $started) { if ($p -and -not $p.HasExited) { Stop-Process -Id $p.Id -Force } }
    Remove-NetFirewallRule -Name 'winconform-probe-test', 'winconform-probe-test-icmp' -ErrorAction SilentlyContinue
}
