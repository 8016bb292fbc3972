<#
.SYNOPSIS
Runs winconform's Pester tests: every *.Tests.ps1 under -Path.

.DESCRIPTION
Installs Pester at -PesterVersion for the current user when this PowerShell
lacks it, runs the tests, writes their results as JUnit XML to -ResultFile,
prints how many tests of each file passed, and exits with 1 when one failed
(or a test file could not run). Run it from the repository's root, with
Windows PowerShell 5.1 (the machines' PowerShell) and with PowerShell 7;
it builds tools/upstreamjudge (kubeadm's judgement of the
join's files, which the step fakes' kubeadm runs) unless
WINCONFORM_UPSTREAM_JUDGE names one.
#>
[CmdletBinding()]
param(
    [Parameter(Mandatory = $true)][string] $ResultFile,
    [string[]] $Path = @('infra/windows', 'infra/vms', 'fixtures/manifests', 'framework/artifacts'),
    [string] $PesterVersion = '5.7.1'
)
Set-StrictMode -Version Latest
$ErrorActionPreference = 'Stop'
$ProgressPreference = 'SilentlyContinue'

if (-not (Get-Module -ListAvailable -Name Pester | Where-Object { $_.Version -eq [version]$PesterVersion })) {
    Write-Output "installing Pester $PesterVersion for $($PSVersionTable.PSEdition) PowerShell $($PSVersionTable.PSVersion)"
    if ($PSVersionTable.PSEdition -eq 'Desktop') {
        [Net.ServicePointManager]::SecurityProtocol = [Net.ServicePointManager]::SecurityProtocol -bor [Net.SecurityProtocolType]::Tls12
        Install-PackageProvider -Name NuGet -MinimumVersion 2.8.5.201 -Force -Scope CurrentUser | Out-Null
    }
    Set-PSRepository -Name PSGallery -InstallationPolicy Trusted
    # The Pester that ships with Windows (3.4) is signed by another publisher.
    Install-Module -Name Pester -RequiredVersion $PesterVersion -Scope CurrentUser -Force -SkipPublisherCheck -AllowClobber
}
Import-Module -Name Pester -RequiredVersion $PesterVersion -Force

$dir = Split-Path -Parent $ResultFile
if ($dir) { New-Item -ItemType Directory -Force -Path $dir | Out-Null }

# The step fakes' kubeadm join is kubeadm's own code (the Windows build, on
# Windows), through tools/upstreamjudge.
if (-not $env:WINCONFORM_UPSTREAM_JUDGE) {
    $judge = Join-Path ([IO.Path]::GetTempPath()) 'winconform-upstreamjudge.exe'
    & go build -o $judge ./tools/upstreamjudge
    if ($LASTEXITCODE -ne 0) { throw 'go build ./tools/upstreamjudge failed' }
    $env:WINCONFORM_UPSTREAM_JUDGE = $judge
}

$config = New-PesterConfiguration
$config.Run.Path = $Path
$config.Run.PassThru = $true
$config.Output.Verbosity = 'Detailed'
$config.TestResult.Enabled = $true
$config.TestResult.OutputFormat = 'JUnitXml'
$config.TestResult.OutputPath = $ResultFile
$result = Invoke-Pester -Configuration $config

Write-Output ''
Write-Output "Pester $PesterVersion on $($PSVersionTable.PSEdition) PowerShell $($PSVersionTable.PSVersion), tests per file:"
$root = (Get-Location).Path
$result.Tests | Group-Object { $_.ScriptBlock.File } | Sort-Object Name | ForEach-Object {
    $file = $_.Name
    if ($file.StartsWith($root)) { $file = $file.Substring($root.Length).TrimStart('\', '/') }
    $passed = @($_.Group | Where-Object { $_.Result -eq 'Passed' }).Count
    $failed = @($_.Group | Where-Object { $_.Result -eq 'Failed' }).Count
    $skipped = @($_.Group | Where-Object { $_.Result -eq 'Skipped' }).Count
    Write-Output ('  {0,-70} {1,4} tests: {2} passed, {3} failed, {4} skipped' -f $file, $_.Count, $passed, $failed, $skipped)
}
Write-Output ('{0} passed, {1} failed, {2} skipped' -f $result.PassedCount, $result.FailedCount, $result.SkippedCount)
if ($result.Result -ne 'Passed') {
    Write-Output "Pester: $($result.Result) ($($result.FailedCount) tests failed, $($result.FailedContainersCount) test files could not run)"
    exit 1
}
