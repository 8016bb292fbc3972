# winconform-step: containerd
# parameters: Source, Version, SandboxImage, InstallDir, CNIBinDir, CNIConfDir, LogFile
# Installs containerd from $Source (an archive, a directory or containerd.exe;
# a URL or a path on the machine), writes its configuration (the sandbox
# image and the CNI directories) and runs it as the containerd service.
# Nothing changes when $Version (or, without one, the same $Source) is
# installed, the configuration is the same and the service runs.
$exe = Join-Path $InstallDir 'containerd.exe'
$changed = $false
$restart = $false
$state = Get-State 'containerd'
$installed = Get-ExeVersion -Path $exe
$upToDate = $false
if ($installed -ne '') {
    if ($Version -ne '') {
        $upToDate = ($installed.TrimStart('v') -eq $Version.TrimStart('v'))
    } else {
        $upToDate = ((Get-StateValue $state 'source') -eq $Source)
    }
}

if (-not $upToDate) {
    $work = New-WorkDir 'containerd'
    $found = Find-SourceFile -Source $Source -Name 'containerd.exe' -Work $work
    New-Item -ItemType Directory -Force -Path $InstallDir | Out-Null
    # containerd.exe, ctr.exe and containerd-shim-runhcs-v1.exe come together.
    # The service runs containerd.exe, and every running pod a shim, which
    # outlives a restart of containerd: the running files are moved aside
    # (Install-Program), and containerd restarts below, from the new file.
    foreach ($program in @(Get-ChildItem -LiteralPath (Split-Path -Parent $found) -File -Filter '*.exe')) {
        Install-Program -Source $program.FullName -Destination (Join-Path $InstallDir $program.Name) | Out-Null
    }
    $installed = Get-ExeVersion -Path $exe
    if ($Version -ne '' -and $installed.TrimStart('v') -ne $Version.TrimStart('v')) {
        throw "$Source installed containerd $installed, not $Version"
    }
    Set-State 'containerd' ([ordered]@{ source = $Source; version = $installed })
    $changed = $true
    $restart = $true
}
if (Add-MachinePath $InstallDir) { $changed = $true }

# The configuration: containerd's defaults for this version, with the
# sandbox (pause) image and the CNI directories set. containerd 1.7 names the
# keys sandbox_image and bin_dir, containerd 2 sandbox and bin_dirs.
$default = Invoke-Native -FilePath $exe -ArgumentList @('config', 'default')
if ($default.ExitCode -ne 0) { throw "containerd config default failed: $($default.Output -join '; ')" }
$config = ($default.Output -join "`n") + "`n"
$found = @{}
function Set-TomlKey {
    param([string] $Text, [string] $Key, [string] $Value)
    $pattern = '(?m)^([ \t]*)' + [regex]::Escape($Key) + '[ \t]*=.*$'
    if ([regex]::IsMatch($Text, $pattern)) { $found[$Key] = $true }
    $evaluator = { param($m) $m.Groups[1].Value + $Key + ' = ' + $Value }.GetNewClosure()
    [regex]::Replace($Text, $pattern, [Text.RegularExpressions.MatchEvaluator]$evaluator)
}
$image = "'" + $SandboxImage + "'"
$config = Set-TomlKey $config 'sandbox_image' $image
$config = Set-TomlKey $config 'sandbox' $image
$config = Set-TomlKey $config 'bin_dir' ("'" + $CNIBinDir + "'")
$config = Set-TomlKey $config 'bin_dirs' ("['" + $CNIBinDir + "']")
$config = Set-TomlKey $config 'conf_dir' ("'" + $CNIConfDir + "'")
if (-not ($found.Contains('sandbox_image') -or $found.Contains('sandbox'))) { throw 'containerd config default has no sandbox image key' }
if (-not ($found.Contains('bin_dir') -or $found.Contains('bin_dirs'))) { throw 'containerd config default has no CNI bin_dir key' }
if (-not $found.Contains('conf_dir')) { throw 'containerd config default has no CNI conf_dir key' }

$configPath = Join-Path $InstallDir 'config.toml'
$current = ''
if (Test-Path -LiteralPath $configPath) { $current = [IO.File]::ReadAllText($configPath) }
if ($current -ne $config) {
    [IO.File]::WriteAllText($configPath, $config, (New-Object Text.UTF8Encoding($false)))
    $changed = $true
    $restart = $true
}
foreach ($dir in @($CNIBinDir, $CNIConfDir, (Split-Path -Parent $LogFile))) {
    if (-not (Test-Path -LiteralPath $dir)) { New-Item -ItemType Directory -Force -Path $dir | Out-Null; $changed = $true }
}

$service = Get-Service -Name containerd -ErrorAction SilentlyContinue
if ($null -eq $service) {
    $r = Invoke-Native -FilePath $exe -ArgumentList @('--register-service', '--log-level', 'info', '--log-file', $LogFile)
    if ($r.ExitCode -ne 0) { throw "containerd --register-service failed: $($r.Output -join '; ')" }
    $changed = $true
    $service = Get-Service -Name containerd
}
if ($service.StartType -ne 'Automatic') { Set-Service -Name containerd -StartupType Automatic; $changed = $true }
if ($service.Status -ne 'Running') {
    Start-Service -Name containerd
    $changed = $true
} elseif ($restart) {
    Restart-Service -Name containerd -Force
}
Wait-Condition -Seconds 60 -What 'the containerd pipe' -Test { Test-Path -LiteralPath '\\.\pipe\containerd-containerd' }

Write-Status ([ordered]@{ changed = $changed; version = $installed; sandboxImage = $SandboxImage; config = $configPath })
