<#
.SYNOPSIS
Waits for the Docker daemon of this Windows runner to answer, starting its
service when it is stopped; fails after -Seconds.

.DESCRIPTION
On a fresh runner the docker service may still be starting when the job's
first step runs: `docker version` then fails to reach the daemon's pipe.
This asks every few seconds until the server answers, and prints its
version.
#>
[CmdletBinding()]
param([int] $Seconds = 300, [int] $IntervalSeconds = 5)
Set-StrictMode -Version Latest
$ErrorActionPreference = 'Stop'

$service = Get-Service -Name docker -ErrorAction SilentlyContinue
if ($null -eq $service) { throw 'this runner has no docker service' }
if ($service.Status -eq 'Stopped') { Start-Service -Name docker }
$deadline = (Get-Date).AddSeconds($Seconds)
while ($true) {
    $ErrorActionPreference = 'Continue'
    $out = @(docker version --format '{{.Server.Os}} {{.Server.Version}}' 2>&1 | ForEach-Object { "$_" })
    $code = $LASTEXITCODE
    $ErrorActionPreference = 'Stop'
    if ($code -eq 0) {
        Write-Output "the Docker daemon answers: $($out -join ' ')"
        return
    }
    if ((Get-Date) -gt $deadline) {
        throw "the Docker daemon did not answer within ${Seconds}s (service $((Get-Service -Name docker).Status)): $($out -join ' ')"
    }
    Start-Sleep -Seconds $IntervalSeconds
}
