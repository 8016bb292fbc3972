# winconform-library: hyperv
# Helpers of the Hyper-V provider's scripts. The provider runs a script as:
# its marker line, its parameters (single-quoted strings), this file, then
# the script. Every script prints a one-line JSON status as its last line.
#
# The Hyper-V cmdlets are called module-qualified (Hyper-V\Get-VM): VMware's
# PowerCLI has a Get-VM and a New-VM of its own, and a host with both would
# run the wrong one (hashicorp/vagrant plugins/providers/hyperv/scripts and
# hashicorp/packer-plugin-hyperv call them so too).
Set-StrictMode -Version Latest
$ErrorActionPreference = 'Stop'
$ProgressPreference = 'SilentlyContinue'

# Write-Status prints the script's result as one line of JSON. It must be
# the last line the script prints: the provider parses it.
function Write-Status {
    param([Parameter(Mandatory = $true)][System.Collections.IDictionary] $Status)
    $out = [ordered]@{ script = $StepName }
    foreach ($key in $Status.Keys) { $out[$key] = $Status[$key] }
    Write-Output (ConvertTo-Json -InputObject $out -Compress -Depth 6)
}

# Get-WinconformVM returns the VM whose ID is $Id (none when it is not
# there). It filters the host's VMs rather than asking Get-VM -Id, whose
# error for an absent VM has no stable category across Windows versions.
function Get-WinconformVM {
    param([Parameter(Mandatory = $true)][string] $Id)
    @(Hyper-V\Get-VM | Where-Object { $_.Id.ToString() -eq $Id })
}

# Get-MachineFolder returns the machine folder of the harness's VHDX
# directory that holds $Path (<Dir>\<run>\<machine>\<file>), or '' when
# $Path is not in one.
function Get-MachineFolder {
    param([Parameter(Mandatory = $true)][string] $Path, [Parameter(Mandatory = $true)][string] $Dir)
    $root = [IO.Path]::GetFullPath($Dir).TrimEnd('\')
    $folder = [IO.Path]::GetDirectoryName([IO.Path]::GetFullPath($Path))
    if ([string]::IsNullOrEmpty($folder)) { return '' }
    $run = [IO.Path]::GetDirectoryName($folder)
    if ([string]::IsNullOrEmpty($run)) { return '' }
    $parent = [IO.Path]::GetDirectoryName($run)
    if ($null -ne $parent -and $parent.TrimEnd('\') -ieq $root) { return $folder }
    ''
}
