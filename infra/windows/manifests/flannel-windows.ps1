# Starts flanneld on a Windows node, from the kube-flannel-ds-windows
# HostProcess DaemonSet (winconform): the vxlan back end of the cluster's
# flannel network, on HNS. flanneld.exe is the one the join installed in C:\k.
# Set-StrictMode, $ErrorActionPreference and Get-MountDir: hostprocess.ps1,
# which comes before this script in run.ps1.

$serviceAccount = Get-MountDir '/var/run/secrets/kubernetes.io/serviceaccount' 'token'
$netConf = Join-Path (Get-MountDir '/etc/kube-flannel' 'net-conf.json') 'net-conf.json'
$windowsCfg = Get-MountDir '/etc/kube-flannel-windows' 'cni-conf.json'

# This script's state, outside every volume of the pod (they are read-only),
# in the harness's directory, which the machine's reset cleans. flanneld
# keeps its subnet.env where flannel's CNI plugin reads it, C:\run\flannel.
$state = 'C:\winconform\node\flannel'
New-Item -ItemType Directory -Force -Path $state, 'C:\run\flannel', $env:CNI_CONF_DIR | Out-Null

# The node's address and its adapter: the --node-ip the join gave the
# kubelet through kubeadm (kubeadm writes it to kubeadm-flags.env), or else
# the address of the interface of the default route Windows takes (the
# lowest route metric plus interface metric).
$kubeadmFlags = 'C:\var\lib\kubelet\kubeadm-flags.env'
$nodeIP = ''
if (Test-Path -LiteralPath $kubeadmFlags) {
    $line = Get-Content -LiteralPath $kubeadmFlags | Where-Object { $_ -match '^KUBELET_KUBEADM_ARGS=' } | Select-Object -First 1
    if ($line -and $line -match '(?:^KUBELET_KUBEADM_ARGS="?|\s)--node-ip=([^\s"]+)') {
        $named = $Matches[1]
        # A dual-stack node names two; flannel's vxlan on Windows is IPv4.
        $nodeIP = $named -split ',' | Where-Object { $_ -match '^\d{1,3}(\.\d{1,3}){3}$' } | Select-Object -First 1
        if (-not $nodeIP) { throw "$kubeadmFlags names --node-ip=$named, which has no IPv4 address: Windows flannel (vxlan) needs the node's IPv4 address" }
    }
}
if ($nodeIP) {
    $address = Get-NetIPAddress -IPAddress $nodeIP -AddressFamily IPv4 -ErrorAction SilentlyContinue | Select-Object -First 1
    if (-not $address) { throw "$kubeadmFlags names --node-ip=$nodeIP, which is on no interface of this machine: give the machine one of its own addresses in the inventory (Get-NetIPAddress lists them)" }
    $ip = $nodeIP
    $ifIndex = $address.InterfaceIndex
    Write-Output "the node's address $ip (--node-ip in $kubeadmFlags), interface $ifIndex"
} else {
    $route = Get-NetRoute -DestinationPrefix '0.0.0.0/0' | Sort-Object -Property { $_.RouteMetric + $_.InterfaceMetric } | Select-Object -First 1
    $ifIndex = $route.ifIndex
    $ip = (Get-NetIPAddress -InterfaceIndex $ifIndex -AddressFamily IPv4 | Select-Object -First 1).IPAddress
    Write-Output "the node's address $ip (no --node-ip in ${kubeadmFlags}: the default route's interface $ifIndex)"
}
$adapter = (Get-NetAdapter -InterfaceIndex $ifIndex).Name

# The first overlay network on an adapter puts a virtual switch on it, which
# drops the host's connections for a moment. Make a network of our own
# first (External, as Windows flannel set-ups do), so that flannel's own
# network does not drop flanneld's connection to the API server.
if (-not (Get-HnsNetwork | Where-Object { $_.Name -eq 'External' })) {
    $signature = @'
[DllImport("vmcompute.dll")]
public static extern void HNSCall([MarshalAs(UnmanagedType.LPWStr)] string method, [MarshalAs(UnmanagedType.LPWStr)] string path, [MarshalAs(UnmanagedType.LPWStr)] string request, [MarshalAs(UnmanagedType.LPWStr)] out string response);
'@
    $hns = Add-Type -MemberDefinition $signature -Namespace WinConform -Name Hns -PassThru
    $request = ConvertTo-Json -Depth 10 -InputObject ([ordered]@{
        Type               = 'Overlay'
        Name               = 'External'
        NetworkAdapterName = $adapter
        Subnets            = @([ordered]@{
            AddressPrefix  = '192.168.255.0/30'
            GatewayAddress = '192.168.255.1'
            Policies       = @([ordered]@{ Type = 'VSID'; VSID = 9999 })
        })
    })
    $response = ''
    $hns::HNSCall('POST', '/networks', $request, [ref]$response)
    $answer = $response | ConvertFrom-Json
    if (-not $answer.Success) { throw "creating the External HNS network: $($answer.Error)" }
    # Wait for the host's address to come back on the virtual adapter.
    $deadline = (Get-Date).AddSeconds(60)
    while (-not (Get-NetIPAddress -IPAddress $ip -ErrorAction SilentlyContinue)) {
        if ((Get-Date) -gt $deadline) { throw "the address $ip did not come back after the External network was made" }
        Start-Sleep -Seconds 1
    }
}

# The CNI configuration the kubelet's runtime reads.
Copy-Item -LiteralPath (Join-Path $windowsCfg 'cni-conf.json') -Destination (Join-Path $env:CNI_CONF_DIR '10-flannel.conf') -Force

# flanneld's kubeconfig: the API server as the node reaches it, this pod's
# ServiceAccount token.
$kubeconfig = Join-Path $state 'kubeconfig.conf'
Get-ServiceAccountKubeconfig -User 'flannel' -ServiceAccount $serviceAccount | Set-Content -LiteralPath $kubeconfig -Encoding ASCII

$flannelArgs = @('--kube-subnet-mgr', "--kubeconfig-file=$kubeconfig", "--iface=$ip", "--net-config-path=$netConf")
Write-Output "starting C:\k\flanneld.exe $($flannelArgs -join ' ')"
& 'C:\k\flanneld.exe' @flannelArgs
exit $LASTEXITCODE
