# winconform-step: containerd
# parameters: Source, Version, SandboxImage, InstallDir, CNIBinDir, CNIConfDir, LogFile
# Installs containerd $Version from $Source (an archive, a directory or
# containerd.exe; a URL or a path on the machine), writes its configuration
# (the sandbox image and the CNI directories, where that version reads
# them) and runs it as the containerd service. Nothing changes when
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

# The configuration: containerd's defaults for this version (its `config
# default`), with the sandbox image and the CNI directories set in the
# tables this version reads them from, and nothing else touched (containerd
# 2's image verifier has a bin_dir of its own, whose programs it runs on
# every pull). containerd 1.7 writes config version 2: its CRI plugin
# [plugins."io.containerd.grpc.v1.cri"] has sandbox_image, and its cni
# table bin_dir and conf_dir. containerd 2 writes version 3 (2.0 to 2.2) or
# 4 (2.3 on): the CRI image service's
# [plugins.'io.containerd.cri.v1.images'.pinned_images] has sandbox, the CRI
# runtime's [plugins.'io.containerd.cri.v1.runtime'.cni] bin_dirs (2.1 on,
# the oldest containerd 2 the join installs) and conf_dir. From 2.1 to 2.3
# that table keeps bin_dir, deprecated and empty: set beside bin_dirs,
# containerd loads no CRI.
# (containerd/containerd: services/server/config and pkg/cri/config in
# v1.7.28; cmd/containerd/server/config, internal/cri/config and
# plugins/cri in v2.x.)
$default = Invoke-Native -FilePath $exe -ArgumentList @('config', 'default')
if ($default.ExitCode -ne 0) { throw "containerd config default failed: $($default.Output -join '; ')" }
$lines = @($default.Output)
$configVersion = 0
foreach ($line in $lines) {
    $m = [regex]::Match($line, '^version\s*=\s*(\d+)\s*$')
    if ($m.Success) { $configVersion = [int]$m.Groups[1].Value; break }
}
$image = "'" + $SandboxImage + "'"
if ($configVersion -eq 2) {
    $want = @{
        'plugins.io.containerd.grpc.v1.cri' = @{ sandbox_image = $image }
        'plugins.io.containerd.grpc.v1.cri.cni' = @{ bin_dir = "'" + $CNIBinDir + "'"; conf_dir = "'" + $CNIConfDir + "'" }
    }
} elseif ($configVersion -ge 3) {
    $want = @{
        'plugins.io.containerd.cri.v1.images.pinned_images' = @{ sandbox = $image }
        'plugins.io.containerd.cri.v1.runtime.cni' = @{ bin_dirs = "['" + $CNIBinDir + "']"; conf_dir = "'" + $CNIConfDir + "'" }
    }
} else {
    throw "containerd config default of containerd $installed wrote config version $configVersion, which the step does not know"
}
# The keys of each table, by line (a table's name without its quotes).
$table = ''
$at = @{}
for ($i = 0; $i -lt $lines.Count; $i++) {
    $header = [regex]::Match($lines[$i], '^\s*\[([^\[\]]+)\]\s*$')
    if ($header.Success) { $table = $header.Groups[1].Value -replace '[''"\s]', ''; continue }
    $key = [regex]::Match($lines[$i], '^\s*([A-Za-z0-9_-]+)\s*=')
    if ($key.Success) { $at[$table + ' ' + $key.Groups[1].Value] = $i }
}
foreach ($t in $want.Keys) {
    foreach ($k in $want[$t].Keys) {
        if (-not $at.Contains($t + ' ' + $k)) { throw "containerd config default of containerd $installed has no $k in [$t]" }
        $i = $at[$t + ' ' + $k]
        $indent = [regex]::Match($lines[$i], '^\s*').Value
        $lines[$i] = $indent + $k + ' = ' + $want[$t][$k]
    }
}
$config = ($lines -join "`n") + "`n"

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
