# StepTest.ps1: what the Pester tests of the step scripts share.
#
# Each <step>.Tests.ps1 dot-sources this file twice: in BeforeDiscovery, for
# the cases of <step>.json, and in BeforeAll, after lib.ps1. A case runs the
# real step script on a fake machine:
#
#   - the machine's C:\ is a fresh directory (C:\wcpester\<id>\c): every
#     C:\ path of the script, its parameters and the case is moved there,
#     and its files are real files there;
#   - what Windows, the network and programs do is faked by functions of
#     the same names, defined below in the test's scope (so that they take
#     the place of cmdlets and of lib.ps1's Invoke-Native, Add-MachinePath,
#     Update-SessionPath, Wait-Condition and Test-Administrator for the
#     script): features, services (the service control manager's copy of
#     their configuration apart from the registry's, and the command line
#     each running process was started with), the firewall, Defender, HNS,
#     downloads, archives, the registry, the machine's PATH, and the
#     programs the scripts run (containerd, kubeadm, sc.exe, tar.exe), each
#     recording what it changes;
#   - the step runs with the PATH a WinRM shell inherits (the runner's, and
#     the case's winrm-path: facts), not the fake machine's: kubeadm join's
#     preflight finds kubelet only through a PATH the step refreshed;
#   - the step's body runs as the harness renders it (its parameters
#     assigned first, lib.ps1's helpers in force), from a file, so that its
#     exit and its errors behave as under powershell.exe.
#
# Then the case is checked: its status line (changed, restartNeeded, the
# fields it names), its error, what it prints, the facts it sets, and that
# nothing else changed; a case that changes nothing must leave every file
# and every faked table as it was and call nothing that acts.
#
# Written for Windows PowerShell 5.1 and PowerShell 7.

# ---------------------------------------------------------------- the data

# Get-StepData reads <step>.json beside this file.
function Get-StepData {
    param([Parameter(Mandatory = $true)][string] $Step)
    $path = Join-Path $PSScriptRoot ($Step + '.json')
    ConvertFrom-Json -InputObject (Get-Content -Raw -Encoding UTF8 -LiteralPath $path)
}

# Get-Field returns a property of a JSON object, or $Default when it has
# none; an array stays an array.
function Get-Field {
    param($Object, [Parameter(Mandatory = $true)][string] $Name, $Default = $null)
    if ($null -eq $Object -or $null -eq $Object.PSObject.Properties[$Name]) { return $Default }
    $value = $Object.$Name
    if ($value -is [array]) { return , $value }
    $value
}

# ConvertTo-OrderedMap turns a JSON object (or nothing) into an ordered
# hashtable of its properties.
function ConvertTo-OrderedMap {
    param($Object)
    $map = [ordered]@{}
    if ($null -ne $Object) {
        foreach ($p in $Object.PSObject.Properties) { $map[$p.Name] = $p.Value }
    }
    $map
}

# Get-StepCases lists a step's cases for It -ForEach: Name and Index, and,
# with -Cut, only the cases that describe a run cut short.
function Get-StepCases {
    param([Parameter(Mandatory = $true)][string] $Step, [switch] $Cut)
    $data = Get-StepData $Step
    $i = 0
    foreach ($c in $data.cases) {
        if (-not $Cut -or $null -ne (Get-Field $c 'cut')) {
            @{ Name = $c.name; Index = $i }
        }
        $i++
    }
}

# Get-CaseParams returns the parameters a case runs with: the step's
# examples, then the case's own.
function Get-CaseParams {
    param($Data, $Case)
    $params = ConvertTo-OrderedMap $Data.params
    $own = ConvertTo-OrderedMap (Get-Field $Case 'params')
    foreach ($k in $own.Keys) { $params[$k] = [string]$own[$k] }
    $params
}

# ------------------------------------------------------- the fake machine

