# Pester tests of hns.ps1, the script a failure bundle's short-lived
# HostProcess pod runs with the host's PowerShell on a Windows node, on the
# Windows runners (.github/workflows/windows.yml). The HostNetworkingService
# module's cmdlets are mocked: the runner's own HNS is not read, and a
# runner without the module runs these too.
#
# The mocks are shaped on facts, each from its source:
# - the cmdlets and how they are called: Microsoft's reference of the
#   HostNetworkingService module
#   (https://learn.microsoft.com/powershell/module/hostnetworkingservice/)
#   lists Get-HnsNetwork, Get-HnsEndpoint and Get-HnsPolicyList, each taking
#   an optional positional -Id (String) and returning Object; it documents
#   no property of those objects;
# - the objects' properties are HNS's own (its v1 API): a network's ID,
#   Name, Type, ManagementIP, Subnets (AddressPrefix, GatewayAddress) and
#   Policies; an endpoint's ID, Name, VirtualNetwork, VirtualNetworkName,
#   IPAddress, MacAddress, IsRemoteEndpoint and Policies; a policy list's
#   ID, References and Policies; the policy types VSID, PA, OutBoundNAT
#   (ExceptionList) and ELB (Protocol, InternalPort, ExternalPort, VIPs),
#   as hcsshim's HNS client declares them (internal/hns: hnsnetwork.go,
#   hnsendpoint.go, hnspolicylist.go, hnspolicy.go); Get-HnsNetwork on
#   Windows Server 1809 prints ActivityId among them
#   (https://raw.githubusercontent.com/pjh/SDN/mtu-with-new-hnsnetwork/mtu-with-new-hnsnetwork.txt).
#
# What the script prints under these mocks is testdata/hns-*.json, which the
# Go side reads (ParseHNS, hns_test.go): one set of fixtures for both, held
# to the script here, under Windows PowerShell 5.1 and PowerShell 7.
Describe 'hns.ps1' {
    BeforeAll {
        $script:path = Join-Path $PSScriptRoot 'hns.ps1'
        $script:testdata = Join-Path $PSScriptRoot 'testdata'
        # Pester mocks only a command that exists: on a runner without the
        # module, stand-ins with the module's syntax.
        foreach ($c in @('Get-HnsNetwork', 'Get-HnsEndpoint', 'Get-HnsPolicyList')) {
            if (-not (Get-Command $c -ErrorAction SilentlyContinue)) {
                Set-Item -Path "function:global:$c" -Value { param([Parameter(Position = 0)][string] $Id) }
            }
        }
        # The same JSON, however indented: read and written again by this PowerShell.
        function script:Canonical([string] $Json) {
            $Json | ConvertFrom-Json | ConvertTo-Json -Depth 10 -Compress
        }
        function script:Fixture([string] $Name) {
            Canonical ([IO.File]::ReadAllText((Join-Path $script:testdata $Name)))
        }
        function script:Run {
            Canonical ((& $script:path) -join "`n")
        }
        $script:network = [pscustomobject]@{
            ActivityId   = '4D33F926-F95A-4D6A-A7E2-194911DCF003'
            ID           = '6E3C2B7A-1F0D-4C55-9E51-2A1B5C3D4E5F'
            Name         = 'vxlan0'
            Type         = 'Overlay'
            ManagementIP = '172.18.0.21'
            Subnets      = @([pscustomobject]@{ AddressPrefix = '10.244.2.0/24'; GatewayAddress = '10.244.2.1' })
            Policies     = @([pscustomobject]@{ Type = 'VSID'; VSID = 4096 })
        }
        $script:endpoints = @(
            [pscustomobject]@{
                ID                 = '0B7E5C1A-8D2F-4A3B-9C6D-1E2F3A4B5C6D'
                Name               = 'Ethernet'
                VirtualNetwork     = '6E3C2B7A-1F0D-4C55-9E51-2A1B5C3D4E5F'
                VirtualNetworkName = 'vxlan0'
                IPAddress          = '10.244.2.5'
                MacAddress         = '00-15-5D-12-34-56'
                IsRemoteEndpoint   = $false
                Policies           = @([pscustomobject]@{ Type = 'OutBoundNAT'; ExceptionList = @('10.244.0.0/16', '10.96.0.0/12') })
            },
            [pscustomobject]@{
                ID                 = '9A8B7C6D-5E4F-4A3B-8C2D-1E0F9A8B7C6D'
                Name               = 'remote_10.244.1.7'
                VirtualNetwork     = '6E3C2B7A-1F0D-4C55-9E51-2A1B5C3D4E5F'
                VirtualNetworkName = 'vxlan0'
                IPAddress          = '10.244.1.7'
                MacAddress         = '02-11-0A-F4-01-07'
                IsRemoteEndpoint   = $true
                Policies           = @([pscustomobject]@{ Type = 'PA'; PA = '172.18.0.3' })
            }
        )
        $script:policyList = [pscustomobject]@{
            ID         = '3C2B1A09-8F7E-4D6C-B5A4-93827160FEDC'
            References = @('/endpoints/0B7E5C1A-8D2F-4A3B-9C6D-1E2F3A4B5C6D')
            Policies   = @([pscustomobject]@{ Type = 'ELB'; Protocol = 6; InternalPort = 80; ExternalPort = 80; VIPs = @('10.96.0.10') })
        }
    }
    BeforeEach {
        Mock Import-Module { $null } -ParameterFilter { $Name -eq 'HostNetworkingService' }
        Mock Get-HnsNetwork { $script:network }
        Mock Get-HnsEndpoint { $script:endpoints }
        Mock Get-HnsPolicyList { $script:policyList }
    }

    It 'parses with PowerShell''s parser' {
        $tokens = $null
        $errors = $null
        [void][System.Management.Automation.Language.Parser]::ParseFile($script:path, [ref]$tokens, [ref]$errors)
        (@($errors | ForEach-Object { '{0}: {1}' -f $_.Extent.StartLineNumber, $_.Message }) -join "`n") | Should -BeNullOrEmpty
    }

    It 'prints every network, endpoint and policy list, as testdata/hns-full.json has them' {
        Run | Should -BeExactly (Fixture 'hns-full.json')
        Should -Invoke Import-Module -Times 1 -Exactly -ParameterFilter { $Name -eq 'HostNetworkingService' }
        foreach ($c in @('Get-HnsNetwork', 'Get-HnsEndpoint', 'Get-HnsPolicyList')) {
            Should -Invoke $c -Times 1 -Exactly -ParameterFilter { -not $Id }
        }
    }

    It 'keeps one network as a list of one, as testdata/hns-partial.json has it, and says which cmdlet failed and which the host lacks' {
        Mock Get-HnsEndpoint { throw 'HNS failed with error : The handle is invalid.' }
        Mock Get-Command { $null } -ParameterFilter { $Name -eq 'Get-HnsPolicyList' }
        Run | Should -BeExactly (Fixture 'hns-partial.json')
        Should -Invoke Get-HnsPolicyList -Times 0 -Exactly
    }

    It 'prints empty lists for a host without networks, as testdata/hns-empty.json has them' {
        Mock Get-HnsNetwork { @() }
        Mock Get-HnsEndpoint { @() }
        Mock Get-HnsPolicyList { @() }
        Run | Should -BeExactly (Fixture 'hns-empty.json')
    }
}
