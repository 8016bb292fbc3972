# winconform-step: underlay-unroute
# parameters: Destinations, Metric
# Removes the routes the join's underlay-route step gave the machine: every
# IPv4 route with route metric $Metric, the harness's mark, from both of
# Windows' stores (the active one, and the persistent one Windows would
# copy back at the next boot). Nothing changes when there is none.
$removed = New-Object 'Collections.Generic.List[string]'
foreach ($store in 'ActiveStore', 'PersistentStore') {
    foreach ($r in @(Get-NetRoute -AddressFamily IPv4 -PolicyStore $store -ErrorAction SilentlyContinue | Where-Object { [int]$_.RouteMetric -eq [int]$Metric })) {
        Remove-NetRoute -DestinationPrefix $r.DestinationPrefix -RouteMetric ([int]$Metric) -PolicyStore $store -Confirm:$false -ErrorAction SilentlyContinue
        if (-not $removed.Contains([string]$r.DestinationPrefix)) { $removed.Add([string]$r.DestinationPrefix) }
    }
}
Write-Status ([ordered]@{ changed = ($removed.Count -gt 0); removed = ($removed -join '|'); metric = [int]$Metric })
