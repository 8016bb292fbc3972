# winconform-step: kubelet
# parameters: KubernetesVersion, KubeletSource, KubeadmSource, KubeLogRunnerSource, InstallDir, KubeletCommand, NodeName, NodeIP
# Installs kubelet.exe, kubeadm.exe and kube-log-runner.exe of
# $KubernetesVersion (the node's kubelet version: the cluster's unless the
# inventory says another) into $InstallDir and registers the kubelet service:
# kubelet itself as a Windows service (--windows-service), under
# kube-log-runner for its log file, depending on containerd. Its command
# line is $KubeletCommand, the node's name and address ($NodeIP, when set),
# and the flags kubeadm join wrote into kubeadm-flags.env. The service
# starts on demand until kubeadm join has configured the kubelet.
$changed = $false
if (-not (Get-Service -Name containerd -ErrorAction SilentlyContinue)) {
    throw 'the containerd service is missing: the runtime comes before the kubelet'
}
New-Item -ItemType Directory -Force -Path $InstallDir | Out-Null
$want = $KubernetesVersion.TrimStart('v')
$kubelet = Join-Path $InstallDir 'kubelet.exe'
$kubeadm = Join-Path $InstallDir 'kubeadm.exe'
$runner = Join-Path $InstallDir 'kube-log-runner.exe'

# The kubelet service runs kube-log-runner.exe, which runs kubelet.exe: a
# program is replaced by Install-Program (Windows refuses to overwrite the
# file of a running program, and a process stopped may not have exited by
# the time Stop-Service returns), with the service stopped first, and
# started again at the end, so that it runs the new files.
$wasRunning = $false
function Install-Exe {
    param([string] $Source, [string] $Name, [string] $Destination)
    $work = New-WorkDir $Name
    $file = Find-SourceFile -Source $Source -Name $Name -Work $work
    [void] (Install-Program -Source $file -Destination $Destination)
}

# Stop-Kubelet stops the kubelet service when it runs, and says whether it did.
function Stop-Kubelet {
    $svc = Get-Service -Name kubelet -ErrorAction SilentlyContinue
    if ($null -eq $svc -or $svc.Status -eq 'Stopped') { return $false }
    Stop-Service -Name kubelet -Force
    $true
}

$binaries = @(
    @{ Name = 'kubelet.exe'; Path = $kubelet; Source = $KubeletSource; ArgumentList = @('--version') },
    @{ Name = 'kubeadm.exe'; Path = $kubeadm; Source = $KubeadmSource; ArgumentList = @('version', '-o', 'short') }
)
foreach ($b in $binaries) {
    if ((Get-ExeVersion -Path $b.Path -ArgumentList $b.ArgumentList).TrimStart('v') -eq $want) { continue }
    if ($b.Name -eq 'kubelet.exe' -and (Stop-Kubelet)) { $wasRunning = $true }
    Install-Exe -Source $b.Source -Name $b.Name -Destination $b.Path
    $got = (Get-ExeVersion -Path $b.Path -ArgumentList $b.ArgumentList).TrimStart('v')
    if ($got -ne $want) { throw "$($b.Source) installed $($b.Name) $got, not $KubernetesVersion" }
    $changed = $true
}
# kube-log-runner prints no version: the source it came from says it.
$state = Get-State 'kube-log-runner'
if (-not (Test-Path -LiteralPath $runner) -or (Get-StateValue $state 'source') -ne $KubeLogRunnerSource) {
    if (Stop-Kubelet) { $wasRunning = $true }
    Install-Exe -Source $KubeLogRunnerSource -Name 'kube-log-runner.exe' -Destination $runner
    Set-State 'kube-log-runner' ([ordered]@{ source = $KubeLogRunnerSource })
    $changed = $true
}
if (Add-MachinePath $InstallDir) { $changed = $true }

# No pki link under C:\var\lib\kubelet: since v1.23 the kubelet takes a path
# such as /etc/kubernetes/pki/ca.crt as absolute on Windows (its config
# loader's IsAbs, k8s.io/kubernetes pkg/util/filesystem/util_windows.go;
# image-builder makes the link for kubelets older than v1.23 only).
foreach ($dir in @('C:\var\log\kubelet', 'C:\etc\kubernetes\pki', 'C:\etc\kubernetes\manifests')) {
    if (-not (Test-Path -LiteralPath $dir)) { New-Item -ItemType Directory -Force -Path $dir | Out-Null; $changed = $true }
}

# The command line, through the service control manager (a running kubelet
# restarts with it).
$binPath = Get-KubeletCommandLine -Command $KubeletCommand -NodeName $NodeName -NodeIP $NodeIP -FlagsFile 'C:\var\lib\kubelet\kubeadm-flags.env'
if (Set-KubeletService -CommandLine $binPath) { $changed = $true }
# Restart the kubelet when it fails.
$r = Invoke-Native -FilePath "$env:SystemRoot\System32\sc.exe" -ArgumentList @('failure', 'kubelet', 'reset=', '0', 'actions=', 'restart/10000/restart/10000/restart/10000')
if ($r.ExitCode -ne 0) { throw "sc.exe failure kubelet failed: $($r.Output -join '; ')" }
# A kubelet stopped above to be replaced starts again, as does a stopped one
# on a joined machine.
$service = Get-Service -Name kubelet
if (($wasRunning -or (Test-Path -LiteralPath 'C:\etc\kubernetes\kubelet.conf')) -and $service.Status -ne 'Running') {
    Start-Service -Name kubelet
    $changed = $true
}

Write-Status ([ordered]@{ changed = $changed; version = $KubernetesVersion; service = 'kubelet'; binPath = $binPath })
