# Pester tests, on the runner's real Windows, of what the preflight,
# compartment-namespace, metadata-route and underlay-route steps read and StepTest.ps1
# fakes: the shapes of the objects Windows gives them and how it answers for
# what is not there. The fakes must not drift from these.
Describe 'what the steps read from Windows' {
    It 'Win32_OperatingSystem.LocalDateTime is the clock, which preflight writes in UTC' {
        $os = Get-CimInstance -ClassName Win32_OperatingSystem
        $os.LocalDateTime | Should -BeOfType [datetime]
        $utc = $os.LocalDateTime.ToUniversalTime()
        ([datetime]::UtcNow - $utc).Duration().TotalMinutes | Should -BeLessThan 1
        $utc.ToString('o') | Should -Match 'Z$'
    }

    It 'Get-ItemProperty of a value that is not there, with -ErrorAction SilentlyContinue, gives nothing' {
        $got = Get-ItemProperty -LiteralPath 'HKLM:\SYSTEM\CurrentControlSet\Services\hns\State' -Name 'WinconformNoSuchValue' -ErrorAction SilentlyContinue
        $got | Should -BeNullOrEmpty
        $got = Get-ItemProperty -LiteralPath 'HKLM:\SOFTWARE\WinconformNoSuchKey' -Name 'EnableCompartmentNamespace' -ErrorAction SilentlyContinue
        $got | Should -BeNullOrEmpty
    }

    It 'Get-NetRoute gives the default route its next hop, adapter and metrics' {
        $default = Get-NetRoute -DestinationPrefix '0.0.0.0/0' -ErrorAction SilentlyContinue | Sort-Object -Property { $_.RouteMetric + $_.InterfaceMetric } | Select-Object -First 1
        $default | Should -Not -BeNullOrEmpty
        $default.NextHop | Should -Match '^\d{1,3}(\.\d{1,3}){3}$'
        $default.InterfaceAlias | Should -Not -BeNullOrEmpty
    }

    It 'Get-NetRoute of a prefix with no route, in either store, with -ErrorAction SilentlyContinue, gives nothing' {
        @(Get-NetRoute -DestinationPrefix '192.0.2.123/32' -ErrorAction SilentlyContinue).Count | Should -Be 0
        @(Get-NetRoute -DestinationPrefix '192.0.2.123/32' -PolicyStore PersistentStore -ErrorAction SilentlyContinue).Count | Should -Be 0
    }

    It 'Find-NetRoute gives the source address (no NextHop) and the route, with its next hop and interface' {
        $default = Get-NetRoute -DestinationPrefix '0.0.0.0/0' -ErrorAction SilentlyContinue | Sort-Object -Property { $_.RouteMetric + $_.InterfaceMetric } | Select-Object -First 1
        $found = @(Find-NetRoute -RemoteIPAddress $default.NextHop)
        @($found | Where-Object { $null -eq $_.PSObject.Properties['NextHop'] }).Count | Should -BeGreaterThan 0
        $route = @($found | Where-Object { $null -ne $_.PSObject.Properties['NextHop'] }) | Select-Object -First 1
        $route | Should -Not -BeNullOrEmpty
        $route.InterfaceAlias | Should -Be $default.InterfaceAlias
        [int]$route.RouteMetric | Should -BeGreaterOrEqual 0
    }

    It 'New-NetRoute puts a route in both stores with its metric, and Remove-NetRoute takes it from each' {
        $default = Get-NetRoute -DestinationPrefix '0.0.0.0/0' -ErrorAction SilentlyContinue | Sort-Object -Property { $_.RouteMetric + $_.InterfaceMetric } | Select-Object -First 1
        $prefix = '198.51.100.0/24'
        try {
            New-NetRoute -DestinationPrefix $prefix -InterfaceAlias $default.InterfaceAlias -NextHop $default.NextHop -RouteMetric 211 | Out-Null
            (Get-NetRoute -DestinationPrefix $prefix).RouteMetric | Should -Be 211
            (Get-NetRoute -DestinationPrefix $prefix -PolicyStore PersistentStore).RouteMetric | Should -Be 211
            { New-NetRoute -DestinationPrefix $prefix -InterfaceAlias $default.InterfaceAlias -NextHop $default.NextHop -RouteMetric 211 -ErrorAction Stop } | Should -Throw
            Remove-NetRoute -DestinationPrefix $prefix -PolicyStore ActiveStore -Confirm:$false
            @(Get-NetRoute -DestinationPrefix $prefix -ErrorAction SilentlyContinue).Count | Should -Be 0
            @(Get-NetRoute -DestinationPrefix $prefix -PolicyStore PersistentStore -ErrorAction SilentlyContinue).Count | Should -Be 1
        } finally {
            foreach ($store in 'ActiveStore', 'PersistentStore') { Remove-NetRoute -DestinationPrefix $prefix -PolicyStore $store -Confirm:$false -ErrorAction SilentlyContinue }
        }
        @(Get-NetRoute -DestinationPrefix $prefix -PolicyStore PersistentStore -ErrorAction SilentlyContinue).Count | Should -Be 0
    }
}
