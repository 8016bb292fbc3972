# winconform-step: hyperv-create
# parameters: Name, RunID, Image, VhdxDir, Switch, Generation, SecureBootTemplate, CPUs, MemoryBytes, Notes
# Makes one VM in <VhdxDir>\<RunID>\<Name>: a differencing disk whose parent
# is the golden image, then the VM on it (its configuration in the same
# folder), tagged with Notes right after New-VM (New-VM takes no notes), then
# starts it. A failure removes what the script made and says at which cmdlet.
$folder = Join-Path (Join-Path $VhdxDir $RunID) $Name
# A differencing disk has its parent's format (VHD or VHDX).
$disk = Join-Path $folder ($Name + [IO.Path]::GetExtension($Image).ToLowerInvariant())
if (-not (Test-Path -LiteralPath $Image -PathType Leaf)) {
    Write-Status ([ordered]@{ stage = 'image'; error = "the golden image $Image is not a file on this host" })
    return
}
if (Test-Path -LiteralPath $folder) {
    Write-Status ([ordered]@{ stage = 'folder'; error = "$folder is there already: a machine of that name was made before" })
    return
}
$stage = 'New-Item'
$vm = $null
try {
    New-Item -ItemType Directory -Path $folder | Out-Null
    $stage = 'New-VHD'
    Hyper-V\New-VHD -Path $disk -ParentPath $Image -Differencing | Out-Null
    $stage = 'New-VM'
    $vm = Hyper-V\New-VM -Name $Name -Generation ([int16]$Generation) -MemoryStartupBytes ([int64]$MemoryBytes) -VHDPath $disk -SwitchName $Switch -Path (Split-Path -Parent $folder)
    $stage = 'Set-VM'
    Hyper-V\Set-VM -VM $vm -Notes $Notes -ProcessorCount ([int64]$CPUs)
    # Windows 10 1709 and later take a checkpoint at every start unless told
    # not to (packer-plugin-hyperv's DisableAutomaticCheckpoints): its
    # .avhdx would sit between the VM and its disk.
    if ((Get-Command -Name 'Hyper-V\Set-VM').Parameters.ContainsKey('AutomaticCheckpointsEnabled')) {
        Hyper-V\Set-VM -VM $vm -AutomaticCheckpointsEnabled $false
    }
    if ([int]$Generation -eq 2) {
        $stage = 'Set-VMFirmware'
        if ($SecureBootTemplate -eq '') {
            Hyper-V\Set-VMFirmware -VM $vm -EnableSecureBoot Off
        } else {
            Hyper-V\Set-VMFirmware -VM $vm -EnableSecureBoot On -SecureBootTemplate $SecureBootTemplate
        }
    }
    $stage = 'Start-VM'
    Hyper-V\Start-VM -VM $vm
} catch {
    $message = $_.Exception.Message
    if ($null -ne $vm) {
        Hyper-V\Stop-VM -VM $vm -TurnOff -Force -ErrorAction SilentlyContinue
        Hyper-V\Remove-VM -VM $vm -Force -ErrorAction SilentlyContinue
    }
    Remove-Item -LiteralPath $folder -Recurse -Force -ErrorAction SilentlyContinue
    $run = Split-Path -Parent $folder
    if ((Test-Path -LiteralPath $run) -and @(Get-ChildItem -LiteralPath $run -Force).Count -eq 0) {
        Remove-Item -LiteralPath $run -Force -ErrorAction SilentlyContinue
    }
    Write-Status ([ordered]@{ stage = $stage; error = $message; left = (Test-Path -LiteralPath $folder) })
    return
}
Write-Status ([ordered]@{
    id      = $vm.Id.ToString()
    name    = [string]$vm.Name
    created = $vm.CreationTime.ToUniversalTime().ToString('o')
    disk    = $disk
})
