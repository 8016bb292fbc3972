# Pester tests of kube-proxy-windows.ps1, the start script of the
# kube-proxy-windows HostProcess DaemonSet, run for real on a fake host (see
# ManifestTest.ps1).
Describe 'kube-proxy-windows.ps1' {
    BeforeAll {
        . (Join-Path $PSScriptRoot 'ManifestTest.ps1')
        $environment = @{
            NODE_NAME = 'win-2022-a'; KUBE_API_SERVER = '192.0.2.10:6443'; KUBE_NETWORK = 'flannel.4096'
            CLUSTER_CIDR = '10.244.0.0/16'; CNI_BIN_PATH = 'C:\opt\cni\bin'
        }
        $account = 'var\run\secrets\kubernetes.io\serviceaccount'
        # New-KubeProxyHost is a node on which flannel has made its network.
        function New-KubeProxyHost {
            param([int] $HostLocalExit = 0, [int] $KubeProxyExit = 0, [switch] $NoNetwork)
            $h = New-FakeHost
            if (-not $NoNetwork) {
                $h.Networks.Add([pscustomobject]@{ Name = 'flannel.4096'; Subnets = @([pscustomobject]@{ AddressPrefix = '10.244.1.0/24' }) })
            }
            Set-SandboxFile $h "$account\ca.crt" 'the cluster CA'
            Set-SandboxFile $h "$account\token" 'a service account token'
            Add-FakeProgram $h 'C:\k\kube-proxy.exe' -Exit $KubeProxyExit | Out-Null
            Add-FakeProgram $h 'C:\opt\cni\bin\host-local.exe' -Exit $HostLocalExit -ReadsStdin -Out '{"cniVersion":"0.3.0","ips":[{"version":"4","address":"10.244.1.2/24"}]}' | Out-Null
            $h
        }
    }

    It 'parses with PowerShell''s parser' {
        $tokens = $null
        $errors = $null
        [void][System.Management.Automation.Language.Parser]::ParseFile((Join-Path $PSScriptRoot 'kube-proxy-windows.ps1'), [ref]$tokens, [ref]$errors)
        (@($errors | ForEach-Object { '{0}: {1}' -f $_.Extent.StartLineNumber, $_.Message }) -join "`n") | Should -BeNullOrEmpty
    }

    It 'reserves a source VIP with host-local and starts kube-proxy in kernel-space mode with it' {
        $h = New-KubeProxyHost
        try {
            $run = Invoke-StartScript $h 'kube-proxy-windows.ps1' $environment
            $run.Error | Should -BeNullOrEmpty
            $run.ExitCode | Should -Be 0
            $request = Get-FakeProgramLog $h 'C:\opt\cni\bin\host-local.exe'
            $request | Should -Match '"subnet": "10\.244\.1\.0/24"'
            $request | Should -Match '"name": "flannel\.4096"'
            $dir = ConvertTo-HostPath $h 'C:\var\lib\kube-proxy-windows'
            Test-Path -LiteralPath (Join-Path $dir 'sourceVip.json') | Should -BeTrue
            $kubeProxy = Get-FakeProgramLog $h 'C:\k\kube-proxy.exe'
            foreach ($arg in @('--hostname-override=win-2022-a', '--proxy-mode=kernelspace', '--network-name=flannel.4096', '--source-vip=10.244.1.2',
                    '--enable-dsr=false', '--cluster-cidr=10.244.0.0/16', ('--kubeconfig=' + (Join-Path $dir 'kubeconfig.conf')), '--v=2')) {
                $kubeProxy | Should -BeLike "*$arg*"
            }
            $run.Output | Should -Contain ('starting ' + (ConvertTo-HostPath $h 'C:\k\kube-proxy.exe') + ' ' + ($kubeProxy -split "`r?`n")[0])
            $kubeconfig = [IO.File]::ReadAllText((Join-Path $dir 'kubeconfig.conf'))
            $kubeconfig | Should -BeLike '*server: https://192.0.2.10:6443*'
            $kubeconfig | Should -BeLike ("*certificate-authority: '" + (Join-Path $h.Sandbox "$account\ca.crt") + "'*")
            $kubeconfig | Should -BeLike ("*tokenFile: '" + (Join-Path $h.Sandbox "$account\token") + "'*")
            foreach ($var in 'CNI_COMMAND', 'CNI_CONTAINERID', 'CNI_NETNS', 'CNI_IFNAME', 'CNI_PATH') {
                [Environment]::GetEnvironmentVariable($var) | Should -BeNullOrEmpty -Because "the script removes $var after host-local ran"
            }
        } finally {
            Remove-FakeHost $h
        }
    }

    It 'keeps its source VIP across restarts: host-local runs once' {
        $h = New-KubeProxyHost
        try {
            (Invoke-StartScript $h 'kube-proxy-windows.ps1' $environment).ExitCode | Should -Be 0
            (Invoke-StartScript $h 'kube-proxy-windows.ps1' $environment).ExitCode | Should -Be 0
            ([regex]::Matches((Get-FakeProgramLog $h 'C:\opt\cni\bin\host-local.exe'), '"ipam"')).Count | Should -Be 1
            ([regex]::Matches((Get-FakeProgramLog $h 'C:\k\kube-proxy.exe'), '--source-vip=10\.244\.1\.2')).Count | Should -Be 2
        } finally {
            Remove-FakeHost $h
        }
    }

    It 'fails, naming the subnet, when host-local cannot reserve an address' {
        $h = New-KubeProxyHost -HostLocalExit 1
        try {
            $run = Invoke-StartScript $h 'kube-proxy-windows.ps1' $environment
            $run.Error.Exception.Message | Should -BeLike '*host-local could not reserve a source VIP in 10.244.1.0/24*'
            Get-FakeProgramLog $h 'C:\k\kube-proxy.exe' | Should -BeNullOrEmpty
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
