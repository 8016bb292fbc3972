# Starts flanneld on a Windows node, from the kube-flannel-ds-windows
# HostProcess DaemonSet (winconform): the vxlan back end of the cluster's
# flannel network, on HNS. flanneld.exe is the one the join installed in C:\k.
Set-StrictMode -Version Latest
$ErrorActionPreference = 'Stop'

$sandbox = $env:CONTAINER_SANDBOX_MOUNT_POINT
$serviceAccount = Join-Path $sandbox 'var\run\secrets\kubernetes.io\serviceaccount'
$netConf = Join-Path $sandbox 'etc\kube-flannel\net-conf.json'
$windowsCfg = Join-Path $sandbox 'etc\kube-flannel-windows'
$dir = 'C:\var\lib\flannel-windows'
New-Item -ItemType Directory -Force -Path $dir, 'C:\run\flannel', $env:CNI_CONF_DIR | Out-Null

# The address and adapter of the interface with the default route.
$route = Get-NetRoute -DestinationPrefix '0.0.0.0/0' | Sort-Object -Property RouteMetric | Select-Object -First 1
$ip = (Get-NetIPAddress -InterfaceIndex $route.ifIndex -AddressFamily IPv4 | Select-Object -First 1).IPAddress
$adapter = (Get-NetAdapter -InterfaceIndex $route.ifIndex).Name

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
- name: flannel
  user:
    tokenFile: '$(Join-Path $serviceAccount 'token')'
contexts:
- name: flannel@kubernetes
  context:
    cluster: kubernetes
    user: flannel
current-context: flannel@kubernetes
"@ | Set-Content -LiteralPath $kubeconfig -Encoding ASCII

$flannelArgs = @('--kube-subnet-mgr', "--kubeconfig-file=$kubeconfig", "--iface=$ip", "--net-config-path=$netConf")
Write-Output "starting C:\k\flanneld.exe $($flannelArgs -join ' ')"
& 'C:\k\flanneld.exe' @flannelArgs
exit $LASTEXITCODE
