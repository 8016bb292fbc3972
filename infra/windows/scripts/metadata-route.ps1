# winconform-step: metadata-route
# parameters: Destination
# Gives the host a persistent route to the cloud's instance metadata service
# ($Destination, 169.254.169.254/32) through its default gateway, for a
# machine in a cloud (the inventory's cloudMetadataRoute). HNS's virtual
# switch, which flannel's first network puts on the adapter, takes the
# adapter's routes away, a cloud image's own route to the metadata service
# with them; Windows puts a persistent route (route -p) back whenever it
# rebuilds the route table. It serves the host and its HostProcess
# containers (the kubelet, a CSI node plugin), not the pods in their own
# network compartments. Nothing changes when the one route to $Destination
# is the persistent one through the default route's gateway.
$default = Get-NetRoute -DestinationPrefix '0.0.0.0/0' -ErrorAction SilentlyContinue | Sort-Object -Property { $_.RouteMetric + $_.InterfaceMetric } | Select-Object -First 1
if ($null -eq $default) { throw "the machine has no default route: the metadata service at $Destination is reached through the default gateway" }
$gateway = $default.NextHop
$address = ($Destination -split '/')[0]
$routes = @(Get-NetRoute -DestinationPrefix $Destination -ErrorAction SilentlyContinue)
$kept = @(Get-NetRoute -DestinationPrefix $Destination -PolicyStore PersistentStore -ErrorAction SilentlyContinue | Where-Object { $_.NextHop -eq $gateway })
$current = ($routes.Count -eq 1 -and $routes[0].NextHop -eq $gateway -and $routes[0].InterfaceAlias -eq $default.InterfaceAlias -and $kept.Count -eq 1)
$changed = $false
if (-not $current) {
    $route = Join-Path $env:SystemRoot 'System32\ROUTE.EXE'
    if ($routes.Count -gt 0 -or $kept.Count -gt 0) {
        $r = Invoke-Native -FilePath $route -ArgumentList @('delete', $address)
        if ($r.ExitCode -ne 0) { throw "route delete $address failed: $($r.Output -join '; ')" }
    }
    $r = Invoke-Native -FilePath $route -ArgumentList @('-p', 'add', $address, 'mask', '255.255.255.255', $gateway, 'metric', '1')
    if ($r.ExitCode -ne 0) { throw "route -p add $address via $gateway failed: $($r.Output -join '; ')" }
    $changed = $true
}
Write-Status ([ordered]@{ changed = $changed; destination = $Destination; via = ($default.InterfaceAlias + ' via ' + $gateway) })
