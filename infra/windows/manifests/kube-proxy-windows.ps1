# Starts kube-proxy on a Windows node, in kernel-space mode, from the
# kube-proxy-windows HostProcess DaemonSet (winconform). kube-proxy.exe is
# the one the join installed in C:\k, of the cluster's version.
Set-StrictMode -Version Latest
$ErrorActionPreference = 'Stop'

$sandbox = $env:CONTAINER_SANDBOX_MOUNT_POINT
$serviceAccount = Join-Path $sandbox 'var\run\secrets\kubernetes.io\serviceaccount'
$dir = 'C:\var\lib\kube-proxy-windows'
New-Item -ItemType Directory -Force -Path $dir | Out-Null

# The kubeconfig: the API server as the node reaches it, this pod's
# ServiceAccount token (kube-proxy reads the file again as it rotates).
$kubeconfig = Join-Path $dir 'kubeconfig.conf'
@"
apiVersion: v1
kind: Config
clusters:
- name: kubernetes
  cluster:
    server: https://$($env:KUBE_API_SERVER)
    certificate-authority: '$(Join-Path $serviceAccount 'ca.crt')'
users:
- name: kube-proxy
  user:
    tokenFile: '$(Join-Path $serviceAccount 'token')'
contexts:
- name: kube-proxy@kubernetes
  context:
    cluster: kubernetes
    user: kube-proxy
current-context: kube-proxy@kubernetes
"@ | Set-Content -LiteralPath $kubeconfig -Encoding ASCII

# kube-proxy works on flannel's overlay network: wait for flannel to make it.
Write-Output "waiting for the HNS network $env:KUBE_NETWORK"
while (-not (Get-HnsNetwork | Where-Object { $_.Name -eq $env:KUBE_NETWORK })) { Start-Sleep -Seconds 2 }
$network = Get-HnsNetwork | Where-Object { $_.Name -eq $env:KUBE_NETWORK } | Select-Object -First 1

# On an overlay network kube-proxy needs a source VIP for SNAT: an address of
# the node's pod subnet, reserved from host-local IPAM (as flannel's CNI
# plugin allocates pod addresses), and kept across restarts.
$sourceVipFile = Join-Path $dir 'sourceVip.json'
if (-not (Test-Path -LiteralPath $sourceVipFile)) {
    $subnet = $network.Subnets[0].AddressPrefix
    $request = '{"cniVersion": "0.3.0", "name": "' + $env:KUBE_NETWORK + '", "ipam": {"type": "host-local", "ranges": [[{"subnet": "' + $subnet + '"}]], "dataDir": "C:/var/lib/cni/networks"}}'
    $env:CNI_COMMAND = 'ADD'
    $env:CNI_CONTAINERID = 'kube-proxy-source-vip'
    $env:CNI_NETNS = 'none'
    $env:CNI_IFNAME = 'none'
    $env:CNI_PATH = $env:CNI_BIN_PATH
    $result = $request | & (Join-Path $env:CNI_BIN_PATH 'host-local.exe')
    if ($LASTEXITCODE -ne 0) { throw "host-local could not reserve a source VIP in ${subnet}: $result" }
    $result | Set-Content -LiteralPath $sourceVipFile -Encoding ASCII
    # The paths are quoted: tree-sitter's PowerShell grammar (make pscheck)
    # misreads a list of bare Env:\ paths; PowerShell reads both forms alike.
    Remove-Item -Path 'Env:\CNI_COMMAND', 'Env:\CNI_CONTAINERID', 'Env:\CNI_NETNS', 'Env:\CNI_IFNAME', 'Env:\CNI_PATH'
}
$sourceVip = ((Get-Content -Raw -LiteralPath $sourceVipFile | ConvertFrom-Json).ips[0].address -split '/')[0]

# Policies left by an earlier kube-proxy confuse its resync.
if (Get-Command -Name Get-HnsPolicyList -ErrorAction SilentlyContinue) { Get-HnsPolicyList | Remove-HnsPolicyList }

$kubeProxyArgs = @(
    "--hostname-override=$env:NODE_NAME",
    '--proxy-mode=kernelspace',
    "--network-name=$env:KUBE_NETWORK",
    "--source-vip=$sourceVip",
    '--enable-dsr=false',
    "--cluster-cidr=$env:CLUSTER_CIDR",
    "--kubeconfig=$kubeconfig",
    '--v=2'
)
Write-Output "starting C:\k\kube-proxy.exe $($kubeProxyArgs -join ' ')"
& 'C:\k\kube-proxy.exe' @kubeProxyArgs
exit $LASTEXITCODE
