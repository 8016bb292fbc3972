# winconform-step: defender
# parameters: Paths, Processes
# Adds the Microsoft Defender exclusions the node's runtime and binaries
# need, only those missing. $Paths and $Processes are lists separated by '|'.
$changed = $false
if (-not (Get-Command -Name Get-MpPreference -ErrorAction SilentlyContinue)) {
    Write-Status ([ordered]@{ changed = $false; defender = $false; added = @() })
    return
}
$pref = Get-MpPreference
$havePaths = @($pref.ExclusionPath | Where-Object { $_ })
$haveProcesses = @($pref.ExclusionProcess | Where-Object { $_ })
$added = @()
$missingPaths = @($Paths -split '\|' | Where-Object { $_ -ne '' -and $havePaths -notcontains $_ })
if ($missingPaths.Count -gt 0) {
    Add-MpPreference -ExclusionPath $missingPaths
    $added += $missingPaths
}
$missingProcesses = @($Processes -split '\|' | Where-Object { $_ -ne '' -and $haveProcesses -notcontains $_ })
if ($missingProcesses.Count -gt 0) {
    Add-MpPreference -ExclusionProcess $missingProcesses
    $added += $missingProcesses
}
$changed = $added.Count -gt 0
Write-Status ([ordered]@{ changed = $changed; defender = $true; added = $added })
