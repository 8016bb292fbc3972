# FakeProcesses.ps1: the fake machine's running programs, for StepTest.ps1
# (which dot-sources it). It fakes what Windows does to the program of a
# running process, as the simulated machine does
# (testing/simmachine/processes.go): while the process runs,
# its file cannot be overwritten (Copy-Item fails: "being used by another
# process") or deleted (Remove-Item fails: access denied), but it can be
# renamed or moved on its volume (Move-Item), and the process runs on from
# there. A stop frees nothing within the step: Stop-Process of a pod's
# program (the kubelet starts the container again) runs the container's
# command again, from its original path; a service started again runs its
# program from its original path too. Running-programs.Tests.ps1 checks the
# same behaviour on the runner's real Windows.
#
# A process is an entry of $Machine.Processes: Path (the file it runs from
# now), Command (the path it was started from), Owner (service:NAME, or pod)
# and Id. The fact process:PATH is the Owner of the entry at PATH.

# Get-FakeMachineOrNull is the machine a step runs on, $null outside a step.
function Get-FakeMachineOrNull {
    $machine = Get-Variable -Name WcFake -ValueOnly -ErrorAction SilentlyContinue
    if ($machine -is [hashtable] -and $machine.ContainsKey('Processes')) { return $machine }
    $null
}

function ConvertTo-FullPath {
    param([string] $Path)
    [IO.Path]::GetFullPath($Path)
}

# Get-FakeProcessAt returns the process running from a path, if any.
function Get-FakeProcessAt {
    param($Machine, [string] $Path)
    $full = ConvertTo-FullPath $Path
    foreach ($p in $Machine.Processes) {
        if ((ConvertTo-FullPath $p.Path) -ieq $full) { return $p }
    }
}

function Set-FakeProcessFact {
    param($Machine, [string] $Path, [AllowEmptyString()][string] $Owner)
    $p = Get-FakeProcessAt $Machine $Path
    if ($null -ne $p) { [void] $Machine.Processes.Remove($p) }
    if ($Owner -ne '') {
        $Machine.Processes.Add(@{ Path = $Path; Command = $Path; Owner = $Owner; Id = 4000 + $Machine.Processes.Count })
    }
}

function Get-FakeProcessFact {
    param($Machine, [string] $Path)
    $p = Get-FakeProcessAt $Machine $Path
    if ($null -eq $p) { return '' }
    [string]$p.Owner
}

# Restart-FakeServiceProcess runs a service's program again from its
# original path (Start-Service, Restart-Service).
function Restart-FakeServiceProcess {
    param([string] $Name)
    $machine = Get-FakeMachineOrNull
    if ($null -eq $machine) { return }
    foreach ($p in $machine.Processes) {
        if ($p.Owner -eq "service:$Name") { $p.Path = $p.Command }
    }
}

function Copy-Item {
    [CmdletBinding()]
    param(
        [Parameter(Position = 0)][string[]] $Path,
        [string[]] $LiteralPath,
        [Parameter(Position = 1)][string] $Destination,
        [switch] $Force,
        [switch] $Recurse
    )
    $machine = Get-FakeMachineOrNull
    if ($null -ne $machine -and $Destination) {
        if ($PSBoundParameters.ContainsKey('LiteralPath')) {
            $sources = @($LiteralPath)
        } else {
            $sources = @(Microsoft.PowerShell.Management\Resolve-Path -Path $Path | ForEach-Object { $_.ProviderPath })
        }
        foreach ($s in $sources) {
            $target = $Destination
            if (Test-Path -LiteralPath $Destination -PathType Container) { $target = Join-Path $Destination (Split-Path -Leaf $s) }
            if ($null -ne (Get-FakeProcessAt $machine $target)) {
                throw (New-Object IO.IOException ("The process cannot access the file '$target' because it is being used by another process."))
            }
        }
    }
    Microsoft.PowerShell.Management\Copy-Item @PSBoundParameters
}

function Remove-Item {
    [CmdletBinding()]
    param(
        [Parameter(Position = 0)][string[]] $Path,
        [Parameter(ValueFromPipelineByPropertyName = $true)][Alias('PSPath')][string[]] $LiteralPath,
        [switch] $Recurse,
        [switch] $Force
    )
    process {
        $machine = Get-FakeMachineOrNull
        if ($null -ne $machine) {
            $targets = @()
            if ($PSBoundParameters.ContainsKey('LiteralPath')) {
                $targets = @($LiteralPath | ForEach-Object { Microsoft.PowerShell.Management\Convert-Path -LiteralPath $_ })
            } elseif ($null -ne $Path) {
                $targets = @(Microsoft.PowerShell.Management\Resolve-Path -Path $Path | ForEach-Object { $_.ProviderPath })
            }
            foreach ($t in $targets) {
                $full = ConvertTo-FullPath $t
                foreach ($p in $machine.Processes) {
                    $held = ConvertTo-FullPath $p.Path
                    if ($held -ieq $full -or $held.StartsWith($full.TrimEnd('\') + '\', [StringComparison]::OrdinalIgnoreCase)) {
                        throw (New-Object UnauthorizedAccessException ("Access to the path '$held' is denied."))
                    }
                }
            }
        }
        Microsoft.PowerShell.Management\Remove-Item @PSBoundParameters
    }
}

function Move-Item {
    [CmdletBinding()]
    param(
        [Parameter(Position = 0)][string] $Path,
        [string] $LiteralPath,
        [Parameter(Position = 1)][string] $Destination,
        [switch] $Force
    )
    $from = $LiteralPath
    if (-not $PSBoundParameters.ContainsKey('LiteralPath')) { $from = $Path }
    Microsoft.PowerShell.Management\Move-Item @PSBoundParameters
    $machine = Get-FakeMachineOrNull
    if ($null -eq $machine) { return }
    $p = Get-FakeProcessAt $machine $from
    if ($null -ne $p) {
        Add-FakeAction "Move-Item $(Split-Path -Leaf $from) (running)"
        $p.Path = $Destination
    }
}

function Get-Process {
    [CmdletBinding()]
    param([Parameter(Position = 0)][string[]] $Name)
    $machine = Get-FakeMachineOrNull
    if ($null -eq $machine) { return (Microsoft.PowerShell.Management\Get-Process @PSBoundParameters) }
    foreach ($p in $machine.Processes) {
        # A process keeps the name of the program it started from.
        $processName = [IO.Path]::GetFileNameWithoutExtension($p.Command)
        if ($null -eq $Name -or $Name -contains $processName) {
            [pscustomobject]@{ Name = $processName; ProcessName = $processName; Id = $p.Id; Path = $p.Path }
        }
    }
}

function Stop-Process {
    [CmdletBinding()]
    param([Parameter(ValueFromPipelineByPropertyName = $true)][int[]] $Id, [switch] $Force)
    process {
        $machine = Get-FakeMachineOrNull
        if ($null -eq $machine) { throw 'the test fakes Stop-Process only in a step' }
        foreach ($i in @($Id)) {
            $p = $machine.Processes | Where-Object { $_.Id -eq $i } | Select-Object -First 1
            if ($null -eq $p) { continue }
            Add-FakeAction "Stop-Process $(Split-Path -Leaf $p.Command)"
            if ($p.Owner -eq 'pod') {
                # The kubelet starts the container again: its command runs
                # the file at the original path, a new one if it was replaced.
                $p.Path = $p.Command
            } else {
                [void] $machine.Processes.Remove($p)
            }
        }
    }
}
