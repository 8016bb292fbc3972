# winconform-step: kubeadm-reset
# parameters: KubeadmPath, CRISocket, CNIConfDir
# Undoes a join: kubeadm reset -f, the kubelet service stopped and deleted,
# C:\etc\kubernetes and C:\var\lib\kubelet removed (a directory link in them,
# such as the kubelet's pki link, as a link), and the state the node's
# services kept: the CNI configuration, host-local's addresses, flannel's
# subnet, kube-proxy's and flannel's state (C:\winconform\node). The runtime
# and the binaries stay, so that the machine can join again.
$changed = $false
$joinedFiles = @('C:\etc\kubernetes\kubelet.conf', 'C:\etc\kubernetes\bootstrap-kubelet.conf', 'C:\etc\kubernetes\pki\ca.crt') | Where-Object { Test-Path -LiteralPath $_ }
if (@($joinedFiles).Count -gt 0 -and (Test-Path -LiteralPath $KubeadmPath)) {
    $r = Invoke-Native -FilePath $KubeadmPath -ArgumentList @('reset', '-f', '--cri-socket', $CRISocket)
    $r.Output | ForEach-Object { Write-Output $_ }
    if ($r.ExitCode -ne 0) { Write-Output "kubeadm reset exited with code $($r.ExitCode); removing its files by hand" }
    $changed = $true
}
$service = Get-Service -Name kubelet -ErrorAction SilentlyContinue
if ($null -ne $service) {
    if ($service.Status -ne 'Stopped') { Stop-Service -Name kubelet -Force }
    $r = Invoke-Native -FilePath "$env:SystemRoot\System32\sc.exe" -ArgumentList @('delete', 'kubelet')
    if ($r.ExitCode -ne 0) { throw "sc.exe delete kubelet failed: $($r.Output -join '; ')" }
    Wait-Condition -Seconds 60 -What 'the kubelet service to be deleted' -Test { $null -eq (Get-Service -Name kubelet -ErrorAction SilentlyContinue) }
    $changed = $true
}
$paths = @('C:\etc\kubernetes', 'C:\var\lib\kubelet', 'C:\var\lib\cni', 'C:\run\flannel', (Join-Path $WinconformDir 'node'), (Join-Path $WinconformDir 'join'))
foreach ($path in $paths) {
    if (Test-Path -LiteralPath $path) {
        Remove-Tree -Path $path
        $changed = $true
    }
}
if (Test-Path -LiteralPath $CNIConfDir) {
    $conf = @(Get-ChildItem -LiteralPath $CNIConfDir -File)
    if ($conf.Count -gt 0) { $conf | Remove-Item -Force; $changed = $true }
}
Write-Status ([ordered]@{ changed = $changed })
