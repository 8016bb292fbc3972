# winconform-step: kubeadm-reset
# parameters: KubeadmPath, CRISocket, CNIConfDir
# Undoes a join: kubeadm reset -f, the kubelet service stopped and deleted,
# C:\etc\kubernetes and C:\var\lib\kubelet removed, the CNI configuration and
# the IP allocations of host-local removed. The runtime and the binaries stay,
# so that the machine can join again.
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
$paths = @('C:\etc\kubernetes', 'C:\var\lib\kubelet', 'C:\var\lib\cni', 'C:\var\lib\kube-proxy-windows', 'C:\run\flannel', (Join-Path $WinconformDir 'join'))
foreach ($path in $paths) {
    if (Test-Path -LiteralPath $path) {
        Remove-Item -LiteralPath $path -Recurse -Force
        $changed = $true
    }
}
if (Test-Path -LiteralPath $CNIConfDir) {
    $conf = @(Get-ChildItem -LiteralPath $CNIConfDir -File)
    if ($conf.Count -gt 0) { $conf | Remove-Item -Force; $changed = $true }
}
Write-Status ([ordered]@{ changed = $changed })
