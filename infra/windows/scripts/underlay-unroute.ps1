# winconform-step: underlay-unroute
# parameters: Destinations, Metric
# Removes the routes the join's underlay-route step gave the machine: every
# IPv4 route with route metric $Metric, the harness's mark, from the active
# store and from the registry's PersistentRoutes (route -p's, which Windows
# would put back), and any an earlier harness bound to an interface in the
# persistent store (New-NetRoute's). Nothing changes when there is none.
$removed = New-Object 'Collections.Generic.List[string]'
$route = Join-Path $env:SystemRoot 'System32\ROUTE.EXE'
$persistentRoutes = 'HKLM:\SYSTEM\CurrentControlSet\Services\Tcpip\Parameters\PersistentRoutes'
$kept = Get-ItemProperty -LiteralPath $persistentRoutes -ErrorAction SilentlyContinue
if ($null -ne $kept) {
    foreach ($p in @($kept.PSObject.Properties | Where-Object { $_.Name -match '^[0-9.]+,[0-9.]+,[0-9.]+,[0-9]+$' })) {
        $net, $mask, $gateway, $metric = $p.Name -split ','
        if ([int]$metric -ne [int]$Metric) { continue }
        $r = Invoke-Native -FilePath $route -ArgumentList @('delete', $net, 'mask', $mask)
        if ($r.ExitCode -ne 0) { throw "route delete $net mask $mask failed: $($r.Output -join '; ')" }
        $bits = 0
        foreach ($octet in ($mask -split '\.')) { $bits += [Convert]::ToString([int]$octet, 2).Replace('0', '').Length }
        if (-not $removed.Contains("$net/$bits")) { $removed.Add("$net/$bits") }
    }
}
foreach ($store in 'ActiveStore', 'PersistentStore') {
    foreach ($r in @(Get-NetRoute -AddressFamily IPv4 -PolicyStore $store -ErrorAction SilentlyContinue | Where-Object { [int]$_.RouteMetric -eq [int]$Metric })) {
        Remove-NetRoute -DestinationPrefix $r.DestinationPrefix -RouteMetric ([int]$Metric) -PolicyStore $store -Confirm:$false -ErrorAction SilentlyContinue
        if (-not $removed.Contains([string]$r.DestinationPrefix)) { $removed.Add([string]$r.DestinationPrefix) }
    }
}
Write-Status ([ordered]@{ changed = ($removed.Count -gt 0); removed = ($removed -join '|'); metric = [int]$Metric })
