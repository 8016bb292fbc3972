# Pester tests of flannel-windows.ps1, the start script of the
# kube-flannel-ds-windows HostProcess DaemonSet, run for real on a fake host
# (see ManifestTest.ps1).
Describe 'flannel-windows.ps1' {
    BeforeAll {
        . (Join-Path $PSScriptRoot 'ManifestTest.ps1')
        $environment = @{ NODE_NAME = 'win-2022-a'; KUBE_API_SERVER = '192.0.2.10:6443'; KUBE_NETWORK = 'flannel.4096'; CNI_CONF_DIR = 'C:\etc\cni\net.d' }
        $cniConf = '{"name":"flannel.4096","cniVersion":"0.3.0","type":"flannel","delegate":{"type":"win-overlay"}}'
        function New-FlannelHost {
            param([int] $FlanneldExit = 0, [switch] $WithExternal)
            $h = New-FakeHost
            if ($WithExternal) { $h.Networks.Add([pscustomobject]@{ Name = 'External'; Subnets = @() }) }
            Set-SandboxFile $h 'var\run\secrets\kubernetes.io\serviceaccount\ca.crt' 'the cluster CA'
            Set-SandboxFile $h 'var\run\secrets\kubernetes.io\serviceaccount\token' 'a service account token'
            Set-SandboxFile $h 'etc\kube-flannel\net-conf.json' '{"Network":"10.244.0.0/16","Backend":{"Type":"vxlan","VNI":4096,"Port":4789}}'
            Set-SandboxFile $h 'etc\kube-flannel-windows\cni-conf.json' $cniConf
            Add-FakeProgram $h 'C:\k\flanneld.exe' -Exit $FlanneldExit | Out-Null
            [WinconformTest.FakeHns]::Reset()
            [WinconformTest.FakeHns]::Answer = '{"Success":true}'
            $h
        }
    }

    It 'parses with PowerShell''s parser' {
        $tokens = $null
        $errors = $null
        [void][System.Management.Automation.Language.Parser]::ParseFile((Join-Path $PSScriptRoot 'flannel-windows.ps1'), [ref]$tokens, [ref]$errors)
        (@($errors | ForEach-Object { '{0}: {1}' -f $_.Extent.StartLineNumber, $_.Message }) -join "`n") | Should -BeNullOrEmpty
    }

    It 'makes the External network on the default route''s adapter, writes the CNI configuration and starts flanneld' {
        $h = New-FlannelHost
        try {
            $run = Invoke-StartScript $h 'flannel-windows.ps1' $environment
            $run.Error | Should -BeNullOrEmpty
            $run.ExitCode | Should -Be 0
            $calls = @([WinconformTest.FakeHns]::Calls)
            $calls.Count | Should -Be 1
            $calls[0] | Should -BeLike 'POST /networks *'
            $request = ConvertFrom-Json -InputObject $calls[0].Substring('POST /networks '.Length)
            $request.Type | Should -Be 'Overlay'
            $request.Name | Should -Be 'External'
            $request.NetworkAdapterName | Should -Be 'Ethernet 2'
            $request.Subnets[0].AddressPrefix | Should -Be '192.168.255.0/30'
            $request.Subnets[0].Policies[0].VSID | Should -Be 9999
            [IO.File]::ReadAllText((ConvertTo-HostPath $h 'C:\etc\cni\net.d\10-flannel.conf')) | Should -BeExactly $cniConf
            Test-Path -LiteralPath (ConvertTo-HostPath $h 'C:\run\flannel') | Should -BeTrue
            $dir = ConvertTo-HostPath $h 'C:\var\lib\flannel-windows'
            $flanneld = Get-FakeProgramLog $h 'C:\k\flanneld.exe'
            foreach ($arg in @('--kube-subnet-mgr', ('--kubeconfig-file=' + (Join-Path $dir 'kubeconfig.conf')), '--iface=10.1.0.4',
                    ('--net-config-path=' + (Join-Path $h.Sandbox 'etc\kube-flannel\net-conf.json')))) {
                $flanneld | Should -BeLike "*$arg*"
            }
            [IO.File]::ReadAllText((Join-Path $dir 'kubeconfig.conf')) | Should -BeLike '*server: https://192.0.2.10:6443*'
        } finally {
            Remove-FakeHost $h
        }
    }

    It 'leaves an existing External network alone' {
        $h = New-FlannelHost -WithExternal
        try {
            (Invoke-StartScript $h 'flannel-windows.ps1' $environment).ExitCode | Should -Be 0
            @([WinconformTest.FakeHns]::Calls).Count | Should -Be 0
            Get-FakeProgramLog $h 'C:\k\flanneld.exe' | Should -BeLike '*--kube-subnet-mgr*'
        } finally {
            Remove-FakeHost $h
        }
    }

    It 'fails, with HNS''s error, when HNS refuses the network' {
        $h = New-FlannelHost
        [WinconformTest.FakeHns]::Answer = '{"Success":false,"Error":"the adapter is busy"}'
        try {
            $run = Invoke-StartScript $h 'flannel-windows.ps1' $environment
            $run.Error.Exception.Message | Should -BeLike '*creating the External HNS network: the adapter is busy*'
            Get-FakeProgramLog $h 'C:\k\flanneld.exe' | Should -BeNullOrEmpty
        } finally {
            [WinconformTest.FakeHns]::Answer = '{"Success":true}'
            Remove-FakeHost $h
        }
    }

    It 'ends with flanneld''s exit code' {
        $h = New-FlannelHost -FlanneldExit 2
        try {
            (Invoke-StartScript $h 'flannel-windows.ps1' $environment).ExitCode | Should -Be 2
        } finally {
            Remove-FakeHost $h
        }
    }
}