# New-FakeMachine makes an empty machine: its C:\ is a new directory.
function New-FakeMachine {
    $base = Join-Path $env:SystemDrive ('wcpester\' + [guid]::NewGuid().ToString('N').Substring(0, 12))
    $root = Join-Path $base 'c'
    New-Item -ItemType Directory -Force -Path $root | Out-Null
    # A path already moved (anything under $base) is not moved again.
    $tail = ''
    if ($base.StartsWith('C:\')) { $tail = $base.Substring(3) + '\' }
    @{
        Base        = $base
        Root        = $root
        PathPattern = New-Object regex ('C:\\(?!' + [regex]::Escape($tail) + ')')
        Features    = @{}
        Services    = @{}
        Firewall    = @{}
        Defender    = @{ Available = $false; Paths = (New-Object 'Collections.Generic.List[string]'); Processes = (New-Object 'Collections.Generic.List[string]') }
        Hns         = @{ Module = $false; Networks = (New-Object 'Collections.Generic.List[string]'); Endpoints = (New-Object 'Collections.Generic.List[string]') }
        MachinePath = (New-Object 'Collections.Generic.List[string]')
        WinRMPath   = (New-Object 'Collections.Generic.List[string]')
        JoinPath    = $null
        Registry    = @{}
        Routes      = @{}
        Images      = (New-Object 'Collections.Generic.List[string]')
        Env         = @{}
        Web         = @{}
        World       = @{}
        Actions     = (New-Object 'Collections.Generic.List[string]')
        Processes   = (New-Object 'Collections.Generic.List[object]')
        CutAt       = ''
    }
}

function Remove-FakeMachine {
    param($Machine)
    if (Test-Path -LiteralPath $Machine.Base) { Remove-Item -LiteralPath $Machine.Base -Recurse -Force }
}

# ConvertTo-MachinePath moves every C:\ path in a text to the machine's
# C:\ (a text moved already stays as it is).
function ConvertTo-MachinePath {
    param($Machine, [AllowEmptyString()][string] $Text)
    if ([string]::IsNullOrEmpty($Text)) { return $Text }
    $Machine.PathPattern.Replace($Text, $Machine.Root.Replace('$', '$$') + '\')
}

function Add-FakeAction {
    param([string] $What)
    $WcFake.Actions.Add($What)
}

function Split-List {
    param([AllowEmptyString()][string] $Value)
    @($Value -split '\|' | Where-Object { $_ -ne '' })
}

# Placeholders for "*" (any present value) by fact.
function Get-Placeholder {
    param([string] $Key)
    switch -Wildcard ($Key) {
        'service:*' { return 'Automatic/Running' }
        'hns:networks' { return 'flannel.4096|nat' }
        'hns:endpoints' { return 'kube-proxy-source-vip' }
        'env:build' { return '10.0.20348.2340' }
        'env:productName' { return 'Windows Server 2022 Datacenter' }
        'env:installationType' { return 'Server Core' }
        'env:bootTime' { return '2025-01-01T00:00:00.0000000Z' }
        'env:admin' { return 'true' }
        'env:freeBytes' { return '107374182400' }
        'env:sizeBytes' { return '136365211648' }
        'env:utcNow' { return '2025-01-01T02:30:00.0000000Z' }
        'hns:module' { return 'yes' }
        'defender:available' { return 'yes' }
        'process:*' { return 'pod' }
        'route:*' { return 'Ethernet 2 via 10.1.0.1 persistent' }
        'events:*' { return '2025-01-01T00:00:00.0000000Z 7034 The kubelet service terminated unexpectedly. It has done this 1 time(s).' }
    }
    'present'
}

function Get-StateFile {
    param($Machine, [string] $Name)
    Join-Path $Machine.Root ('winconform\state\' + $Name + '.json')
}

# Set-FakeFact gives the machine a fact (key and value expanded, their
# paths moved).
function Set-FakeFact {
    param($Machine, [string] $Key, [AllowEmptyString()][string] $Value)
    if ($Value -eq '*') { $Value = Get-Placeholder $Key }
    $i = $Key.IndexOf(':')
    $kind = $Key.Substring(0, $i)
    $name = $Key.Substring($i + 1)
    switch ($kind) {
        'feature' {
            if ($Value -eq '') { $Machine.Features.Remove($name) } else { $Machine.Features[$name] = $Value }
        }
        'file' {
            if ($Value -eq '') {
                if (Test-Path -LiteralPath $name) { Remove-Item -LiteralPath $name -Force }
            } else {
                New-Item -ItemType Directory -Force -Path (Split-Path -Parent $name) | Out-Null
                [IO.File]::WriteAllText($name, $Value)
            }
        }
        'dir' {
            if ($Value -eq '') {
                if (Test-Path -LiteralPath $name) { Remove-Item -LiteralPath $name -Recurse -Force }
            } else {
                New-Item -ItemType Directory -Force -Path $name | Out-Null
            }
        }
        'link' {
            if ($Value -eq '') {
                $link = New-Object IO.DirectoryInfo($name)
                if ($link.Exists) { $link.Delete() }
            } else {
                New-Item -ItemType Directory -Force -Path $Value, (Split-Path -Parent $name) | Out-Null
                New-Item -ItemType SymbolicLink -Path $name -Value $Value | Out-Null
            }
        }
        'path' {
            [void] $Machine.MachinePath.Remove($name)
            if ($Value -ne '') { $Machine.MachinePath.Add($name) }
        }
        'winrm-path' {
            [void] $Machine.WinRMPath.Remove($name)
            if ($Value -ne '') { $Machine.WinRMPath.Add($name) }
        }
        'service' {
            if ($Value -eq '') { $Machine.Services.Remove($name); return }
            $start, $status = $Value -split '/'
            if (-not $Machine.Services.ContainsKey($name)) { $Machine.Services[$name] = @{ PathName = ''; ImagePath = $null; Process = $null; DependsOn = @() } }
            $Machine.Services[$name].StartType = $start
            $Machine.Services[$name].Status = $status
        }
        'service-command' { if ($Value -ne '') { $Machine.Services[$name].PathName = $Value } }
        'service-imagepath' { if ($Value -ne '') { $Machine.Services[$name].ImagePath = $Value } }
        'service-process' { if ($Value -ne '') { $Machine.Services[$name].Process = $Value } }
        'service-deps' { if ($Value -ne '') { $Machine.Services[$name].DependsOn = Split-List $Value } }
        'state' {
            $stateName, $stateKey = $name -split '\.', 2
            $file = Get-StateFile $Machine $stateName
            $state = [ordered]@{}
            if (Test-Path -LiteralPath $file) {
                $state = ConvertTo-OrderedMap (ConvertFrom-Json -InputObject (Get-Content -Raw -LiteralPath $file))
            }
            if ($Value -eq '') { $state.Remove($stateKey) } else { $state[$stateKey] = $Value }
            New-Item -ItemType Directory -Force -Path (Split-Path -Parent $file) | Out-Null
            Set-Content -LiteralPath $file -Encoding UTF8 -Value (ConvertTo-Json -InputObject $state -Compress)
        }
        'firewall' {
            if ($Value -eq '') { $Machine.Firewall.Remove($name); return }
            $port, $enabled = $Value -split '/'
            $Machine.Firewall[$name] = @{ Port = $port; Enabled = $enabled }
        }
        'defender' {
            switch ($name) {
                'available' { $Machine.Defender.Available = ($Value -eq 'yes') }
                'paths' { $Machine.Defender.Paths.Clear(); foreach ($p in (Split-List $Value)) { $Machine.Defender.Paths.Add($p) } }
                'processes' { $Machine.Defender.Processes.Clear(); foreach ($p in (Split-List $Value)) { $Machine.Defender.Processes.Add($p) } }
            }
        }
        'hns' {
            switch ($name) {
                'module' { $Machine.Hns.Module = ($Value -eq 'yes') }
                'networks' { $Machine.Hns.Networks.Clear(); foreach ($n in (Split-List $Value)) { $Machine.Hns.Networks.Add($n) } }
                'endpoints' { $Machine.Hns.Endpoints.Clear(); foreach ($n in (Split-List $Value)) { $Machine.Hns.Endpoints.Add($n) } }
            }
        }
        'env' {
            # The host name and the account come from .NET itself, which no
            # function can stand in for: they are the runner's.
            switch ($name) {
                'hostname' { $Value = [Environment]::MachineName }
                'user' { $Value = [Security.Principal.WindowsIdentity]::GetCurrent().Name }
            }
            $Machine.Env[$name] = $Value
        }
        'web' { $Machine.Web[$name] = $Value }
        'process' { Set-FakeProcessFact $Machine $name $Value }
        'registry' { if ($Value -eq '') { $Machine.Registry.Remove($name) } else { $Machine.Registry[$name] = $Value } }
        'route' { if ($Value -eq '') { $Machine.Routes.Remove($name) } else { $Machine.Routes[$name] = $Value } }
        'image' { [void] $Machine.Images.Remove($name); if ($Value -ne '') { $Machine.Images.Add($name) } }
        default { $Machine.World[$Key] = $Value }
    }
}

# Get-FakeFact reads a fact of the machine ("" when absent).
function Get-FakeFact {
    param($Machine, [string] $Key)
    $i = $Key.IndexOf(':')
    $kind = $Key.Substring(0, $i)
    $name = $Key.Substring($i + 1)
    switch ($kind) {
        'feature' { return [string]$Machine.Features[$name] }
        'file' {
            if (Test-Path -LiteralPath $name -PathType Leaf) { return [IO.File]::ReadAllText($name) }
            return ''
        }
        'dir' { if (Test-Path -LiteralPath $name -PathType Container) { return 'present' }; return '' }
        'link' {
            $link = New-Object IO.DirectoryInfo($name)
            if (-not $link.Exists -or ($link.Attributes -band [IO.FileAttributes]::ReparsePoint) -eq 0) { return '' }
            return [string]@((Get-Item -LiteralPath $name -Force).Target)[0]
        }
        'path' { if ($Machine.MachinePath -contains $name) { return 'present' }; return '' }
        'winrm-path' { if ($Machine.WinRMPath -contains $name) { return 'present' }; return '' }
        'service' {
            $s = $Machine.Services[$name]
            if ($null -eq $s) { return '' }
            return $s.StartType + '/' + $s.Status
        }
        'service-command' { $s = $Machine.Services[$name]; if ($null -eq $s) { return '' }; return [string]$s.PathName }
        # The registry's command line is the manager's unless something
        # wrote the registry alone; a running process's is the one it was
        # started with (the manager's, for a machine staged as after a boot).
        'service-imagepath' {
            $s = $Machine.Services[$name]
            if ($null -eq $s) { return '' }
            if ($null -ne $s.ImagePath) { return [string]$s.ImagePath }
            return [string]$s.PathName
        }
        'service-process' {
            $s = $Machine.Services[$name]
            if ($null -eq $s) { return '' }
            if ($null -ne $s.Process) { return [string]$s.Process }
            if ($s.Status -eq 'Running') { return [string]$s.PathName }
            return ''
        }
        'service-deps' { $s = $Machine.Services[$name]; if ($null -eq $s) { return '' }; return (@($s.DependsOn) -join '|') }
        'state' {
            $stateName, $stateKey = $name -split '\.', 2
            $file = Get-StateFile $Machine $stateName
            if (-not (Test-Path -LiteralPath $file)) { return '' }
            $state = ConvertFrom-Json -InputObject (Get-Content -Raw -LiteralPath $file)
            return [string](Get-Field $state $stateKey '')
        }
        'firewall' {
            $r = $Machine.Firewall[$name]
            if ($null -eq $r) { return '' }
            return [string]$r.Port + '/' + [string]$r.Enabled
        }
        'defender' {
            switch ($name) {
                'available' { if ($Machine.Defender.Available) { return 'yes' }; return '' }
                'paths' { return ($Machine.Defender.Paths -join '|') }
                'processes' { return ($Machine.Defender.Processes -join '|') }
            }
        }
        'hns' {
            switch ($name) {
                'module' { if ($Machine.Hns.Module) { return 'yes' }; return '' }
                'networks' { return ($Machine.Hns.Networks -join '|') }
                'endpoints' { return ($Machine.Hns.Endpoints -join '|') }
            }
        }
        'env' { return [string]$Machine.Env[$name] }
        'process' { return (Get-FakeProcessFact $Machine $name) }
        'registry' { return [string]$Machine.Registry[$name] }
        'route' { return [string]$Machine.Routes[$name] }
        'image' { if ($Machine.Images -contains $name) { return 'present' }; return '' }
        { $_ -in 'output', 'events' } { return [string]$Machine.World[$Key] }
    }
    throw "no fact $Key"
}

# Get-TableFacts lists the facts the faked tables hold (everything but
# files), to see that nothing a case does not name has changed.
function Get-TableFacts {
    param($Machine)
    $facts = @{}
    foreach ($k in $Machine.Features.Keys) { $facts['feature:' + $k] = Get-FakeFact $Machine ('feature:' + $k) }
    foreach ($k in $Machine.Services.Keys) {
        foreach ($kind in 'service:', 'service-command:', 'service-imagepath:', 'service-process:', 'service-deps:') { $facts[$kind + $k] = Get-FakeFact $Machine ($kind + $k) }
    }
    foreach ($k in $Machine.Firewall.Keys) { $facts['firewall:' + $k] = Get-FakeFact $Machine ('firewall:' + $k) }
    foreach ($k in 'defender:paths', 'defender:processes', 'hns:networks', 'hns:endpoints') { $facts[$k] = Get-FakeFact $Machine $k }
    foreach ($p in $Machine.MachinePath) { $facts['path:' + $p] = 'present' }
    foreach ($p in $Machine.Processes) { $facts['process:' + $p.Path] = [string]$p.Owner }
    foreach ($k in $Machine.Registry.Keys) { $facts['registry:' + $k] = [string]$Machine.Registry[$k] }
    foreach ($k in $Machine.Routes.Keys) { $facts['route:' + $k] = [string]$Machine.Routes[$k] }
    foreach ($i in $Machine.Images) { $facts['image:' + $i] = 'present' }
    $facts
}

# Get-FileSnapshot lists every file (with its content) and directory of the
# machine but its scratch directory, C:\winconform\work.
function Get-FileSnapshot {
    param($Machine)
    $work = Join-Path $Machine.Root 'winconform\work'
    $snap = @{}
    foreach ($item in @(Get-ChildItem -LiteralPath $Machine.Root -Recurse -Force)) {
        if ($item.FullName -eq $work -or $item.FullName.StartsWith($work + '\')) { continue }
        if ($item.PSIsContainer) { $snap[$item.FullName] = '<dir>' } else { $snap[$item.FullName] = [IO.File]::ReadAllText($item.FullName) }
    }
    $snap
}

# Expand-FakeArchive unpacks a fake archive: a file whose text lists its
# entries as name=content, separated by |.
function Expand-FakeArchive {
    param([string] $Archive, [string] $Destination)
    foreach ($entry in (Split-List ([IO.File]::ReadAllText($Archive)))) {
        $entryName, $content = $entry -split '=', 2
        $path = Join-Path $Destination ($entryName -replace '/', '\')
        New-Item -ItemType Directory -Force -Path (Split-Path -Parent $path) | Out-Null
        [IO.File]::WriteAllText($path, $content)
    }
}

# ------------------------------------------------------------ templates

# Expand-Template replaces a data string's templates: {Param}, {Param|dir},
# {Param:int}, {@fact}; the machine's paths are moved afterwards.
function Expand-Template {
    param([AllowEmptyString()][string] $Text, $Params, $Machine)
    $pattern = New-Object regex '\{(@[^{}]+|[A-Za-z][A-Za-z0-9]*(?:\|dir|:int)?)\}'
    $out = New-Object Text.StringBuilder
    $at = 0
    foreach ($m in $pattern.Matches($Text)) {
        [void] $out.Append($Text.Substring($at, $m.Index - $at))
        $ref = $m.Groups[1].Value
        if ($ref.StartsWith('@')) {
            $value = Get-FakeFact $Machine (ConvertTo-MachinePath $Machine $ref.Substring(1))
        } else {
            $name = ($ref -split '[|:]')[0]
            if (-not $Params.Contains($name)) { throw "${Text}: no parameter $name" }
            $value = [string]$Params[$name]
            if ($ref.EndsWith('|dir')) { $value = $value.Substring(0, $value.LastIndexOf('\')) }
        }
        [void] $out.Append($value)
        $at = $m.Index + $m.Length
    }
    [void] $out.Append($Text.Substring($at))
    ConvertTo-MachinePath $Machine $out.ToString()
}

# Expand-Facts expands the keys and values of a case's facts.
function Expand-Facts {
    param($Facts, $Params, $Machine)
    $out = [ordered]@{}
    $map = ConvertTo-OrderedMap $Facts
    # Services first: their command lines and dependencies need them.
    $keys = @($map.Keys | Sort-Object { if ($_ -like 'service:*') { 0 } else { 1 } })
    foreach ($k in $keys) {
        $out[(Expand-Template $k $Params $Machine)] = Expand-Template ([string]$map[$k]) $Params $Machine
    }
    $out
}

# Expand-StatusValue expands a status field's value: a string, or a list of
# them; {Param:int} alone is a number.
function Expand-StatusValue {
    param($Value, $Params, $Machine)
    if ($Value -is [string]) {
        if ($Value -match '^\{[A-Za-z][A-Za-z0-9]*:int\}$') { return [int](Expand-Template $Value $Params $Machine) }
        return (Expand-Template $Value $Params $Machine)
    }
    if ($Value -is [array]) {
        $list = @(foreach ($v in $Value) { Expand-StatusValue $v $Params $Machine })
        return , $list
    }
    $Value
}

# ConvertTo-Literal writes a string as a single-quoted PowerShell literal.
function ConvertTo-Literal {
    param([AllowEmptyString()][string] $Text)
    "'" + $Text.Replace("'", "''") + "'"
}

# ------------------------------------------------------------ the fakes

function Get-WindowsFeature {
    [CmdletBinding()]
    param([string] $Name)
    $state = $WcFake.Features[$Name]
    if (-not $state) { return }
    [pscustomobject]@{ Name = $Name; InstallState = $state }
}

function Install-WindowsFeature {
    [CmdletBinding()]
    param([string] $Name)
    Add-FakeAction "Install-WindowsFeature $Name"
    if ($WcFake.World['feature-install:' + $Name] -eq 'fails') {
        return [pscustomobject]@{ Success = $false; RestartNeeded = 'No'; ExitCode = 'Failed' }
    }
    $WcFake.Features[$Name] = 'InstallPending'
    [pscustomobject]@{ Success = $true; RestartNeeded = 'Yes'; ExitCode = 'SuccessRestartRequired' }
}

function Restart-Computer {
    [CmdletBinding()]
    param([switch] $Force)
    Add-FakeAction 'Restart-Computer'
}

function Get-Service {
    [CmdletBinding()]
    param([Parameter(Position = 0)][string] $Name)
    $s = $WcFake.Services[$Name]
    if ($null -eq $s) { return }
    [pscustomobject]@{ Name = $Name; Status = $s.Status; StartType = $s.StartType }
}

function New-Service {
    [CmdletBinding()]
    param([string] $Name, [string] $DisplayName, [string] $BinaryPathName, [string] $StartupType, [string[]] $DependsOn)
    Add-FakeAction "New-Service $Name"
    $WcFake.Services[$Name] = @{ StartType = $StartupType; Status = 'Stopped'; PathName = $BinaryPathName; ImagePath = $BinaryPathName; Process = ''; DependsOn = @($DependsOn) }
    [pscustomobject]@{ Name = $Name }
}

function Set-Service {
    [CmdletBinding()]
    param([string] $Name, [string] $StartupType)
    Add-FakeAction "Set-Service $Name $StartupType"
    $WcFake.Services[$Name].StartType = $StartupType
}

# A start runs the service control manager's command line; a running
# service keeps its process.
function Start-FakeService {
    param([string] $Name)
    $s = $WcFake.Services[$Name]
    if ($s.Status -eq 'Running') { return }
    $s.Status = 'Running'
    $s.Process = $s.PathName
}

function Start-Service {
    [CmdletBinding()]
    param([string] $Name)
    Add-FakeAction "Start-Service $Name"
    $wasRunning = $WcFake.Services[$Name].Status -eq 'Running'
    Start-FakeService $Name
    if (-not $wasRunning) { Restart-FakeServiceProcess $Name }
}

function Stop-Service {
    [CmdletBinding()]
    param([string] $Name, [switch] $Force)
    Add-FakeAction "Stop-Service $Name"
    $WcFake.Services[$Name].Status = 'Stopped'
    $WcFake.Services[$Name].Process = ''
}

function Restart-Service {
    [CmdletBinding()]
    param([string] $Name, [switch] $Force)
    Add-FakeAction "Restart-Service $Name"
    $WcFake.Services[$Name].Status = 'Stopped'
    Start-FakeService $Name
    Restart-FakeServiceProcess $Name
}

function Get-CimInstance {
    [CmdletBinding()]
    param([string] $ClassName, [string] $Filter)
    switch ($ClassName) {
        'Win32_OperatingSystem' {
            $boot = [datetime]::Parse($WcFake.Env['bootTime'], [Globalization.CultureInfo]::InvariantCulture, [Globalization.DateTimeStyles]::RoundtripKind)
            $os = [ordered]@{ LastBootUpTime = $boot }
            # LocalDateTime is the machine's clock (env:utcNow), as CIM gives it: in local time.
            if ($WcFake.Env['utcNow']) {
                $os.LocalDateTime = ([datetime]::Parse($WcFake.Env['utcNow'], [Globalization.CultureInfo]::InvariantCulture, [Globalization.DateTimeStyles]::RoundtripKind)).ToLocalTime()
            }
            return [pscustomobject]$os
        }
        'Win32_Service' {
            $name = [regex]::Match($Filter, "Name='([^']+)'").Groups[1].Value
            $s = $WcFake.Services[$name]
            if ($null -eq $s) { return }
            # The service control manager's copy, not the registry's.
            return [pscustomobject]@{ Name = $name; PathName = $s.PathName; State = $s.Status }
        }
        'Win32_LogicalDisk' {
            return [pscustomobject]@{ DeviceID = $env:SystemDrive; FreeSpace = [uint64]$WcFake.Env['freeBytes']; Size = [uint64]$WcFake.Env['sizeBytes'] }
        }
    }
    throw "the test fakes no Get-CimInstance $ClassName"
}

function Get-ItemProperty {
    [CmdletBinding()]
    param([Parameter(Position = 0)][string] $Path, [string] $LiteralPath, [string] $Name)
    if ($LiteralPath -eq 'HKLM:\SOFTWARE\Microsoft\Windows NT\CurrentVersion') {
        $parts = $WcFake.Env['build'] -split '\.'
        $cv = [ordered]@{
            CurrentMajorVersionNumber = [int]$parts[0]
            CurrentMinorVersionNumber = [int]$parts[1]
            CurrentBuildNumber        = $parts[2]
            ProductName               = [string]$WcFake.Env['productName']
        }
        if ($parts.Count -gt 3) { $cv.UBR = [int]$parts[3] }
        if ($WcFake.Env['installationType']) { $cv.InstallationType = $WcFake.Env['installationType'] }
        return [pscustomobject]$cv
    }
    if ($LiteralPath -eq 'HKLM:\SYSTEM\CurrentControlSet\Services\Tcpip\Parameters\PersistentRoutes') {
        # route -p's routes, as Windows names them there: NET,MASK,GATEWAY,METRIC.
        $values = [ordered]@{}
        foreach ($k in $WcFake.Routes.Keys) {
            $r = ConvertFrom-FakeRoute $k ([string]$WcFake.Routes[$k])
            if (-not $r.Persistent) { continue }
            $net, $bits = $k -split '/', 2
            $m = [uint64]0
            if ([int]$bits -gt 0) { $m = [uint64]([math]::Pow(2, 32) - [math]::Pow(2, 32 - [int]$bits)) }
            $b = [BitConverter]::GetBytes([uint32]$m)
            [array]::Reverse($b)
            $metric = 1
            if ([string]$WcFake.Routes[$k] -match ' metric ([0-9]+)') { $metric = [int]$Matches[1] }
            $values["$net,$(([Net.IPAddress]$b).ToString()),$($r.NextHop),$metric"] = ''
        }
        if ($Name -and -not $values.Contains($Name)) { return }
        if ($values.Count -eq 0) { return }
        return [pscustomobject]$values
    }
    if ($LiteralPath -like 'HKLM:\SYSTEM\CurrentControlSet\Services\hns*') {
        # HNS's keys: the registry: facts under the key, DWORDs as numbers;
        # nothing for a value (or key) not there, as with -ErrorAction SilentlyContinue.
        $prefix = 'HKLM\' + $LiteralPath.Substring(6) + '\'
        $values = [ordered]@{}
        foreach ($k in $WcFake.Registry.Keys) {
            if ($k.StartsWith($prefix, [StringComparison]::OrdinalIgnoreCase) -and $k.Substring($prefix.Length) -notmatch '\\') {
                $values[$k.Substring($prefix.Length)] = [int]$WcFake.Registry[$k]
            }
        }
        if ($Name -and -not $values.Contains($Name)) { return }
        if ($values.Count -eq 0) { return }
        return [pscustomobject]$values
    }
    Microsoft.PowerShell.Management\Get-ItemProperty @PSBoundParameters
}

# Set-ItemProperty on a service's key writes the registry alone: the service
# control manager reads it at the next boot (MS-SCMR: its API changes "the
# SCM database"), so neither Win32_Service nor a start sees the change.
function Set-ItemProperty {
    [CmdletBinding()]
    param([string] $LiteralPath, [string] $Name, $Value, [string] $Type)
    if ($LiteralPath -notlike 'HKLM:\SYSTEM\CurrentControlSet\Services\*') { throw "the test fakes no Set-ItemProperty $LiteralPath" }
    $service = Split-Path -Leaf $LiteralPath
    Add-FakeAction "Set-ItemProperty $service $Name"
    if ($Name -eq 'ImagePath') { $WcFake.Services[$service].ImagePath = [string]$Value }
}

# Invoke-CimMethod answers Win32_Service.Change: the service control
# manager changes its copy and the registry; a running process keeps its
# command line.
function Invoke-CimMethod {
    [CmdletBinding()]
    param($InputObject, [string] $MethodName, [Collections.IDictionary] $Arguments)
    if ($MethodName -ne 'Change' -or $null -eq $InputObject -or $null -eq $WcFake.Services[$InputObject.Name]) { throw "the test fakes no Invoke-CimMethod $MethodName" }
    $s = $WcFake.Services[$InputObject.Name]
    Add-FakeAction "Win32_Service.Change $($InputObject.Name)"
    if ($null -eq $s.Process -and $s.Status -eq 'Running') { $s.Process = $s.PathName }
    if ($Arguments.Contains('PathName')) { $s.PathName = [string]$Arguments['PathName']; $s.ImagePath = $s.PathName }
    if ($Arguments.Contains('ServiceDependencies')) { $s.DependsOn = @($Arguments['ServiceDependencies']) }
    [pscustomobject]@{ ReturnValue = 0 }
}

function Get-NetFirewallRule {
    [CmdletBinding()]
    param([string] $Name)
    $r = $WcFake.Firewall[$Name]
    if ($null -eq $r) { return }
    [pscustomobject]@{ Name = $Name; Enabled = $r.Enabled }
}

function New-NetFirewallRule {
    [CmdletBinding()]
    param([string] $Name, [string] $DisplayName, [string] $Direction, [string] $Protocol, [string] $LocalPort, [string] $Action, [string] $Enabled)
    Add-FakeAction "New-NetFirewallRule $Name"
    $WcFake.Firewall[$Name] = @{ Port = $LocalPort; Enabled = $Enabled }
    [pscustomobject]@{ Name = $Name }
}

function Enable-NetFirewallRule {
    [CmdletBinding()]
    param([string] $Name)
    Add-FakeAction "Enable-NetFirewallRule $Name"
    $WcFake.Firewall[$Name].Enabled = 'True'
}

# Get-Command answers for the optional modules the scripts look for
# (Defender's, HNS's); anything else is the real Get-Command.
function Get-Command {
    [CmdletBinding()]
    param([Parameter(Position = 0)][string[]] $Name)
    if (@($Name).Count -eq 1) {
        $present = $null
        switch ($Name[0]) {
            'Get-MpPreference' { $present = $WcFake.Defender.Available }
            'Get-HnsNetwork' { $present = $WcFake.Hns.Module }
            'Get-HnsEndpoint' { $present = $WcFake.Hns.Module }
            'Get-HnsPolicyList' { $present = $WcFake.Hns.Module }
        }
        if ($null -ne $present) {
            if ($present) { return [pscustomobject]@{ Name = $Name[0] } }
            return
        }
    }
    Microsoft.PowerShell.Core\Get-Command @PSBoundParameters
}

# Assert-FakeDefenderRunning fails as Defender's cmdlets do while its
# service, WinDefend, is not running (a CimException, HRESULT 0x800106ba).
function Assert-FakeDefenderRunning {
    param([string] $Cmdlet)
    $s = $WcFake.Services['WinDefend']
    if ($null -eq $s -or $s.Status -ne 'Running') {
        throw "$Cmdlet : Operation failed with the following error: 0x800106ba."
    }
}

function Get-MpPreference {
    Assert-FakeDefenderRunning 'Get-MpPreference'
    [pscustomobject]@{ ExclusionPath = $WcFake.Defender.Paths.ToArray(); ExclusionProcess = $WcFake.Defender.Processes.ToArray() }
}

function Add-MpPreference {
    [CmdletBinding()]
    param([string[]] $ExclusionPath, [string[]] $ExclusionProcess)
    Assert-FakeDefenderRunning 'Add-MpPreference'
    Add-FakeAction 'Add-MpPreference'
    foreach ($p in @($ExclusionPath)) { if ($p) { $WcFake.Defender.Paths.Add($p) } }
    foreach ($p in @($ExclusionProcess)) { if ($p) { $WcFake.Defender.Processes.Add($p) } }
}

function Get-HnsNetwork {
    foreach ($n in @($WcFake.Hns.Networks)) { [pscustomobject]@{ Name = $n; Type = 'Overlay' } }
}

function Remove-HnsNetwork {
    [CmdletBinding()]
    param([Parameter(ValueFromPipeline = $true)] $InputObject)
    process {
        Add-FakeAction "Remove-HnsNetwork $($InputObject.Name)"
        [void] $WcFake.Hns.Networks.Remove($InputObject.Name)
    }
}

# Get-WinEvent answers from events:LOG/PROVIDER (oldest first, TIME ID
# MESSAGE a line), newest first as Windows does, the Ids asked for only.
function Get-WinEvent {
    [CmdletBinding()]
    param([hashtable] $FilterHashtable, [int] $MaxEvents = 0)
    $key = 'events:' + $FilterHashtable.LogName + '/' + $FilterHashtable.ProviderName
    $lines = @(Split-List (([string]$WcFake.World[$key]) -replace "`n", '|'))
    [array]::Reverse($lines)
    $n = 0
    foreach ($line in $lines) {
        $time, $id, $message = $line -split ' ', 3
        if ($FilterHashtable.ContainsKey('Id') -and @($FilterHashtable.Id) -notcontains [int]$id) { continue }
        if ($MaxEvents -gt 0 -and $n -ge $MaxEvents) { break }
        $n++
        [pscustomobject]@{
            TimeCreated = [datetime]::Parse($time, [Globalization.CultureInfo]::InvariantCulture, [Globalization.DateTimeStyles]::RoundtripKind)
            Id          = [int]$id
            Message     = $message
        }
    }
}

function Get-HnsEndpoint {
    foreach ($e in @($WcFake.Hns.Endpoints)) { [pscustomobject]@{ Name = $e } }
}

# ConvertFrom-FakeRoute reads a route: fact (ALIAS via NEXTHOP, with
# " metric N" when the route has a metric of its own, then " persistent"
# when the registry's PersistentRoutes keeps it (route -p: no interface),
# or " persistent bound" when the persistent store keeps it bound to its
# adapter (New-NetRoute's); a route removed from the active store only is
# kept as "persistent-only:" and the rest): its interface, next hop,
# metric (256, New-NetRoute's default, when none is written), and the
# stores that hold it.
function ConvertFrom-FakeRoute {
    param([string] $Prefix, [string] $Value)
    $active = -not $Value.StartsWith('persistent-only:')
    $v = $Value -replace '^persistent-only:', ''
    $bound = $v.EndsWith(' persistent bound')
    $v = $v -replace ' persistent bound$', ''
    $persistent = $v.EndsWith(' persistent')
    $v = $v -replace ' persistent$', ''
    $metric = 256
    if ($v -match ' metric ([0-9]+)$') { $metric = [int]$Matches[1]; $v = $v -replace ' metric [0-9]+$', '' }
    $alias, $hop = $v -split ' via ', 2
    [pscustomobject]@{ DestinationPrefix = $Prefix; InterfaceAlias = $alias; NextHop = $hop; RouteMetric = $metric; Active = $active; Persistent = $persistent; Bound = $bound }
}

# ConvertTo-FakeMaskBits is the prefix length of a dotted mask.
function ConvertTo-FakeMaskBits {
    param([string] $Mask)
    $bits = 0
    foreach ($octet in ($Mask -split '\.')) { $bits += [Convert]::ToString([int]$octet, 2).Replace('0', '').Length }
    $bits
}

# Get-NetRoute answers from the route: facts: the active routes, or with
# -PolicyStore PersistentStore those the persistent store keeps bound to
# their adapter (route -p's are in the registry: Get-ItemProperty);
# nothing when none is there, as with -ErrorAction SilentlyContinue.
function Get-NetRoute {
    [CmdletBinding()]
    param([string] $DestinationPrefix, [string] $PolicyStore = 'ActiveStore', [string] $AddressFamily)
    foreach ($k in @($WcFake.Routes.Keys)) {
        if ($DestinationPrefix -and $k -ne $DestinationPrefix) { continue }
        $r = ConvertFrom-FakeRoute $k ([string]$WcFake.Routes[$k])
        if ($PolicyStore -eq 'PersistentStore' -and -not $r.Bound) { continue }
        if ($PolicyStore -ne 'PersistentStore' -and -not $r.Active) { continue }
        [pscustomobject]@{ DestinationPrefix = $k; InterfaceAlias = $r.InterfaceAlias; NextHop = $r.NextHop; RouteMetric = $r.RouteMetric; InterfaceMetric = 0; Store = $PolicyStore }
    }
}

# Find-NetRoute answers, as the NetTCPIP module's does, with the source
# address it would use (an object without a next hop) and the route it
# would take: here the active route whose prefix holds the address, the
# longest such; nothing when none does.
function Find-NetRoute {
    [CmdletBinding()]
    param([string] $RemoteIPAddress)
    $address = [Net.IPAddress]::Parse($RemoteIPAddress).GetAddressBytes()
    [array]::Reverse($address)
    $a = [BitConverter]::ToUInt32($address, 0)
    $best = $null
    $bestBits = -1
    foreach ($k in @($WcFake.Routes.Keys)) {
        $r = ConvertFrom-FakeRoute $k ([string]$WcFake.Routes[$k])
        if (-not $r.Active) { continue }
        $net, $bits = $k -split '/', 2
        $n = [Net.IPAddress]::Parse($net).GetAddressBytes()
        [array]::Reverse($n)
        $mask = [uint32]0
        if ([int]$bits -gt 0) { $mask = [uint32]([math]::Pow(2, 32) - [math]::Pow(2, 32 - [int]$bits)) }
        if ((($a -band $mask) -eq ([BitConverter]::ToUInt32($n, 0) -band $mask)) -and [int]$bits -gt $bestBits) { $best = $r; $bestBits = [int]$bits }
    }
    if ($null -eq $best) { return }
    [pscustomobject]@{ IPAddress = '192.0.2.50'; InterfaceAlias = $best.InterfaceAlias }
    [pscustomobject]@{ DestinationPrefix = $best.DestinationPrefix; InterfaceAlias = $best.InterfaceAlias; NextHop = $best.NextHop; RouteMetric = $best.RouteMetric }
}

# New-NetRoute adds a route to both stores (its default, -PolicyStore
# left out), bound to its adapter; one to the prefix in the active store
# already fails, as the cmdlet's "Instance MSFT_NetRoute already exists".
function New-NetRoute {
    [CmdletBinding()]
    param([string] $DestinationPrefix, [string] $InterfaceAlias, [string] $NextHop, [int] $RouteMetric = 256)
    if ($WcFake.Routes.ContainsKey($DestinationPrefix) -and (ConvertFrom-FakeRoute $DestinationPrefix ([string]$WcFake.Routes[$DestinationPrefix])).Active) {
        throw 'Instance MSFT_NetRoute already exists'
    }
    Add-FakeAction "New-NetRoute $DestinationPrefix $InterfaceAlias $NextHop $RouteMetric"
    $WcFake.Routes[$DestinationPrefix] = "$InterfaceAlias via $NextHop metric $RouteMetric persistent bound"
    [pscustomobject]@{ DestinationPrefix = $DestinationPrefix }
}

# Remove-NetRoute removes the prefix's route from the store named (with
# -RouteMetric, only a route of that metric); a route removed from the
# active store but kept persistent comes back when Windows rebuilds the
# table. Nothing to remove is an error, which -ErrorAction
# SilentlyContinue silences.
function Remove-NetRoute {
    [CmdletBinding()]
    param([string] $DestinationPrefix, [string] $PolicyStore, [int] $RouteMetric = -1, [switch] $Confirm)
    if (-not $WcFake.Routes.ContainsKey($DestinationPrefix)) { Write-Error 'No matching MSFT_NetRoute objects found'; return }
    $r = ConvertFrom-FakeRoute $DestinationPrefix ([string]$WcFake.Routes[$DestinationPrefix])
    if ($RouteMetric -ge 0 -and $r.RouteMetric -ne $RouteMetric) { Write-Error 'No matching MSFT_NetRoute objects found'; return }
    $rest = [string]$WcFake.Routes[$DestinationPrefix] -replace '^persistent-only:', ''
    if ($PolicyStore -eq 'PersistentStore') {
        if (-not $r.Bound) { Write-Error 'No matching MSFT_NetRoute objects found'; return }
        Add-FakeAction "Remove-NetRoute $DestinationPrefix PersistentStore"
        if ($r.Active) { $WcFake.Routes[$DestinationPrefix] = $rest -replace ' persistent bound$', '' } else { $WcFake.Routes.Remove($DestinationPrefix) }
        return
    }
    if (-not $r.Active) { Write-Error 'No matching MSFT_NetRoute objects found'; return }
    Add-FakeAction "Remove-NetRoute $DestinationPrefix ActiveStore"
    if ($r.Persistent -or $r.Bound) { $WcFake.Routes[$DestinationPrefix] = 'persistent-only:' + $rest } else { $WcFake.Routes.Remove($DestinationPrefix) }
}

function Invoke-WebRequest {
    [CmdletBinding()]
    param([switch] $UseBasicParsing, [string] $Uri, [string] $OutFile)
    Add-FakeAction "download $Uri"
    if (-not $WcFake.Web.ContainsKey($Uri)) { throw 'The remote server returned an error: (404) Not Found.' }
    New-Item -ItemType Directory -Force -Path (Split-Path -Parent $OutFile) | Out-Null
    [IO.File]::WriteAllText($OutFile, $WcFake.Web[$Uri])
}

function Expand-Archive {
    [CmdletBinding()]
    param([string] $LiteralPath, [string] $DestinationPath, [switch] $Force)
    Expand-FakeArchive $LiteralPath $DestinationPath
}

# Get-FakeKubeadmLines returns what the fake kubeadm prints: for join or
# reset, when it works or fails.
function Get-FakeKubeadmLines {
    param([ValidateSet('join', 'reset')][string] $Command, [switch] $Fails, [switch] $NoKubelet)
    if ($NoKubelet) { return @('[preflight] Running pre-flight checks', '[preflight] Some fatal errors occurred:', "`t[ERROR KubeletVersion]: couldn't get kubelet version: cannot execute 'kubelet --version': exec: `"kubelet`": executable file not found in %PATH%", 'error execution phase preflight: preflight checks failed') }
    if ($Command -eq 'join' -and $Fails) { return @('[preflight] Running pre-flight checks', 'error execution phase kubelet-start: timed out waiting for the condition') }
    if ($Command -eq 'join') { return @('[preflight] Running pre-flight checks', '[kubelet-start] Starting the kubelet', 'This node has joined the cluster') }
    if ($Fails) { return @('[reset] Stopping the kubelet service', 'error: the kubelet service could not be stopped') }
    @('[reset] Stopping the kubelet service', '[reset] Deleting files: [C:\etc\kubernetes\kubelet.conf]')
}

# Invoke-Native stands in for lib.ps1's: it runs no program, but does what
# each program the scripts run would do to the machine.
function Invoke-Native {
    param([Parameter(Mandatory = $true)][string] $FilePath, [string[]] $ArgumentList = @())
    $leaf = Split-Path -Leaf $FilePath
    $first = ''
    if ($ArgumentList.Count -gt 0) { $first = $ArgumentList[0] }
    $program = ($leaf + ' ' + $first).Trim()
    if ($WcFake.CutAt -ne '' -and $program -eq $WcFake.CutAt) { throw "the connection dropped as $program started (the case's cut)" }
    if ($FilePath -notlike '*\System32\*' -and -not (Test-Path -LiteralPath $FilePath)) { throw "$FilePath does not exist" }
    $out = @()
    $code = 0
    $etc = ConvertTo-MachinePath $WcFake 'C:\etc\kubernetes'
    switch ($leaf) {
        'containerd.exe' {
            switch ($first) {
                '--register-service' {
                    Add-FakeAction 'containerd --register-service'
                    $WcFake.Services['containerd'] = @{ StartType = 'Automatic'; Status = 'Stopped'; PathName = ('"' + $FilePath + '" --run-service'); DependsOn = @() }
                }
                '--version' {
                    # containerd 2's module path ends in /v2.
                    $v = ([IO.File]::ReadAllText($FilePath)).TrimStart('v')
                    $module = 'github.com/containerd/containerd'
                    if (-not $v.StartsWith('1.')) { $module += '/v2' }
                    $out = @("containerd $module v$v 0123456")
                }
                default { throw "the test fakes no $program" }
            }
        }
        'sc.exe' {
            switch ($first) {
                'failure' { $out = @('[SC] ChangeServiceConfig2 SUCCESS') }
                'delete' {
                    Add-FakeAction "sc.exe delete $($ArgumentList[1])"
                    $WcFake.Services.Remove($ArgumentList[1])
                    $out = @('[SC] DeleteService SUCCESS')
                }
                default { throw "the test fakes no $program" }
            }
        }
        'tar.exe' { Expand-FakeArchive $ArgumentList[1] $ArgumentList[3] }
        'ctr.exe' {
            # ctr -n k8s.io images ls -q | import FILE | pull REF, on the
            # images table; an archive's content lists the images it holds.
            switch ($ArgumentList[3]) {
                'ls' { $out = @($WcFake.Images) }
                'import' {
                    Add-FakeAction 'ctr images import'
                    foreach ($ref in (Split-List ([IO.File]::ReadAllText($ArgumentList[4])))) {
                        if ($WcFake.Images -notcontains $ref) { $WcFake.Images.Add($ref) }
                    }
                    $out = @('unpacking done')
                }
                'pull' {
                    $ref = $ArgumentList[4]
                    Add-FakeAction "ctr images pull $ref"
                    if ($WcFake.World['pull:' + $ref] -eq 'fails') {
                        $out = @("ctr: failed to resolve reference `"$ref`": failed to do request: dial tcp: lookup registry: no such host")
                        $code = 1
                    } else {
                        $WcFake.Images.Add($ref)
                        $out = @("$($ref): resolved", 'done')
                    }
                }
                default { throw "the test fakes no ctr $($ArgumentList -join ' ')" }
            }
        }
        'ROUTE.EXE' {
            # route delete NET [mask MASK]: the route, active and in the
            # registry. route -p add NET mask MASK GATEWAY metric N: a
            # persistent route without an interface (the registry's
            # PersistentRoutes), on the adapter that reaches the gateway; its
            # metric is written unless it is 1 (the metadata route's).
            $bits = 32
            $maskAt = [array]::IndexOf($ArgumentList, 'mask')
            if ($maskAt -ge 0) { $bits = ConvertTo-FakeMaskBits $ArgumentList[$maskAt + 1] }
            if ($first -eq 'delete') {
                Add-FakeAction "route delete $($ArgumentList[1])/$bits"
                if (-not $WcFake.Routes.ContainsKey($ArgumentList[1] + "/$bits")) { $out = @('The route deletion failed: Element not found.'); $code = 1; break }
                $WcFake.Routes.Remove($ArgumentList[1] + "/$bits")
                $out = @(' OK!')
                break
            }
            if ($first -eq '-p' -and $ArgumentList[1] -eq 'add' -and $maskAt -eq 3) {
                $gateway = $ArgumentList[5]
                $metric = '1'
                $metricAt = [array]::IndexOf($ArgumentList, 'metric')
                if ($metricAt -ge 0) { $metric = $ArgumentList[$metricAt + 1] }
                $reach = @(Find-NetRoute -RemoteIPAddress $gateway | Where-Object { $null -ne $_.PSObject.Properties['NextHop'] }) | Select-Object -First 1
                if ($null -eq $reach) { $out = @('The route addition failed: the gateway is not reachable'); $code = 1; break }
                Add-FakeAction "route -p add $($ArgumentList[2])/$bits $gateway"
                $fact = "$($reach.InterfaceAlias) via $gateway"
                if ($metric -ne '1') { $fact += " metric $metric" }
                $WcFake.Routes[$ArgumentList[2] + "/$bits"] = $fact + ' persistent'
                $out = @(' OK!')
                break
            }
        }
        'reg.exe' {
            # reg add KEY /v NAME /t TYPE /d DATA /f: makes the key when it is not there.
            if ($first -ne 'add') { throw "the test fakes no $program" }
            $valueName = $ArgumentList[[array]::IndexOf($ArgumentList, '/v') + 1]
            $data = $ArgumentList[[array]::IndexOf($ArgumentList, '/d') + 1]
            Add-FakeAction "reg add $($ArgumentList[1]) $valueName"
            $WcFake.Registry[$ArgumentList[1] + '\' + $valueName] = $data
            $out = @('The operation completed successfully.')
        }
        { $_ -in 'ROUTE.EXE', 'ipconfig.exe' } { $out = @(([string]$WcFake.World['output:' + $program]) -split "`n") }
        'kubeadm.exe' {
            switch ($first) {
                'join' {
                    Add-FakeAction 'kubeadm join'
                    $configFile = $ArgumentList[[array]::IndexOf($ArgumentList, '--config') + 1]
                    # kubeadm's own code judges the files where the step runs
                    # kubeadm join (tools/upstreamjudge, which
                    # Invoke-WinconformPester.ps1 builds): what kubeadm refuses
                    # fails here too.
                    if (-not $env:WINCONFORM_UPSTREAM_JUDGE) { throw 'the fake kubeadm join needs tools/upstreamjudge: set WINCONFORM_UPSTREAM_JUDGE (Invoke-WinconformPester.ps1 builds it)' }
                    $judged = @(& $env:WINCONFORM_UPSTREAM_JUDGE 'kubeadm-join' $configFile 2>&1 | ForEach-Object { "$_" })
                    if ($LASTEXITCODE -ne 0) { throw "kubeadm join: $($judged -join '; ')" }
                    $config = ConvertFrom-Json -InputObject ($judged | Where-Object { $_.StartsWith('{') } | Select-Object -Last 1)
                    $WcFake.JoinPath = $env:Path
                    if ($null -eq (Find-FakeProgram 'kubelet.exe')) {
                        $out = Get-FakeKubeadmLines -Command join -NoKubelet
                        $code = 1
                    } elseif ($WcFake.World['kubeadm:join'] -eq 'fails') {
                        $out = Get-FakeKubeadmLines -Command join -Fails
                        $code = 1
                    } else {
                        New-Item -ItemType Directory -Force -Path (Join-Path $etc 'pki') | Out-Null
                        [IO.File]::WriteAllText((Join-Path $etc 'kubelet.conf'), 'written by kubeadm join')
                        [IO.File]::WriteAllText((Join-Path $etc 'pki\ca.crt'), 'the cluster CA')
                        Write-FakeKubeadmFlags @($config.KubeadmFlags)
                        Start-FakeService 'kubelet'
                        $out = Get-FakeKubeadmLines -Command join
                    }
                }
                'reset' {
                    Add-FakeAction 'kubeadm reset'
                    if ($WcFake.World['kubeadm:reset'] -eq 'fails') {
                        $out = Get-FakeKubeadmLines -Command reset -Fails
                        $code = 1
                    } else {
                        # kubeadm reset stops the kubelet, deletes kubeadm's
                        # files and the contents of the kubelet's directory
                        # (Go's os.RemoveAll removes a link as a link).
                        if ($null -ne $WcFake.Services['kubelet']) { $WcFake.Services['kubelet'].Status = 'Stopped'; $WcFake.Services['kubelet'].Process = '' }
                        foreach ($f in 'kubelet.conf', 'bootstrap-kubelet.conf', 'pki\ca.crt') {
                            $p = Join-Path $etc $f
                            if (Test-Path -LiteralPath $p) { Remove-Item -LiteralPath $p -Force }
                        }
                        $kubeletDir = ConvertTo-MachinePath $WcFake 'C:\var\lib\kubelet'
                        if (Test-Path -LiteralPath $kubeletDir) { Get-ChildItem -LiteralPath $kubeletDir -Force | ForEach-Object { if ($_.PSIsContainer) { Remove-Tree -Path $_.FullName } else { Remove-Item -LiteralPath $_.FullName -Force } } }
                        $out = Get-FakeKubeadmLines -Command reset
                    }
                }
                default {
                    if ($ArgumentList -contains 'version') { $out = @('v' + ([IO.File]::ReadAllText($FilePath)).TrimStart('v')) } else { throw "the test fakes no $program" }
                }
            }
        }
        default {
            if ($ArgumentList -contains '--version') {
                $out = @($leaf + ' version v' + ([IO.File]::ReadAllText($FilePath)).TrimStart('v'))
            } else {
                throw "the test fakes no $program"
            }
        }
    }
    [pscustomobject]@{ Output = @($out); ExitCode = $code }
}

# Find-FakeProgram returns the directory on this session's PATH that holds
# $Name, as a program that runs it by name finds it (Go's exec.LookPath
# on Windows does not look in the current directory); $null for none.
function Find-FakeProgram {
    param([string] $Name)
    foreach ($dir in @($env:Path -split ';' | Where-Object { $_ -ne '' })) {
        if (Test-Path -LiteralPath (Join-Path $dir $Name) -PathType Leaf) { return $dir }
    }
    $null
}

# Write-FakeKubeadmFlags writes kubeadm-flags.env as kubeadm's join does
# (k8s.io/kubernetes v1.37.2 cmd/kubeadm/app/phases/kubelet/flags.go
# WriteKubeletArgsToFile), with the flags kubeadm's own code made of the
# join's files (tools/upstreamjudge).
function Write-FakeKubeadmFlags {
    param([string[]] $Flags)
    $dir = ConvertTo-MachinePath $WcFake 'C:\var\lib\kubelet'
    New-Item -ItemType Directory -Force -Path $dir | Out-Null
    [IO.File]::WriteAllText((Join-Path $dir 'kubeadm-flags.env'), 'KUBELET_KUBEADM_ARGS="' + ($Flags -join ' ') + '"' + "`n")
}

# Update-SessionPath stands in for lib.ps1's: the session takes the
# runner's machine PATH and the fake machine's.
function Update-SessionPath {
    $env:Path = @(@([Environment]::GetEnvironmentVariable('Path', 'Machine') -split ';') + @($WcFake.MachinePath) | Where-Object { $_ -ne '' }) -join ';'
}

function Add-MachinePath {
    param([Parameter(Mandatory = $true)][string] $Dir)
    if ($WcFake.MachinePath -contains $Dir) { return $false }
    Add-FakeAction "PATH += $Dir"
    $WcFake.MachinePath.Add($Dir)
    $true
}

function Wait-Condition {
    param([Parameter(Mandatory = $true)][scriptblock] $Test, [int] $Seconds = 60, [string] $What = 'the condition')
    if ($What -eq 'the containerd pipe') {
        $ok = ($null -ne $WcFake.Services['containerd'] -and $WcFake.Services['containerd'].Status -eq 'Running')
    } else {
        $ok = & $Test
    }
    if (-not $ok) { throw "timed out after ${Seconds}s waiting for $What" }
}

function Test-Administrator {
    $WcFake.Env['admin'] -eq 'true'
}

# Get-PendingReboot stands in for lib.ps1's (which reads the registry, and
# lib.Tests.ps1 runs for real): the reasons of env:pendingReboot.
function Get-PendingReboot {
    Split-List ([string]$WcFake.Env['pendingReboot'])
}

# Get-RoutableAddress stands in for lib.ps1's (which reads Get-NetIPAddress,
# and lib.Tests.ps1 runs for real): the addresses of env:ipv4.
function Get-RoutableAddress {
    Split-List ([string]$WcFake.Env['ipv4'])
}

# The running programs: Copy-Item, Remove-Item, Move-Item, Get-Process and
# Stop-Process as Windows treats a running program's file.
. (Join-Path $PSScriptRoot 'FakeProcesses.ps1')

# ------------------------------------------------------------ running

# Get-StepScriptPath is the path of a step's script.
function Get-StepScriptPath {
    param([string] $Step)
    Join-Path (Split-Path -Parent $PSScriptRoot) ($Step + '.ps1')
}

# Invoke-Step runs a step's body as the harness renders it, its parameters
# assigned first, on the machine $Machine (lib.ps1 and the fakes must be in
# force in the caller's scope). It returns everything the step printed, on
# any stream, its terminating error and its exit code.
function Invoke-Step {
    param([string] $Step, $Params, $Machine)
    $text = [IO.File]::ReadAllText((Get-StepScriptPath $Step))
    $body = ($text -split "`n", 3)[2]
    $lines = New-Object 'Collections.Generic.List[string]'
    $lines.Add('$StepName = ' + (ConvertTo-Literal $Step))
    foreach ($k in $Params.Keys) { $lines.Add('$' + $k + ' = ' + (ConvertTo-Literal ([string]$Params[$k]))) }
    $lines.Add('$WinconformDir = ' + (ConvertTo-Literal (ConvertTo-MachinePath $Machine 'C:\winconform')))
    $lines.Add('$StateDir = Join-Path $WinconformDir ''state''')
    $file = Join-Path $Machine.Base ($Step + '.ps1')
    $rendered = ($lines -join "`n") + "`n" + (ConvertTo-MachinePath $Machine $body)
    [IO.File]::WriteAllText($file, $rendered, (New-Object Text.UTF8Encoding($true)))

    # The fakes find the machine here, by PowerShell's dynamic scoping.
    $WcFake = $Machine
    $output = New-Object 'Collections.Generic.List[object]'
    $thrown = $null
    $global:LASTEXITCODE = 0
    try {
        & $file *>&1 | ForEach-Object { $output.Add($_) }
    } catch {
        $thrown = $_
    }
    $exitCode = $global:LASTEXITCODE
    # One string per line: a step may print several lines at once.
    $strings = @($output | ForEach-Object { ([string]$_) -split '\r?\n' })
    $all = @($strings)
    if ($null -ne $thrown) {
        $all += $thrown.Exception.Message
        $all += [string]$thrown.InvocationInfo.PositionMessage
    }
    [pscustomobject]@{ Output = $strings; Error = $thrown; ExitCode = $exitCode; All = $all }
}

# Get-StatusLine returns the step's status (its last line of output, as
# JSON) and the lines before it.
function Get-StatusLine {
    param($Run, [string] $Step)
    $lines = @($Run.Output | Where-Object { $_.Trim() -ne '' })
    if ($lines.Count -eq 0) { throw "step $Step printed nothing; its error: $($Run.Error)" }
    $last = $lines[$lines.Count - 1]
    try {
        $status = ConvertFrom-Json -InputObject $last
    } catch {
        throw "step ${Step}: its last line is not its JSON status: $last"
    }
    $before = @()
    if ($lines.Count -gt 1) { $before = $lines[0..($lines.Count - 2)] }
    [pscustomobject]@{ Status = $status; Before = $before }
}

# Assert-NoSecret fails, naming the step and the parameter, when a secret
# parameter's value is in anything the step printed or threw.
function Assert-NoSecret {
    param([string] $Step, $Data, $Params, $Run)
    foreach ($name in @(Get-Field $Data 'secrets' @())) {
        $secret = [string]$Params[$name]
        if ($secret -eq '') { continue }
        foreach ($text in $Run.All) {
            if ($null -ne $text -and $text.Contains($secret)) {
                throw "step $Step printed the value of its secret parameter $name (in: $text)"
            }
        }
    }
}

# Invoke-StepCase stages case $Index of $Step on a new machine, runs the
# step and checks that it does what the case says. With -Cut, the run is cut
# short when the step starts the program the case's cut names, and the
# machine must then hold what the cut says. $Data stands for <step>.json
# (the tests of this file give altered data, which must fail).
function Invoke-StepCase {
    param([Parameter(Mandatory = $true)][string] $Step, [Parameter(Mandatory = $true)][int] $Index, [switch] $Cut, $Data)
    $data = $Data
    if ($null -eq $data) { $data = Get-StepData $Step }
    $case = $data.cases[$Index]
    $machine = New-FakeMachine
    try {
        $raw = Get-CaseParams $data $case
        $params = [ordered]@{}
        foreach ($k in $raw.Keys) { $params[$k] = ConvertTo-MachinePath $machine ([string]$raw[$k]) }
        $given = Expand-Facts (Get-Field $case 'given') $raw $machine
        foreach ($k in $given.Keys) { Set-FakeFact $machine $k $given[$k] }
        $world = Expand-Facts (Get-Field $case 'world') $raw $machine
        foreach ($k in $world.Keys) { Set-FakeFact $machine $k $world[$k] }
        foreach ($k in 'env:bootTime', 'env:hostname', 'env:user') {
            if (-not $machine.Env.ContainsKey($k.Substring(4))) { Set-FakeFact $machine $k '*' }
        }
        $before = [ordered]@{}
        foreach ($k in $given.Keys) { $before[$k] = Get-FakeFact $machine $k }
        $tables = Get-TableFacts $machine
        $files = Get-FileSnapshot $machine
        $expandedSets = Expand-Facts (Get-Field $case 'sets') $raw $machine
        $expect = @{
            Error   = Expand-Template ([string](Get-Field $case 'error' '')) $raw $machine
            Says    = @(foreach ($l in @(Get-Field $case 'says' @())) { (Expand-Template $l $raw $machine) -split "`n" })
            Status  = [ordered]@{}
        }
        $status = ConvertTo-OrderedMap (Get-Field $case 'status')
        foreach ($k in $status.Keys) { $expect.Status[$k] = Expand-StatusValue $status[$k] $raw $machine }
        if ($Cut) {
            $cutData = Get-Field $case 'cut'
            $machine.CutAt = $cutData.at
            $expandedSets = Expand-Facts $cutData.sets $raw $machine
        }

        # The step runs with the PATH a WinRM shell inherits: the runner's,
        # and what the case says the WinRM service started with.
        $savedPath = $env:Path
        $inherited = @(@($savedPath -split ';') + @($machine.WinRMPath) | Where-Object { $_ -ne '' }) -join ';'
        try {
            $env:Path = $inherited
            $run = Invoke-Step -Step $Step -Params $params -Machine $machine
        } finally {
            $env:Path = $savedPath
        }
        Assert-NoSecret -Step $Step -Data $data -Params $params -Run $run
        if ($null -ne $machine.JoinPath) {
            if ([bool](Get-Field $case 'refreshesPath' $false)) {
                $seen = @($machine.JoinPath -split ';')
                foreach ($dir in $machine.MachinePath) { $seen | Should -Contain $dir -Because 'the case says the step refreshes its PATH from the machine''s before kubeadm join' }
            } else {
                $machine.JoinPath | Should -BeExactly $inherited -Because 'the case says kubeadm join runs with the PATH the WinRM shell inherited'
            }
        }

        if ($Cut -or $expect.Error -ne '') {
            if ($null -eq $run.Error) { throw "step $Step did not fail; it printed: $($run.Output -join ' | ')" }
            if (-not $Cut -and -not $run.Error.Exception.Message.Contains($expect.Error)) {
                throw "step $Step failed with '$($run.Error.Exception.Message)', not '$($expect.Error)'"
            }
        }
        if (-not $Cut -and $expect.Error -ne '') { return }
        if (-not $Cut) {
            if ($null -ne $run.Error) { throw "step $Step failed: $($run.Error.Exception.Message) $($run.Error.InvocationInfo.PositionMessage)" }
            $st = Get-StatusLine $run $Step
            $st.Status.step | Should -Be $Step
            $st.Status.changed | Should -Be ([bool](Get-Field $case 'changed' $false)) -Because 'the status says whether the step changed the machine'
            $restart = Get-Field $case 'restartNeeded'
            if ($null -ne $restart) { $st.Status.restartNeeded | Should -Be $restart -Because 'the status says whether the machine needs a reboot' }
            foreach ($k in $expect.Status.Keys) {
                $want = ConvertTo-Json -InputObject $expect.Status[$k] -Compress -Depth 5
                $got = ConvertTo-Json -InputObject (Get-Field $st.Status $k) -Compress -Depth 5
                $got | Should -Be $want -Because "status field $k"
            }
            $run.ExitCode | Should -Be ([int](Get-Field $case 'exitCode' 0)) -Because 'the exit code'
            $at = 0
            foreach ($line in $expect.Says) {
                $found = $false
                for ($i = $at; $i -lt $st.Before.Count; $i++) {
                    if ($st.Before[$i] -ceq $line) { $found = $true; $at = $i + 1; break }
                }
                if (-not $found) { throw "step $Step did not print '$line' (in order); it printed: $($st.Before -join ' | ')" }
            }
            switch ([string](Get-Field $case 'echoes' '')) {
                'kubeadm join' {
                    $lines = Get-FakeKubeadmLines -Command join -Fails:($machine.World['kubeadm:join'] -eq 'fails')
                    foreach ($l in $lines) { $st.Before | Should -Contain $l -Because "the step echoes kubeadm join's output" }
                }
                'kubeadm reset' {
                    $lines = Get-FakeKubeadmLines -Command reset -Fails:($machine.World['kubeadm:reset'] -eq 'fails')
                    foreach ($l in $lines) { $st.Before | Should -Contain $l -Because "the step echoes kubeadm reset's output" }
                }
            }
            $json = [string](Get-Field $case 'printsJson' '')
            if ($json -ne '') {
                $printed = ConvertFrom-Json -InputObject ($st.Before -join "`n")
                $names = @($printed | ForEach-Object { $_.Name })
                ($names -join '|') | Should -Be (Get-FakeFact $machine $json) -Because "the step prints $json as JSON"
            }
        }

        # The facts: what the case sets, else what it was given.
        $keys = @($given.Keys) + @($expandedSets.Keys | Where-Object { -not $given.Contains($_) })
        foreach ($k in $keys) {
            $want = $before[$k]
            if ($expandedSets.Contains($k)) { $want = $expandedSets[$k] }
            $got = Get-FakeFact $machine $k
            if ($want -eq '*') {
                $got | Should -Not -BeNullOrEmpty -Because "$k is written by the step"
            } else {
                $got | Should -BeExactly $want -Because "after the step, $k"
            }
        }
        # Nothing the case does not name has changed in the faked tables.
        $after = Get-TableFacts $machine
        foreach ($k in @($tables.Keys) + @($after.Keys | Where-Object { -not $tables.ContainsKey($_) })) {
            if ($expandedSets.Contains($k) -or $given.Contains($k)) { continue }
            # A service made or deleted takes its command line and dependencies along.
            $service = $k -replace '^service-(command|deps):', 'service:'
            if ($service -ne $k -and $expandedSets.Contains($service)) { continue }
            $service = $k -replace '^service-(imagepath|process):', 'service:'
            if ($service -ne $k -and $expandedSets.Contains($service) -and ([string]$tables[$service] -eq '' -or [string]$after[$service] -eq '')) { continue }
            # What Windows does besides, as the simulated machine does it
            # (simmachine/scm.go): the service control manager's API writes
            # the registry too; a service started runs the manager's command
            # line, one stopped has no process.
            if ($k -match '^service-(imagepath|process):(.+)$') {
                $what, $name = $Matches[1], $Matches[2]
                $command = [string]$after['service-command:' + $name]
                if ($what -eq 'imagepath' -and $expandedSets.Contains('service-command:' + $name)) {
                    [string]$after[$k] | Should -BeExactly $command -Because "the service control manager writes $name's command line into the registry too"
                    continue
                }
                if ($what -eq 'process' -and $expandedSets.Contains($service)) {
                    $want = ''
                    if ([string]$after[$service] -like '*/Running') { $want = $command }
                    [string]$after[$k] | Should -BeExactly $want -Because "a service started runs the service control manager's command line"
                    continue
                }
            }
            [string]$after[$k] | Should -BeExactly ([string]$tables[$k]) -Because "the case does not say that the step changes $k"
        }
        if (-not $Cut -and -not [bool](Get-Field $case 'changed' $false)) {
            # Changes nothing, and says so: no action, no file touched.
            ($machine.Actions -join ', ') | Should -BeNullOrEmpty -Because 'a step that reports no change acts on nothing'
            $now = Get-FileSnapshot $machine
            foreach ($k in @($files.Keys) + @($now.Keys)) {
                [string]$now[$k] | Should -BeExactly ([string]$files[$k]) -Because "a step that reports no change leaves $k as it was"
            }
        }
        if ([bool](Get-Field $case 'reboots' $false)) {
            $machine.Actions | Should -Contain 'Restart-Computer' -Because 'the step restarts the machine'
        }
    } finally {
        Remove-FakeMachine $machine
    }
}

# Test-ScriptParses fails with the parser's errors when a file does not
# parse as PowerShell.
function Test-ScriptParses {
    param([Parameter(Mandatory = $true)][string] $Path, [string] $Text)
    $tokens = $null
    $errors = $null
    if ($PSBoundParameters.ContainsKey('Text')) {
        [void][System.Management.Automation.Language.Parser]::ParseInput($Text, $Path, [ref]$tokens, [ref]$errors)
    } else {
        [void][System.Management.Automation.Language.Parser]::ParseFile($Path, [ref]$tokens, [ref]$errors)
    }
    $messages = @($errors | ForEach-Object { '{0}:{1}: {2}' -f $Path, $_.Extent.StartLineNumber, $_.Message })
    ($messages -join "`n") | Should -BeNullOrEmpty
}

# Test-StepScriptParses parses a step's script, and the script as the
# harness renders it (lib.ps1, then the step's body).
function Test-StepScriptParses {
    param([Parameter(Mandatory = $true)][string] $Step)
    $path = Get-StepScriptPath $Step
    Test-ScriptParses -Path $path
    $lib = [IO.File]::ReadAllText((Get-StepScriptPath 'lib'))
    $body = ([IO.File]::ReadAllText($path) -split "`n", 3)[2]
    Test-ScriptParses -Path ($path + ' (rendered)') -Text ('$StepName = ''' + $Step + "'`n" + $lib + "`n" + $body)
}
