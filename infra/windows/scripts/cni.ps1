# winconform-step: cni
# parameters: PluginsSource, FlannelPluginSource, FlanneldSource, BinDir, ConfDir, InstallDir
# Installs the CNI plugins flannel needs on Windows (flannel, win-overlay,
# host-local) into $BinDir, and flanneld.exe into $InstallDir, where the
# kube-flannel-ds-windows HostProcess DaemonSet runs it. The plugins come from
# $PluginsSource (an archive or a directory); flannel.exe from
# $FlannelPluginSource when the plugins lack it.
$changed = $false
if (-not (Test-Path -LiteralPath (Join-Path $InstallDir 'kube-proxy.exe'))) {
    throw 'kube-proxy.exe is missing: kube-proxy comes before the CNI'
}
$required = @('flannel.exe', 'win-overlay.exe', 'host-local.exe')
$state = Get-State 'cni'
$present = @($required | Where-Object { Test-Path -LiteralPath (Join-Path $BinDir $_) }).Count -eq $required.Count
$same = ((Get-StateValue $state 'plugins') -eq $PluginsSource) -and ((Get-StateValue $state 'flannelPlugin') -eq $FlannelPluginSource)
if (-not ($present -and $same)) {
    New-Item -ItemType Directory -Force -Path $BinDir | Out-Null
    $work = New-WorkDir 'cni'
    $dir = Expand-Source -Source $PluginsSource -Work $work
    Get-ChildItem -LiteralPath $dir -Recurse -File -Filter '*.exe' | ForEach-Object {
        Install-Program -Source $_.FullName -Destination (Join-Path $BinDir $_.Name) | Out-Null
    }
    if ($FlannelPluginSource -ne '') {
        $flannelWork = New-WorkDir 'cni-flannel'
        if (Test-Archive $FlannelPluginSource) {
            $found = Get-ChildItem -LiteralPath (Expand-Source -Source $FlannelPluginSource -Work $flannelWork) -Recurse -File -Filter 'flannel*.exe' | Select-Object -First 1
            if ($null -eq $found) { throw "$FlannelPluginSource holds no flannel*.exe" }
            $flannel = $found.FullName
        } else {
            $flannel = Find-SourceFile -Source $FlannelPluginSource -Name (Get-SourceName $FlannelPluginSource) -Work $flannelWork
        }
        Install-Program -Source $flannel -Destination (Join-Path $BinDir 'flannel.exe') | Out-Null
    }
    $missing = @($required | Where-Object { -not (Test-Path -LiteralPath (Join-Path $BinDir $_)) })
    if ($missing.Count -gt 0) { throw "after installing $PluginsSource, $BinDir lacks $($missing -join ', ')" }
    Set-State 'cni' ([ordered]@{ plugins = $PluginsSource; flannelPlugin = $FlannelPluginSource; flanneld = (Get-StateValue $state 'flanneld') })
    $state = Get-State 'cni'
    $changed = $true
}
$flanneld = Join-Path $InstallDir 'flanneld.exe'
if (-not (Test-Path -LiteralPath $flanneld) -or (Get-StateValue $state 'flanneld') -ne $FlanneldSource) {
    $file = Find-SourceFile -Source $FlanneldSource -Name 'flanneld.exe' -Work (New-WorkDir 'flanneld')
    # kube-flannel-ds-windows runs flanneld.exe from here: the running file is
    # moved aside (Install-Program), then the old process stopped, and the
    # kubelet starts the container again, from the new file.
    if ((Install-Program -Source $file -Destination $flanneld) -ne '') {
        Get-Process -Name flanneld -ErrorAction SilentlyContinue | Stop-Process -Force
    }
    Set-State 'cni' ([ordered]@{ plugins = $PluginsSource; flannelPlugin = $FlannelPluginSource; flanneld = $FlanneldSource })
    $changed = $true
}
if (-not (Test-Path -LiteralPath $ConfDir)) { New-Item -ItemType Directory -Force -Path $ConfDir | Out-Null; $changed = $true }
Write-Status ([ordered]@{ changed = $changed; binDir = $BinDir; plugins = $required; flanneld = $flanneld })
