# winconform-step: defender
# parameters: Paths, Processes
# Adds the Microsoft Defender exclusions the node's runtime and binaries
# need, only those missing. $Paths and $Processes are lists separated by '|'.
# A Defender that is not running changes nothing.
# Defender counts as absent when its cmdlets are missing (the feature
# uninstalled) or its service, WinDefend, is not running (turned off by
# policy, or another antivirus): Get-MpPreference and Add-MpPreference then
# fail with 0x800106ba, and there is nothing to exclude from.
$changed = $false
if (-not (Get-Command -Name Get-MpPreference -ErrorAction SilentlyContinue)) {
    Write-Status ([ordered]@{ changed = $false; defender = $false; added = @(); reason = 'the Defender cmdlets are missing' })
    return
}
$defend = Get-Service -Name WinDefend -ErrorAction SilentlyContinue
if ($null -eq $defend -or $defend.Status -ne 'Running') {
    $state = 'missing'
    if ($null -ne $defend) { $state = [string]$defend.Status }
    Write-Status ([ordered]@{ changed = $false; defender = $false; added = @(); reason = "the WinDefend service is $state" })
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
