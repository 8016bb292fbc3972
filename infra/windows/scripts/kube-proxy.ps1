# winconform-step: kube-proxy
# parameters: KubernetesVersion, KubeProxySource, InstallDir
# Installs kube-proxy.exe of $KubernetesVersion (the node's: the cluster's
# unless the inventory says another) into
# $InstallDir. It runs from there in the kube-proxy-windows HostProcess
# DaemonSet (kernel-space mode), which the harness applies to the cluster.
$changed = $false
if (-not (Test-Path -LiteralPath (Join-Path $InstallDir 'kubelet.exe'))) {
    throw 'kubelet.exe is missing: the kubelet comes before kube-proxy'
}
$exe = Join-Path $InstallDir 'kube-proxy.exe'
$want = $KubernetesVersion.TrimStart('v')
if ((Get-ExeVersion -Path $exe).TrimStart('v') -ne $want) {
    $work = New-WorkDir 'kube-proxy'
    $file = Find-SourceFile -Source $KubeProxySource -Name 'kube-proxy.exe' -Work $work
    # kube-proxy-windows runs kube-proxy.exe from here: the running file is
    # moved aside (Install-Program), then the old process stopped, and the
    # kubelet starts the container again, from the new file.
    if ((Install-Program -Source $file -Destination $exe) -ne '') {
        Get-Process -Name kube-proxy -ErrorAction SilentlyContinue | Stop-Process -Force
    }
    $got = (Get-ExeVersion -Path $exe).TrimStart('v')
    if ($got -ne $want) { throw "$KubeProxySource installed kube-proxy.exe $got, not $KubernetesVersion" }
    $changed = $true
}
Write-Status ([ordered]@{ changed = $changed; version = $KubernetesVersion; path = $exe })
