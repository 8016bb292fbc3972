# Starts kube-proxy on a Windows node, in kernel-space mode, from the
# kube-proxy-windows HostProcess DaemonSet (winconform). kube-proxy.exe is
# the one the join installed in C:\k, of the cluster's version.
# Set-StrictMode, $ErrorActionPreference and Get-MountDir: hostprocess.ps1,
# which comes before this script in run.ps1.

# Test-InSubnet says whether an IPv4 address lies in a CIDR.
function Test-InSubnet {
    param([string] $Address, [string] $Subnet)
    $parts = $Subnet -split '/'
    $ip = $null
    $net = $null
    if ($parts.Count -ne 2 -or -not [Net.IPAddress]::TryParse($Address, [ref]$ip) -or -not [Net.IPAddress]::TryParse($parts[0], [ref]$net)) { return $false }
    $a = $ip.GetAddressBytes()
    $n = $net.GetAddressBytes()
    if ($a.Length -ne $n.Length) { return $false }
    $bits = [int]$parts[1]
    for ($i = 0; $i -lt $a.Length; $i++) {
        $mask = 0
        if ($bits -ge 8) { $mask = 255 } elseif ($bits -gt 0) { $mask = (255 -shl (8 - $bits)) -band 255 }
        if (($a[$i] -band $mask) -ne ($n[$i] -band $mask)) { return $false }
        $bits -= 8
    }
    $true
}

# Invoke-HostLocal runs host-local IPAM (as flannel's CNI plugin does for
# pods) on the network's store, for this node's source VIP: ADD reserves an
# address of the subnet, DEL releases whatever the source VIP's container ID
# holds in the network, of any subnet. host-local refuses a second ADD for
# an ID that holds an address of the subnet.
function Invoke-HostLocal {
    param([string] $Command, [string] $Subnet)
    $request = '{"cniVersion": "0.3.0", "name": "' + $env:KUBE_NETWORK + '", "ipam": {"type": "host-local", "ranges": [[{"subnet": "' + $Subnet + '"}]], "dataDir": "C:/var/lib/cni/networks"}}'
    $env:CNI_COMMAND = $Command
    $env:CNI_CONTAINERID = 'kube-proxy-source-vip'
    $env:CNI_NETNS = 'none'
    $env:CNI_IFNAME = 'none'
    $env:CNI_PATH = $env:CNI_BIN_PATH
    try {
        $result = $request | & (Join-Path $env:CNI_BIN_PATH 'host-local.exe')
        if ($LASTEXITCODE -ne 0) { throw "host-local $Command for the source VIP in $Subnet failed: $result" }
        $result
    } finally {
        # The paths are quoted: tree-sitter's PowerShell grammar (make pscheck)
        # misreads a list of bare Env:\ paths; PowerShell reads both forms alike.
        Remove-Item -Path 'Env:\CNI_COMMAND', 'Env:\CNI_CONTAINERID', 'Env:\CNI_NETNS', 'Env:\CNI_IFNAME', 'Env:\CNI_PATH'
    }
}

$serviceAccount = Get-MountDir '/var/run/secrets/kubernetes.io/serviceaccount' 'token'

# This script's state, outside every volume of the pod (they are read-only),
# in the harness's directory, which the machine's reset cleans; the
# kubeconfig where KUBE_PROXY_ARGS names it (nodeconfig.KubeProxyKubeconfig).
$state = 'C:\winconform\node\kube-proxy'
New-Item -ItemType Directory -Force -Path $state | Out-Null

# The kubeconfig: the API server as the node reaches it, this pod's
# ServiceAccount token (kube-proxy reads the file again as it rotates).
$kubeconfig = Join-Path $state 'kubeconfig.conf'
Get-ServiceAccountKubeconfig -User 'kube-proxy' -ServiceAccount $serviceAccount | Set-Content -LiteralPath $kubeconfig -Encoding ASCII

# kube-proxy works on flannel's overlay network: wait for flannel to make it.
Write-Output "waiting for the HNS network $env:KUBE_NETWORK"
$deadline = (Get-Date).AddMinutes(10)
while (-not (Get-HnsNetwork | Where-Object { $_.Name -eq $env:KUBE_NETWORK })) {
    if ((Get-Date) -gt $deadline) { throw "flannel made no HNS network $env:KUBE_NETWORK in 10 minutes: see the kube-flannel-ds-windows pod of this node" }
    Start-Sleep -Seconds 2
}
$network = Get-HnsNetwork | Where-Object { $_.Name -eq $env:KUBE_NETWORK } | Select-Object -First 1
$subnet = $network.Subnets[0].AddressPrefix

# On an overlay network kube-proxy needs a source VIP for SNAT: an address of
# the node's pod subnet, reserved from host-local IPAM, and kept across
# restarts. One kept from before must still lie in the network's subnet (a
# rejoined node may have another); a lost or stale one is released first, as
# host-local would refuse the same container ID a second address.
$sourceVipFile = Join-Path $state 'sourceVip.json'
$sourceVip = ''
if (Test-Path -LiteralPath $sourceVipFile) {
    try {
        $sourceVip = ((Get-Content -Raw -LiteralPath $sourceVipFile | ConvertFrom-Json).ips[0].address -split '/')[0]
    } catch {
        Write-Output "the source VIP file $sourceVipFile does not parse: reserving a new one"
    }
    if ($sourceVip -and -not (Test-InSubnet $sourceVip $subnet)) {
        Write-Output "the source VIP $sourceVip is not in the network's subnet ${subnet}: reserving a new one"
        $sourceVip = ''
    }
}
if (-not $sourceVip) {
    Invoke-HostLocal 'DEL' $subnet | Out-Null
    $result = Invoke-HostLocal 'ADD' $subnet
    $partial = "$sourceVipFile.new"
    $result | Set-Content -LiteralPath $partial -Encoding ASCII
    Move-Item -LiteralPath $partial -Destination $sourceVipFile -Force
    $sourceVip = ((Get-Content -Raw -LiteralPath $sourceVipFile | ConvertFrom-Json).ips[0].address -split '/')[0]
}

# Policies left by an earlier kube-proxy confuse its resync.
if (Get-Command -Name Get-HnsPolicyList -ErrorAction SilentlyContinue) { Get-HnsPolicyList | Remove-HnsPolicyList }

# kube-proxy's flags are the harness's (KUBE_PROXY_ARGS, a JSON array
# composed and judged by infra/windows/nodeconfig), and the two only the
# node knows: its name and the source VIP.
$kubeProxyArgs = @(ConvertFrom-Json -InputObject $env:KUBE_PROXY_ARGS) + @(
    "--hostname-override=$env:NODE_NAME",
    "--source-vip=$sourceVip"
)
Write-Output "starting C:\k\kube-proxy.exe $($kubeProxyArgs -join ' ')"
& 'C:\k\kube-proxy.exe' @kubeProxyArgs
exit $LASTEXITCODE
