<#
.SYNOPSIS
Runs PSScriptAnalyzer over every PowerShell script the harness embeds.

.DESCRIPTION
The step scripts (infra/windows/scripts), the HostProcess start scripts
(infra/windows/manifests), the stdin bootstrap (infra/windows/remote), the
Hyper-V provider's scripts (infra/vms/hyperv/scripts), the web server
(fixtures/manifests) and the failure bundle's HNS dump
(framework/artifacts); not their tests. Installs
PSScriptAnalyzer at -Version for the current user when missing, prints
every finding of severity Warning or Error, and exits with 1 when there is
an Error. Run it from the repository's root.
#>
[CmdletBinding()]
param([string] $Version = '1.23.0')
Set-StrictMode -Version Latest
$ErrorActionPreference = 'Stop'
$ProgressPreference = 'SilentlyContinue'

if (-not (Get-Module -ListAvailable -Name PSScriptAnalyzer | Where-Object { $_.Version -eq [version]$Version })) {
    Write-Output "installing PSScriptAnalyzer $Version"
    Set-PSRepository -Name PSGallery -InstallationPolicy Trusted
    Install-Module -Name PSScriptAnalyzer -RequiredVersion $Version -Scope CurrentUser -Force
}
Import-Module -Name PSScriptAnalyzer -RequiredVersion $Version -Force

$dirs = @('infra/windows/scripts', 'infra/windows/manifests', 'infra/windows/remote', 'infra/vms/hyperv/scripts', 'fixtures/manifests', 'framework/artifacts')
$files = @(Get-ChildItem -Path $dirs -Filter '*.ps1' -File | Where-Object { $_.Name -notlike '*Test*.ps1' } | Sort-Object FullName)
if ($files.Count -lt 20) { throw "found $($files.Count) scripts under $($dirs -join ', '): run this from the repository's root" }
$errors = 0
$warnings = 0
foreach ($f in $files) {
    $found = @(Invoke-ScriptAnalyzer -Path $f.FullName -Severity 'Error', 'Warning')
    foreach ($d in $found) {
        Write-Output ('{0}:{1}: {2} {3}: {4}' -f (Resolve-Path -Relative $f.FullName), $d.Line, $d.Severity, $d.RuleName, $d.Message)
        if ([string]$d.Severity -eq 'Error') { $errors++ } else { $warnings++ }
    }
}
Write-Output "PSScriptAnalyzer ${Version}: $($files.Count) scripts, $errors errors, $warnings warnings"
if ($errors -gt 0) { exit 1 }
