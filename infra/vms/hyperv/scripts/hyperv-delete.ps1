# winconform-step: hyperv-delete
# parameters: VMId, Folder, VhdxDir
# Removes a machine: the VM with the ID VMId (turned off first: Stop-VM
# -TurnOff, as pulling the plug), and the folders of the VHDX directory its
# disks are in; or, for a Create cut short, the folder Folder (<run>\<name>)
# and any VM whose disk is in it (made by New-VM before it was tagged).
# Remove-VM keeps the VM's disks: the folder goes with Remove-Item. Nothing
# outside the VHDX directory is removed, the golden image least of all.
# What is not there is no error.
$folders = New-Object System.Collections.Generic.List[string]
$targets = New-Object System.Collections.Generic.List[object]
if ($VMId -ne '') {
    foreach ($vm in @(Get-WinconformVM -Id $VMId)) { $targets.Add($vm) }
}
if ($Folder -ne '') {
    $own = [IO.Path]::GetFullPath((Join-Path $VhdxDir $Folder))
    $folders.Add($own)
    foreach ($vm in @(Hyper-V\Get-VM)) {
        foreach ($drive in @(Hyper-V\Get-VMHardDiskDrive -VM $vm)) {
            if ([string]$drive.Path -ne '' -and (Get-MachineFolder -Path $drive.Path -Dir $VhdxDir) -ieq $own) { $targets.Add($vm); break }
        }
    }
}
$removedVMs = @()
foreach ($vm in $targets) {
    if ($removedVMs -contains $vm.Id.ToString()) { continue }
    foreach ($drive in @(Hyper-V\Get-VMHardDiskDrive -VM $vm)) {
        $f = ''
        if ([string]$drive.Path -ne '') { $f = Get-MachineFolder -Path $drive.Path -Dir $VhdxDir }
        if ($f -ne '' -and -not $folders.Contains($f)) { $folders.Add($f) }
    }
    if ([string]$vm.State -ne 'Off') { Hyper-V\Stop-VM -VM $vm -TurnOff -Force }
    Hyper-V\Remove-VM -VM $vm -Force
    $removedVMs += $vm.Id.ToString()
}
$removedPaths = @()
foreach ($f in $folders) {
    if (Test-Path -LiteralPath $f) {
        # The worker process lets go of the disk as the VM goes; a moment
        # later it can still hold it.
        for ($try = 1; ; $try++) {
            try {
                Remove-Item -LiteralPath $f -Recurse -Force
                break
            } catch {
                if ($try -ge 10) { throw }
                Start-Sleep -Seconds 2
            }
        }
        $removedPaths += $f
    }
    # The run's folder goes with its last machine; a Create of the same run
    # may be filling it again meanwhile, and then it stays.
    $run = Split-Path -Parent $f
    if ((Test-Path -LiteralPath $run) -and @(Get-ChildItem -LiteralPath $run -Force).Count -eq 0) {
        Remove-Item -LiteralPath $run -Force -ErrorAction SilentlyContinue
        if (-not (Test-Path -LiteralPath $run)) { $removedPaths += $run }
    }
}
Write-Status ([ordered]@{ removedVMs = $removedVMs; removedPaths = $removedPaths })
