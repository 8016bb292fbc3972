# winconform-step: kubeadm-join
# parameters: Mode, NodeName, NodeExists, Token, DiscoveryConfig, KubeadmPath, CRISocket
# Joins the machine with kubeadm join, unless it has joined already (its
# kubelet.conf exists and the cluster has its Node). With $Mode 'check' it
# only says whether a join is needed. Discovery uses a kubeconfig that names
# the API server address the machine can reach ($DiscoveryConfig: the
# cluster's CA, no credentials) and the bootstrap token $Token.
$kubeletConf = 'C:\etc\kubernetes\kubelet.conf'
$joined = (Test-Path -LiteralPath $kubeletConf) -and ($NodeExists -eq 'true')
if ($joined) {
    $changed = $false
    $service = Get-Service -Name kubelet
    if ($service.StartType -ne 'Automatic') { Set-Service -Name kubelet -StartupType Automatic; $changed = $true }
    if ($service.Status -ne 'Running') { Start-Service -Name kubelet; $changed = $true }
    Write-Status ([ordered]@{ changed = $changed; joined = $true; needsJoin = $false })
    return
}
if ($Mode -eq 'check') {
    Write-Status ([ordered]@{ changed = $false; joined = $false; needsJoin = $true })
    return
}
if (-not (Get-Service -Name kubelet -ErrorAction SilentlyContinue)) { throw 'the kubelet service is missing' }
if ((Get-Service -Name containerd).Status -ne 'Running') { throw 'containerd is not running' }

# What an earlier join left (a kubelet.conf whose node is gone, or a join that
# failed half-way) fails kubeadm's preflight checks: reset it first.
$leftovers = @($kubeletConf, 'C:\etc\kubernetes\bootstrap-kubelet.conf', 'C:\etc\kubernetes\pki\ca.crt') | Where-Object { Test-Path -LiteralPath $_ }
if (@($leftovers).Count -gt 0) {
    Write-Output "resetting what an earlier join left: $($leftovers -join ', ')"
    $reset = Invoke-Native -FilePath $KubeadmPath -ArgumentList @('reset', '-f', '--cri-socket', $CRISocket)
    $reset.Output | ForEach-Object { Write-Output $_ }
}

$dir = Join-Path $WinconformDir 'join'
New-Item -ItemType Directory -Force -Path $dir | Out-Null
$discovery = Join-Path $dir 'discovery.conf'
[IO.File]::WriteAllText($discovery, $DiscoveryConfig, (New-Object Text.UTF8Encoding($false)))
$joinArgs = @('join', '--discovery-file', $discovery, '--tls-bootstrap-token', $Token, '--cri-socket', $CRISocket, '--node-name', $NodeName, '--v=2')
$r = Invoke-Native -FilePath $KubeadmPath -ArgumentList $joinArgs
$r.Output | ForEach-Object { Write-Output $_ }
Remove-Item -LiteralPath $discovery -Force
if ($r.ExitCode -ne 0) {
    Write-Status ([ordered]@{ changed = $true; joined = $false; needsJoin = $true; exitCode = $r.ExitCode })
    exit 1
}
Set-Service -Name kubelet -StartupType Automatic
if ((Get-Service -Name kubelet).Status -ne 'Running') { Start-Service -Name kubelet }
Write-Status ([ordered]@{ changed = $true; joined = $true; needsJoin = $false })
