# winconform-step: containerd
# parameters: Source, Version, Config, InstallDir, CNIBinDir, CNIConfDir, LogFile
# Installs containerd $Version from $Source (an archive, a directory or
# containerd.exe; a URL or a path on the machine), writes its
# configuration ($Config, config.toml as the harness composed it for that
# version) and runs it as the containerd service. Nothing changes when
# $Version is installed, the configuration is the same and the service
# runs.
$exe = Join-Path $InstallDir 'containerd.exe'
$changed = $false
$restart = $false
$installed = Get-ExeVersion -Path $exe
if ($installed.TrimStart('v') -ne $Version.TrimStart('v')) {
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
    if ($installed.TrimStart('v') -ne $Version.TrimStart('v')) {
        throw "$Source installed containerd $installed, not $Version"
    }
    $changed = $true
    $restart = $true
}
if (Add-MachinePath $InstallDir) { $changed = $true }

# The configuration is the harness's (infra/windows/nodeconfig, composed
# for this containerd version and judged there by containerd's own
# binary): the step only puts it in place, byte for byte.
$config = $Config
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

Write-Status ([ordered]@{ changed = $changed; version = $installed; config = $configPath })
