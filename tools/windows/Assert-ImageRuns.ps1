# Assert-ImageRuns: fail, before `docker run --isolation process`, when an
# image pulled here cannot run on this host with process isolation: a Windows
# image runs so only on its own build, and an image of a later update
# revision (UBR) than the host's fails to start with 0xc0370106
# (microsoft/Windows-Containers#591: a host behind on updates). Dot-sourced
# by the Windows runners' test scripts.
function Get-HostUBR {
    [int](Get-ItemProperty -LiteralPath 'HKLM:\SOFTWARE\Microsoft\Windows NT\CurrentVersion' -Name UBR).UBR
}

function Assert-ImageRuns {
    param([Parameter(Mandatory = $true)][string] $Image)
    $os = ((docker image inspect $Image --format '{{.Os}} {{.OsVersion}}') -join '').Trim()
    if ($LASTEXITCODE -ne 0) { throw "docker image inspect $Image failed" }
    $hostBuild = [Environment]::OSVersion.Version.Build
    $hostUBR = Get-HostUBR
    if ($os -notmatch '^windows 10\.0\.(\d+)\.(\d+)$') { throw "$Image is '$os', not a Windows image with an os.version" }
    $build = [int]$Matches[1]
    $ubr = [int]$Matches[2]
    if ($build -ne $hostBuild) { throw "$Image is for Windows build 10.0.$build; this host is 10.0.$hostBuild: process isolation runs only the host's build" }
    if ($ubr -gt $hostUBR) {
        throw "$Image is 10.0.$build.$ubr, newer than this host (10.0.$hostBuild.$hostUBR): process isolation would fail with 0xc0370106; pin an older image (a version tag such as 10.0.$build.$hostUBR or older) or update the host"
    }
    Write-Host "$Image is 10.0.$build.$ubr; this host is 10.0.$hostBuild.$hostUBR"
}
