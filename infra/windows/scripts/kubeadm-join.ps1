# winconform-step: kubeadm-join
# parameters: Mode, NodeName, NodeIP, NodeExists, JoinFiles, JoinDir, InstallDir, CRISocket, CNIConfDir, KubeletCommand
# Joins the machine with kubeadm join, unless it has joined already (its
# kubelet.conf exists and the cluster has its Node). $Mode 'check' only says
# whether a join is needed, and what an earlier join left (its leftovers);
# 'clean' removes those: kubeadm reset, then the state the node's services
# kept (host-local's addresses, flannel's subnet, kube-proxy's and
# flannel's state, the CNI configuration), which would carry the old
# cluster's addresses into the new one; 'join' joins. Discovery uses a
# kubeconfig that names the API server address the machine can reach
# ($DiscoveryConfig: the cluster's CA, no credentials) and the bootstrap
# token $Token. $NodeIP, when set, goes to the kubelet through kubeadm
# (kubeadm-flags.env), and the kubelet service then runs with what kubeadm
# wrote there.
$kubeletConf = 'C:\etc\kubernetes\kubelet.conf'
$flagsFile = 'C:\var\lib\kubelet\kubeadm-flags.env'
$kubeadm = Join-Path $InstallDir 'kubeadm.exe'
$joined = (Test-Path -LiteralPath $kubeletConf) -and ($NodeExists -eq 'true')
if ($joined) {
    # The kubelet runs with the flags kubeadm wrote, here too: a join whose
    # connection dropped after kubeadm join (the node's first HNS network
    # cuts the host's connections) is run again, and finds itself joined
    # before it gave the service those flags.
    $binPath = Get-KubeletCommandLine -Command $KubeletCommand -NodeName $NodeName -NodeIP $NodeIP -FlagsFile $flagsFile
    $changed = [bool] (Set-KubeletService -CommandLine $binPath)
    $service = Get-Service -Name kubelet
    if ($service.StartType -ne 'Automatic') { Set-Service -Name kubelet -StartupType Automatic; $changed = $true }
    if ($service.Status -ne 'Running') { Start-Service -Name kubelet; $changed = $true }
    Write-Status ([ordered]@{ changed = $changed; joined = $true; needsJoin = $false; binPath = $binPath })
    return
}

# What an earlier join left: kubeadm's files fail its preflight checks, and
# the state of the node's services names the old cluster's addresses.
$kubeadmFiles = @($kubeletConf, 'C:\etc\kubernetes\bootstrap-kubelet.conf', 'C:\etc\kubernetes\pki\ca.crt', $flagsFile)
$stateDirs = @('C:\var\lib\cni', 'C:\run\flannel', 'C:\winconform\node')
$confFiles = @()
if (Test-Path -LiteralPath $CNIConfDir) { $confFiles = @(Get-ChildItem -LiteralPath $CNIConfDir -File | ForEach-Object { $_.FullName }) }
$leftovers = @(@($kubeadmFiles + $stateDirs | Where-Object { Test-Path -LiteralPath $_ }) + $confFiles)

if ($Mode -eq 'check') {
    Write-Status ([ordered]@{ changed = $false; joined = $false; needsJoin = $true; leftovers = $leftovers })
    return
}
if ($Mode -eq 'clean') {
    if ($leftovers.Count -eq 0) {
        Write-Status ([ordered]@{ changed = $false; removed = @() })
        return
    }
    Write-Output "removing what an earlier join left: $($leftovers -join ', ')"
    if (@($kubeadmFiles | Where-Object { Test-Path -LiteralPath $_ }).Count -gt 0) {
        $reset = Invoke-Native -FilePath $kubeadm -ArgumentList @('reset', '-f', '--cri-socket', $CRISocket)
        $reset.Output | ForEach-Object { Write-Output $_ }
        if ($reset.ExitCode -ne 0) { throw "kubeadm reset exited with code $($reset.ExitCode)" }
    }
    foreach ($dir in $stateDirs) {
        if (Test-Path -LiteralPath $dir) { Remove-Tree -Path $dir }
    }
    foreach ($file in $confFiles) { Remove-Item -LiteralPath $file -Force }
    Write-Status ([ordered]@{ changed = $true; removed = $leftovers })
    return
}
if ($Mode -ne 'join') { throw "unknown mode $Mode" }
if ($leftovers.Count -gt 0) { throw "an earlier join left $($leftovers -join ', '): the clean mode comes first" }
if (-not (Get-Service -Name kubelet -ErrorAction SilentlyContinue)) { throw 'the kubelet service is missing' }
if ((Get-Service -Name containerd).Status -ne 'Running') { throw 'containerd is not running' }

# kubeadm's preflight runs kubelet --version by name: the PATH the kubelet
# step set is the machine's, which this shell did not inherit.
Update-SessionPath

# The files hold the bootstrap token: an earlier attempt's go first, and
# these go however kubeadm ends.
if (Test-Path -LiteralPath $JoinDir) { Remove-Item -LiteralPath $JoinDir -Recurse -Force }
New-Item -ItemType Directory -Force -Path $JoinDir | Out-Null
$utf8 = New-Object Text.UTF8Encoding($false)
$join = ConvertFrom-Json -InputObject $JoinFiles
foreach ($f in @($join.files)) {
    $path = Join-Path $JoinDir ($f.name -replace '/', '\')
    New-Item -ItemType Directory -Force -Path (Split-Path -Parent $path) | Out-Null
    [IO.File]::WriteAllText($path, $f.data, $utf8)
}
# kubeadm resolves the JoinConfiguration's relative paths against its
# working directory, which PowerShell gives a native program from its
# current location.
Push-Location -LiteralPath $JoinDir
try {
    $r = Invoke-Native -FilePath $kubeadm -ArgumentList @('join', '--config', $join.config, '--v=2')
} finally {
    Pop-Location
    Remove-Item -LiteralPath $JoinDir -Recurse -Force
}
$r.Output | ForEach-Object { Write-Output $_ }
if ($r.ExitCode -ne 0) {
    Write-Status ([ordered]@{ changed = $true; joined = $false; needsJoin = $true; exitCode = $r.ExitCode })
    exit 1
}
# kubeadm started the kubelet with the command line it had; the flags
# kubeadm wrote (kubeadm-flags.env) join it now.
$binPath = Get-KubeletCommandLine -Command $KubeletCommand -NodeName $NodeName -NodeIP $NodeIP -FlagsFile $flagsFile
[void] (Set-KubeletService -CommandLine $binPath)
Set-Service -Name kubelet -StartupType Automatic
if ((Get-Service -Name kubelet).Status -ne 'Running') { Start-Service -Name kubelet }
Write-Status ([ordered]@{ changed = $true; joined = $true; needsJoin = $false; binPath = $binPath })
