# The helpers of the start scripts of the HostProcess DaemonSets
# (kube-proxy-windows.ps1, flannel-windows.ps1), written once: the harness
# puts this file before each script in its ConfigMap's run.ps1
# (infra/windows/prepare.go), and the Pester tests run them so too.
Set-StrictMode -Version Latest
$ErrorActionPreference = 'Stop'

# The volumes of a pod (ConfigMaps, its ServiceAccount token) are
# read-only, and where the container sees them depends on containerd:
# 1.6 links each one under the container's own root,
# $env:CONTAINER_SANDBOX_MOUNT_POINT (C:\C\<container>\), and nowhere
# else; 1.7 and 2.x bind each one at its mountPath on C:, seen by this
# container only (read-only for ConfigMaps, Secrets and tokens), and link it
# under the root (now C:\hpc\) as well, when they can. Get-MountDir looks
# under the root first (on 1.6, C:\<mountPath> is only the host's own
# directory), then at C:\<mountPath>.
function Get-MountDir {
    param([string] $MountPath, [string] $File)
    $relative = $MountPath.TrimStart('\', '/').Replace('/', '\')
    $candidates = @((Join-Path $env:CONTAINER_SANDBOX_MOUNT_POINT $relative), (Join-Path 'C:\' $relative))
    foreach ($candidate in $candidates) {
        if (Test-Path -LiteralPath (Join-Path $candidate $File)) { return $candidate }
    }
    throw "the volume mounted at $MountPath has no $File in $($candidates -join ' or ')"
}

# Get-ServiceAccountKubeconfig is the kubeconfig of a HostProcess pod's
# component (the script writes it where its component reads it): the API
# server as the node reaches it
# ($env:KUBE_API_SERVER), the CA and token of the pod's ServiceAccount
# (the token file named, so that the component reads it again as the
# kubelet rotates it).
function Get-ServiceAccountKubeconfig {
    param([string] $User, [string] $ServiceAccount)
    @"
apiVersion: v1
kind: Config
clusters:
- name: kubernetes
  cluster:
    server: https://$($env:KUBE_API_SERVER)
    certificate-authority: '$(Join-Path $ServiceAccount 'ca.crt')'
users:
- name: $User
  user:
    tokenFile: '$(Join-Path $ServiceAccount 'token')'
contexts:
- name: $User@kubernetes
  context:
    cluster: kubernetes
    user: $User
current-context: $User@kubernetes
"@
}
