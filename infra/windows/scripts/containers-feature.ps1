# winconform-step: containers-feature
# parameters: none
# Installs the Containers feature when it is missing. Installing it needs a
# reboot, which the harness does, then runs this step again.
$feature = Get-WindowsFeature -Name Containers
if ($null -eq $feature) { throw 'the Containers feature does not exist here: Windows nodes need Windows Server' }
$state = $feature.InstallState.ToString()
$changed = $false
$restartNeeded = $false
switch ($state) {
    'Installed' { }
    'InstallPending' { $restartNeeded = $true }
    default {
        $result = Install-WindowsFeature -Name Containers
        if (-not $result.Success) { throw "Install-WindowsFeature Containers failed: exit code $($result.ExitCode)" }
        $changed = $true
        $restartNeeded = ($result.RestartNeeded.ToString() -ne 'No')
        $state = (Get-WindowsFeature -Name Containers).InstallState.ToString()
    }
}
Write-Status ([ordered]@{ changed = $changed; restartNeeded = $restartNeeded; installState = $state })
