# winconform-step: underlay-route
# parameters: Destinations, NextHop, Metric
# Gives a machine that reaches the kind network through the kind host (the
# routed underlay) its routes there: to each of $Destinations (the kind
# network, separated by |) through the kind host at $NextHop, with route
# metric $Metric, the harness's mark by which reset finds them again.
# Each is a persistent route without an interface (route -p add): Windows
# keeps it in the registry's PersistentRoutes (destination, mask, gateway,
# metric: no interface) and puts it back, on the adapter that reaches its
# gateway, whenever it rebuilds the route table: as when flannel's External
# HNS network moves the host's address from the physical adapter to HNS's
# virtual one, vEthernet. A route bound to the physical adapter
# (New-NetRoute -InterfaceAlias, what this step did before) stays bound to
# an adapter that no longer has the host's address, and is not active
# (Microsoft KB2966111; sig-windows-tools' flannel start script added its
# routes with route /p add and no interface; metadata-route.ps1 does the
# same). Nothing changes when each destination has that route, active
# through the kind host with the harness's metric, and kept in the
# registry.
$hop = @(Find-NetRoute -RemoteIPAddress $NextHop -ErrorAction SilentlyContinue | Where-Object { $null -ne $_.PSObject.Properties['NextHop'] }) | Select-Object -First 1
if ($null -eq $hop) { throw "the machine has no route to the kind host $($NextHop): it reaches the kind network through it, so it must reach the kind host first" }
$alias = $hop.InterfaceAlias
$persistentRoutes = 'HKLM:\SYSTEM\CurrentControlSet\Services\Tcpip\Parameters\PersistentRoutes'
$route = Join-Path $env:SystemRoot 'System32\ROUTE.EXE'

# ConvertTo-Mask is the dotted mask of a prefix length.
function ConvertTo-Mask {
    param([int] $Bits)
    $m = [uint64]0
    if ($Bits -gt 0) { $m = [uint64]([math]::Pow(2, 32) - [math]::Pow(2, 32 - $Bits)) }
    $b = [BitConverter]::GetBytes([uint32]$m)
    [array]::Reverse($b)
    ([Net.IPAddress]$b).ToString()
}

$changed = $false
foreach ($dest in @($Destinations -split '\|' | Where-Object { $_ -ne '' })) {
    $net, $bits = $dest -split '/', 2
    $mask = ConvertTo-Mask ([int]$bits)
    $active = @(Get-NetRoute -DestinationPrefix $dest -ErrorAction SilentlyContinue)
    $kept = $null -ne (Get-ItemProperty -LiteralPath $persistentRoutes -Name "$net,$mask,$NextHop,$Metric" -ErrorAction SilentlyContinue)
    $bound = @(Get-NetRoute -DestinationPrefix $dest -PolicyStore PersistentStore -ErrorAction SilentlyContinue)
    $current = ($active.Count -eq 1 -and $active[0].NextHop -eq $NextHop -and [int]$active[0].RouteMetric -eq [int]$Metric -and $active[0].InterfaceAlias -eq $alias -and
        $kept -and $bound.Count -eq 0)
    if ($current) { continue }
    # Whatever routes the destination has go first: a bound one an
    # earlier harness made, one in the registry, one in the active store.
    foreach ($store in 'ActiveStore', 'PersistentStore') {
        Remove-NetRoute -DestinationPrefix $dest -PolicyStore $store -Confirm:$false -ErrorAction SilentlyContinue
    }
    [void] (Invoke-Native -FilePath $route -ArgumentList @('delete', $net, 'mask', $mask))
    $r = Invoke-Native -FilePath $route -ArgumentList @('-p', 'add', $net, 'mask', $mask, $NextHop, 'metric', $Metric)
    if ($r.ExitCode -ne 0) { throw "route -p add $dest via $NextHop failed: $($r.Output -join '; ')" }
    $changed = $true
}
Write-Status ([ordered]@{ changed = $changed; destinations = $Destinations; via = ($alias + ' via ' + $NextHop); metric = [int]$Metric })
