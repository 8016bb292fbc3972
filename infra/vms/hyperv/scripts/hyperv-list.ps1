# winconform-step: hyperv-list
# parameters: VhdxDir
# Lists the VMs whose Notes have a line winconform-run=..., with their notes,
# creation time and disks, and the machine folders of the VHDX directory
# (<run>\<machine>): the provider makes out which folders no tagged VM uses
# (a Create cut short). VMs without the tag are not the harness's: nothing
# of them is printed.
$vms = @(foreach ($vm in @(Hyper-V\Get-VM)) {
    $notes = [string]$vm.Notes
    if ($notes -notmatch '(?m)^winconform-run=') { continue }
    [ordered]@{
        id      = $vm.Id.ToString()
        name    = [string]$vm.Name
        notes   = $notes
        created = $vm.CreationTime.ToUniversalTime().ToString('o')
        state   = [string]$vm.State
        disks   = @(Hyper-V\Get-VMHardDiskDrive -VM $vm | ForEach-Object { [string]$_.Path })
    }
})
$folders = @()
if (Test-Path -LiteralPath $VhdxDir -PathType Container) {
    $folders = @(foreach ($run in @(Get-ChildItem -LiteralPath $VhdxDir -Directory)) {
        foreach ($m in @(Get-ChildItem -LiteralPath $run.FullName -Directory)) {
            [ordered]@{ run = $run.Name; name = $m.Name; path = $m.FullName; created = $m.CreationTimeUtc.ToString('o') }
        }
    })
}
Write-Status ([ordered]@{ vms = $vms; folders = $folders })
