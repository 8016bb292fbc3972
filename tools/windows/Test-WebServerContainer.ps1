<#
.SYNOPSIS
Runs the documented web server script (fixtures/manifests/webserver.ps1) in
a Windows Server Core container with process isolation, as the fixture's
Deployment does, and asks it for its page.

.DESCRIPTION
The container runs powershell.exe with the script's text (here encoded, as
-Command takes it in the fixture). The test asks for the page twice from
the host and checks the page, the caller count, and the log lines kubectl
logs would show. -Release is the Windows release of this machine (the
Server Core tag), -Tag a version tag to pin instead (10.0.20348.2340): a
floating tag may be of a later update than the host, which process
isolation cannot run (see Assert-ImageRuns.ps1). Logs go to _output/logs.
#>
[CmdletBinding()]
param(
    [Parameter(Mandatory = $true)][ValidateSet('ltsc2019', 'ltsc2022', 'ltsc2025')][string] $Release,
    [string] $Tag = '',
    [string] $Logs = '_output/logs'
)
Set-StrictMode -Version Latest
$ErrorActionPreference = 'Stop'
$ProgressPreference = 'SilentlyContinue'

New-Item -ItemType Directory -Force -Path $Logs | Out-Null
if ($Tag -eq '') { $Tag = $Release }
$image = "mcr.microsoft.com/windows/servercore:$Tag"
$container = 'winconform-webserver'
$script = [IO.File]::ReadAllText((Resolve-Path 'fixtures/manifests/webserver.ps1').Path)
$encoded = [Convert]::ToBase64String([Text.Encoding]::Unicode.GetBytes($script))

. (Join-Path $PSScriptRoot 'Wait-Http.ps1')
. (Join-Path $PSScriptRoot 'Assert-ImageRuns.ps1')

try {
    docker pull $image
    if ($LASTEXITCODE -ne 0) { throw "docker pull $image failed" }
    Assert-ImageRuns $image
    docker run -d --isolation process --name $container $image powershell.exe -NoLogo -NoProfile -NonInteractive -EncodedCommand $encoded
    if ($LASTEXITCODE -ne 0) { throw 'docker run failed' }
    $ip = ((docker inspect $container --format '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}') -join '').Trim()
    $hostname = ((docker inspect $container --format '{{.Config.Hostname}}') -join '').Trim()
    $first = Wait-Http "http://${ip}/" -Seconds 120 -IntervalSeconds 2
    $second = Wait-Http "http://${ip}/" -Seconds 120 -IntervalSeconds 2
    foreach ($want in '<H1>Windows Container Web Server</H1>', "hostname $hostname") {
        if ($first.Content -notlike "*$want*") { throw "the page lacks '$want': $($first.Content)" }
    }
    if ($first.Content -notmatch 'IP \S+ callerCount 1' -or $second.Content -notmatch 'IP \S+ callerCount 2') {
        throw "the caller counts are not 1 then 2: $($first.Content) / $($second.Content)"
    }
    $log = @(docker logs $container)
    if (-not ($log -contains "serving http://*:80/ on $hostname") -or @($log | Where-Object { $_ -eq '< 200' }).Count -lt 2) {
        throw "the server's log lacks its start or its answers: $($log -join ' | ')"
    }
    Write-Output "the web server answers at ${ip}:80 in a Server Core $Release container (process isolation); its log:"
    $log | ForEach-Object { Write-Output "  $_" }
} finally {
    docker logs $container *> (Join-Path $Logs 'webserver-container.log')
    docker rm -f $container *> $null
}
