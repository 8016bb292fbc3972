# Pester tests, on the runner's real Windows, of what the preflight,
# compartment-namespace and metadata-route steps read and StepTest.ps1
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
}
