# winconform-step: underlay-route
# parameters: Destinations, NextHop, Metric
# Gives a machine that reaches the kind network through the kind host (the
# routed underlay) its routes there: to each of $Destinations (the kind
# network, separated by |) through the kind host at $NextHop, with route
# metric $Metric, the harness's mark by which reset finds them again.
# New-NetRoute saves a route in both of Windows' stores, the active one
# and the persistent one, which Windows copies back at boot and whenever it
# rebuilds the route table (as when HNS's virtual switch takes the adapter
# from the host); the route goes on the interface through which
# Find-NetRoute says the kind host is reached. Nothing changes when each
# destination has exactly that route, in both stores.
$hop = @(Find-NetRoute -RemoteIPAddress $NextHop -ErrorAction SilentlyContinue | Where-Object { $null -ne $_.PSObject.Properties['NextHop'] }) | Select-Object -First 1
if ($null -eq $hop) { throw "the machine has no route to the kind host $($NextHop): it reaches the kind network through it, so it must reach the kind host first" }
$alias = $hop.InterfaceAlias
$changed = $false
foreach ($dest in @($Destinations -split '\|' | Where-Object { $_ -ne '' })) {
    $active = @(Get-NetRoute -DestinationPrefix $dest -ErrorAction SilentlyContinue)
    $kept = @(Get-NetRoute -DestinationPrefix $dest -PolicyStore PersistentStore -ErrorAction SilentlyContinue)
    $current = ($active.Count -eq 1 -and $active[0].NextHop -eq $NextHop -and [int]$active[0].RouteMetric -eq [int]$Metric -and $active[0].InterfaceAlias -eq $alias -and
        $kept.Count -eq 1 -and $kept[0].NextHop -eq $NextHop -and [int]$kept[0].RouteMetric -eq [int]$Metric)
    if ($current) { continue }
    foreach ($store in 'ActiveStore', 'PersistentStore') {
        Remove-NetRoute -DestinationPrefix $dest -PolicyStore $store -Confirm:$false -ErrorAction SilentlyContinue
    }
    New-NetRoute -DestinationPrefix $dest -InterfaceAlias $alias -NextHop $NextHop -RouteMetric ([int]$Metric) | Out-Null
    $changed = $true
}
Write-Status ([ordered]@{ changed = $changed; destinations = $Destinations; via = ($alias + ' via ' + $NextHop); metric = [int]$Metric })
