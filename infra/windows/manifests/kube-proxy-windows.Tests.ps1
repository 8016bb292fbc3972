# Pester tests of kube-proxy-windows.ps1, the start script of the
# kube-proxy-windows HostProcess DaemonSet, run for real on a fake host (see
# ManifestTest.ps1), with the pod's volumes where containerd 1.6 and 1.7/2.x
# put them, read-only on 1.7 as the bind filter makes them, and host-local's
# store as host-local keeps it. The Go side checks the same script against
# the rendered DaemonSet (infra/windows/startscript_test.go).
Describe 'kube-proxy-windows.ps1' {
    BeforeAll {
        . (Join-Path $PSScriptRoot 'ManifestTest.ps1')
        $environment = @{
            NODE_NAME = 'win-2022-a'; KUBE_API_SERVER = '192.0.2.10:6443'; KUBE_NETWORK = 'flannel.4096'
            KUBE_PROXY_ARGS = '["--proxy-mode=kernelspace","--network-name=flannel.4096","--enable-dsr=false","--cluster-cidr=10.244.0.0/16","--kubeconfig=C:\\winconform\\node\\kube-proxy\\kubeconfig.conf","--v=2"]'
            CNI_BIN_PATH = 'C:\opt\cni\bin'
        }
        $hostLocal = 'C:\opt\cni\bin\host-local.exe'
        $state = 'C:\winconform\node\kube-proxy'
        # New-KubeProxyHost is a node on which flannel has made its network,
        # with the pod's volumes: its ConfigMap and its ServiceAccount token.
        function New-KubeProxyHost {
            param([string] $Layout = 'containerd-1.7', [string] $Subnet = '10.244.1.0/24', [int] $KubeProxyExit = 0, [switch] $NoNetwork, [switch] $NoRootLinks)
            $h = New-FakeHost -Layout $Layout -NoRootLinks:$NoRootLinks
            if (-not $NoNetwork) {
                $h.Networks.Add([pscustomobject]@{ Name = 'flannel.4096'; Subnets = @([pscustomobject]@{ AddressPrefix = $Subnet }) })
            }
            Add-FakeMount $h '/var/lib/kube-proxy-windows' @{ 'run.ps1' = 'the start script' }
            Add-FakeMount $h '/var/run/secrets/kubernetes.io/serviceaccount' @{ 'ca.crt' = 'the cluster CA'; token = 'a service account token'; namespace = 'kube-system' }
            Add-FakeProgram $h 'C:\k\kube-proxy.exe' -Exit $KubeProxyExit | Out-Null
            Add-FakeHostLocal $h $hostLocal | Out-Null
            $h
        }
        function Get-SourceVipArg {
            param($FakeHost)
            $log = Get-FakeProgramLog $FakeHost 'C:\k\kube-proxy.exe'
            if ($log -match '--source-vip=(\S+)') { return $Matches[1] }
            ''
        }
    }

    It 'parses with PowerShell''s parser' {
        $tokens = $null
        $errors = $null
        [void][System.Management.Automation.Language.Parser]::ParseFile((Join-Path $PSScriptRoot 'kube-proxy-windows.ps1'), [ref]$tokens, [ref]$errors)
        (@($errors | ForEach-Object { '{0}: {1}' -f $_.Extent.StartLineNumber, $_.Message }) -join "`n") | Should -BeNullOrEmpty
    }

    It 'on <Layout>: reserves a source VIP, keeps its state out of the pod''s volumes and starts kube-proxy in kernel-space mode' -ForEach @(
        @{ Layout = 'containerd-1.6' }, @{ Layout = 'containerd-1.7' }
    ) {
        $h = New-KubeProxyHost -Layout $Layout
        try {
            $run = Invoke-StartScript $h 'kube-proxy-windows.ps1' $environment
            $run.Error | Should -BeNullOrEmpty
            $run.ExitCode | Should -Be 0
            (@(Get-ChangedMounts $h) -join ', ') | Should -BeNullOrEmpty -Because 'the pod''s volumes are read-only'
            $request = Get-FakeProgramLog $h $hostLocal
            $request | Should -Match '"subnet": "10\.244\.1\.0/24"'
            $request | Should -Match '"name": "flannel\.4096"'
            $request | Should -Match '"dataDir": "C:/var/lib/cni/networks"'
            (@(Get-HostLocalReservations $h $hostLocal 'flannel.4096') -join ', ') | Should -Be '10.244.1.2 kube-proxy-source-vip'
            $dir = ConvertTo-HostPath $h $state
            Test-Path -LiteralPath (Join-Path $dir 'sourceVip.json') | Should -BeTrue
            $kubeProxy = Get-FakeProgramLog $h 'C:\k\kube-proxy.exe'
            foreach ($arg in @('--hostname-override=win-2022-a', '--proxy-mode=kernelspace', '--network-name=flannel.4096', '--source-vip=10.244.1.2',
                    '--enable-dsr=false', '--cluster-cidr=10.244.0.0/16', '--kubeconfig=C:\winconform\node\kube-proxy\kubeconfig.conf', '--v=2')) {
                $kubeProxy | Should -BeLike "*$arg*"
            }
            $run.Output | Should -Contain ('starting ' + (ConvertTo-HostPath $h 'C:\k\kube-proxy.exe') + ' ' + ($kubeProxy -split "`r?`n")[0])
            $kubeconfig = [IO.File]::ReadAllText((Join-Path $dir 'kubeconfig.conf'))
            $kubeconfig | Should -BeLike '*server: https://192.0.2.10:6443*'
            # The token and CA where this layout shows them to the container.
            $kubeconfig -match "tokenFile: '([^']+)'" | Should -BeTrue
            [IO.File]::ReadAllText($Matches[1]) | Should -Be 'a service account token'
            $kubeconfig -match "certificate-authority: '([^']+)'" | Should -BeTrue
            [IO.File]::ReadAllText($Matches[1]) | Should -Be 'the cluster CA'
            foreach ($var in 'CNI_COMMAND', 'CNI_CONTAINERID', 'CNI_NETNS', 'CNI_IFNAME', 'CNI_PATH') {
                [Environment]::GetEnvironmentVariable($var) | Should -BeNullOrEmpty -Because "the script removes $var after host-local ran"
            }
        } finally {
            Remove-FakeHost $h
        }
    }

    It 'on containerd 1.7 without the links under the container''s root: reads the token where it is bound' {
        $h = New-KubeProxyHost -NoRootLinks
        try {
            $run = Invoke-StartScript $h 'kube-proxy-windows.ps1' $environment
            $run.Error | Should -BeNullOrEmpty
            $kubeconfig = [IO.File]::ReadAllText((Join-Path (ConvertTo-HostPath $h $state) 'kubeconfig.conf'))
            $kubeconfig | Should -BeLike ("*tokenFile: '" + (ConvertTo-HostPath $h 'C:\var\run\secrets\kubernetes.io\serviceaccount\token') + "'*")
        } finally {
            Remove-FakeHost $h
        }
    }

    It 'fails, naming both places, when the token is in neither' {
        $h = New-FakeHost
        try {
            $h.Networks.Add([pscustomobject]@{ Name = 'flannel.4096'; Subnets = @([pscustomobject]@{ AddressPrefix = '10.244.1.0/24' }) })
            $run = Invoke-StartScript $h 'kube-proxy-windows.ps1' $environment
            $run.Error.Exception.Message | Should -BeLike '*/var/run/secrets/kubernetes.io/serviceaccount has no token in *hpc*var\run\secrets\kubernetes.io\serviceaccount or *var\run\secrets\kubernetes.io\serviceaccount*'
        } finally {
            Remove-FakeHost $h
        }
    }

    It 'keeps its source VIP across restarts: host-local reserves once' {
        $h = New-KubeProxyHost
        try {
            (Invoke-StartScript $h 'kube-proxy-windows.ps1' $environment).ExitCode | Should -Be 0
            (Invoke-StartScript $h 'kube-proxy-windows.ps1' $environment).ExitCode | Should -Be 0
            ([regex]::Matches((Get-FakeProgramLog $h $hostLocal), '(?m)^ADD ')).Count | Should -Be 1
            ([regex]::Matches((Get-FakeProgramLog $h 'C:\k\kube-proxy.exe'), '--source-vip=10\.244\.1\.2')).Count | Should -Be 2
        } finally {
            Remove-FakeHost $h
        }
    }

    It 'releases the reservation of a lost source VIP file before it reserves again (host-local refuses a second ADD)' {
        $h = New-KubeProxyHost
        Set-HostLocalReservation $h $hostLocal 'flannel.4096' '10.244.1.2' 'kube-proxy-source-vip'
        Set-HostLocalReservation $h $hostLocal 'flannel.4096' '10.244.1.3' 'a-pod' 'eth0'
        try {
            $run = Invoke-StartScript $h 'kube-proxy-windows.ps1' $environment
            $run.Error | Should -BeNullOrEmpty
            $calls = @((Get-FakeProgramLog $h $hostLocal) -split "`r?`n" | Where-Object { $_ -match '^(ADD|DEL) ' })
            ($calls -join ', ') | Should -Be 'DEL kube-proxy-source-vip none, ADD kube-proxy-source-vip none'
            (@(Get-HostLocalReservations $h $hostLocal 'flannel.4096') -join ', ') | Should -Be '10.244.1.2 kube-proxy-source-vip, 10.244.1.3 a-pod'
            Get-SourceVipArg $h | Should -Be '10.244.1.2'
        } finally {
            Remove-FakeHost $h
        }
    }

    It 'releases a source VIP outside the network''s subnet (a rejoin with another pod subnet) and reserves one inside' {
        $h = New-KubeProxyHost -Subnet '10.244.3.0/24'
        $dir = ConvertTo-HostPath $h $state
        New-Item -ItemType Directory -Force -Path $dir | Out-Null
        [IO.File]::WriteAllText((Join-Path $dir 'sourceVip.json'), '{"cniVersion":"0.3.0","ips":[{"version":"4","address":"10.244.1.2/24","gateway":"10.244.1.1"}],"dns":{}}')
        Set-HostLocalReservation $h $hostLocal 'flannel.4096' '10.244.1.2' 'kube-proxy-source-vip'
        try {
            $run = Invoke-StartScript $h 'kube-proxy-windows.ps1' $environment
            $run.Error | Should -BeNullOrEmpty
            $run.Output | Should -Contain 'the source VIP 10.244.1.2 is not in the network''s subnet 10.244.3.0/24: reserving a new one'
            (@(Get-HostLocalReservations $h $hostLocal 'flannel.4096') -join ', ') | Should -Be '10.244.3.2 kube-proxy-source-vip'
            Get-SourceVipArg $h | Should -Be '10.244.3.2'
            [IO.File]::ReadAllText((Join-Path $dir 'sourceVip.json')) | Should -BeLike '*10.244.3.2/24*'
        } finally {
            Remove-FakeHost $h
        }
    }

    It 'reserves anew when the source VIP file does not parse' {
        $h = New-KubeProxyHost
        $dir = ConvertTo-HostPath $h $state
        New-Item -ItemType Directory -Force -Path $dir | Out-Null
        [IO.File]::WriteAllText((Join-Path $dir 'sourceVip.json'), '{"cniVersion":')
        try {
            $run = Invoke-StartScript $h 'kube-proxy-windows.ps1' $environment
            $run.Error | Should -BeNullOrEmpty
            Get-SourceVipArg $h | Should -Be '10.244.1.2'
        } finally {
            Remove-FakeHost $h
        }
    }

    It 'fails, naming the subnet and host-local''s error, when host-local cannot reserve an address' {
        $h = New-KubeProxyHost -Subnet '10.244.1.0/30'
        Set-HostLocalReservation $h $hostLocal 'flannel.4096' '10.244.1.2' 'a-pod' 'eth0'
        try {
            $run = Invoke-StartScript $h 'kube-proxy-windows.ps1' $environment
            $run.Error.Exception.Message | Should -BeLike '*host-local ADD for the source VIP in 10.244.1.0/30 failed*no IP addresses available*'
            Get-FakeProgramLog $h 'C:\k\kube-proxy.exe' | Should -BeNullOrEmpty
            Test-Path -LiteralPath (Join-Path (ConvertTo-HostPath $h $state) 'sourceVip.json') | Should -BeFalse
        } finally {
            Remove-FakeHost $h
        }
    }

    It 'removes the HNS policies an earlier kube-proxy left' {
        $h = New-KubeProxyHost
        $h.Policies = $true
        try {
            (Invoke-StartScript $h 'kube-proxy-windows.ps1' $environment).ExitCode | Should -Be 0
            $h.Removed | Should -Contain 'policy-1'
        } finally {
            Remove-FakeHost $h
        }
    }

    It 'waits for flannel''s network before it starts' {
        $h = New-KubeProxyHost -NoNetwork
        try {
            $run = Invoke-StartScript $h 'kube-proxy-windows.ps1' $environment
            $run.Output | Should -Contain 'waiting for the HNS network flannel.4096'
            $run.Error.Exception.Message | Should -BeLike '*the script waited*'
            Get-FakeProgramLog $h 'C:\k\kube-proxy.exe' | Should -BeNullOrEmpty
        } finally {
            Remove-FakeHost $h
        }
    }

    It 'ends with kube-proxy''s exit code' {
        $h = New-KubeProxyHost -KubeProxyExit 3
        try {
            (Invoke-StartScript $h 'kube-proxy-windows.ps1' $environment).ExitCode | Should -Be 3
        } finally {
            Remove-FakeHost $h
        }
    }
}
