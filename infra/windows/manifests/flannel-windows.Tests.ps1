# Pester tests of flannel-windows.ps1, the start script of the
# kube-flannel-ds-windows HostProcess DaemonSet, run for real on a fake host
# (see ManifestTest.ps1): the pod's volumes where containerd 1.6 and 1.7/2.x
# put them, read-only on 1.7, and a machine with two NICs, each with a
# default route. kubeadm-flags.env is written as kubeadm writes it
# (cmd/kubeadm/app/phases/kubelet/flags.go: KUBELET_KUBEADM_ARGS="--name=value
# ..."); the Go side checks that form against kubeadm's own writer
# (infra/windows/startscript_test.go).
Describe 'flannel-windows.ps1' {
    BeforeAll {
        . (Join-Path $PSScriptRoot 'ManifestTest.ps1')
        $environment = @{ NODE_NAME = 'win-2022-a'; KUBE_API_SERVER = '192.0.2.10:6443'; KUBE_NETWORK = 'flannel.4096'; CNI_CONF_DIR = 'C:\etc\cni\net.d' }
        $cniConf = '{"name":"flannel.4096","cniVersion":"0.3.0","type":"flannel","delegate":{"type":"win-overlay"}}'
        $netConf = '{"Network":"10.244.0.0/16","Backend":{"Type":"vxlan","VNI":4096,"Port":4789}}'
        $state = 'C:\winconform\node\flannel'
        function New-FlannelHost {
            param([string] $Layout = 'containerd-1.7', [int] $FlanneldExit = 0, [switch] $WithExternal, [string] $KubeadmFlags = '')
            $h = New-FakeHost -Layout $Layout
            if ($WithExternal) { $h.Networks.Add([pscustomobject]@{ Name = 'External'; Subnets = @() }) }
            Add-FakeMount $h '/var/run/secrets/kubernetes.io/serviceaccount' @{ 'ca.crt' = 'the cluster CA'; token = 'a service account token'; namespace = 'kube-flannel' }
            Add-FakeMount $h '/etc/kube-flannel' @{ 'net-conf.json' = $netConf; 'cni-conf.json' = 'the Linux nodes'' CNI configuration' }
            Add-FakeMount $h '/etc/kube-flannel-windows' @{ 'cni-conf.json' = $cniConf; 'run.ps1' = 'the start script' }
            if ($KubeadmFlags -ne '') {
                $file = ConvertTo-HostPath $h 'C:\var\lib\kubelet\kubeadm-flags.env'
                New-Item -ItemType Directory -Force -Path (Split-Path -Parent $file) | Out-Null
                [IO.File]::WriteAllText($file, $KubeadmFlags + "`n")
            }
            Add-FakeProgram $h 'C:\k\flanneld.exe' -Exit $FlanneldExit | Out-Null
            [WinconformTest.FakeHns]::Reset()
            [WinconformTest.FakeHns]::Answer = '{"Success":true}'
            $h
        }
        function Get-ExternalAdapter {
            $calls = @([WinconformTest.FakeHns]::Calls)
            if ($calls.Count -ne 1) { return "$($calls.Count) HNS calls" }
            (ConvertFrom-Json -InputObject $calls[0].Substring('POST /networks '.Length)).NetworkAdapterName
        }
    }

    It 'parses with PowerShell''s parser' {
        $tokens = $null
        $errors = $null
        [void][System.Management.Automation.Language.Parser]::ParseFile((Join-Path $PSScriptRoot 'flannel-windows.ps1'), [ref]$tokens, [ref]$errors)
        (@($errors | ForEach-Object { '{0}: {1}' -f $_.Extent.StartLineNumber, $_.Message }) -join "`n") | Should -BeNullOrEmpty
    }

    It 'on <Layout>: makes the External network on the default route''s adapter, writes the CNI configuration, keeps its state out of the pod''s volumes and starts flanneld' -ForEach @(
        @{ Layout = 'containerd-1.6' }, @{ Layout = 'containerd-1.7' }
    ) {
        $h = New-FlannelHost -Layout $Layout
        try {
            $run = Invoke-StartScript $h 'flannel-windows.ps1' $environment
            $run.Error | Should -BeNullOrEmpty
            $run.ExitCode | Should -Be 0
            (@(Get-ChangedMounts $h) -join ', ') | Should -BeNullOrEmpty -Because 'the pod''s volumes are read-only'
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
            $dir = ConvertTo-HostPath $h $state
            $flanneld = Get-FakeProgramLog $h 'C:\k\flanneld.exe'
            foreach ($arg in @('--kube-subnet-mgr', ('--kubeconfig-file=' + (Join-Path $dir 'kubeconfig.conf')), '--iface=10.1.0.4')) {
                $flanneld | Should -BeLike "*$arg*"
            }
            $flanneld -match '--net-config-path=(\S+)' | Should -BeTrue
            [IO.File]::ReadAllText($Matches[1]) | Should -BeExactly $netConf
            $kubeconfig = [IO.File]::ReadAllText((Join-Path $dir 'kubeconfig.conf'))
            $kubeconfig | Should -BeLike '*server: https://192.0.2.10:6443*'
            $kubeconfig -match "tokenFile: '([^']+)'" | Should -BeTrue
            [IO.File]::ReadAllText($Matches[1]) | Should -Be 'a service account token'
        } finally {
            Remove-FakeHost $h
        }
    }

    It 'takes the route of the lowest route plus interface metric when kubeadm named no --node-ip' {
        $h = New-FlannelHost -KubeadmFlags 'KUBELET_KUBEADM_ARGS="--container-runtime-endpoint=npipe:////./pipe/containerd-containerd --pod-infra-container-image=registry.k8s.io/pause:3.10.1"'
        # Ethernet 2's route has the lower route metric, Ethernet 3's the lower sum.
        $h.Interfaces[0].InterfaceMetric = 50
        $h.Interfaces[1].RouteMetric = 10
        $h.Interfaces[1].InterfaceMetric = 5
        try {
            $run = Invoke-StartScript $h 'flannel-windows.ps1' $environment
            $run.Error | Should -BeNullOrEmpty
            Get-FakeProgramLog $h 'C:\k\flanneld.exe' | Should -BeLike '*--iface=10.2.0.4*'
            Get-ExternalAdapter | Should -Be 'Ethernet 3'
        } finally {
            Remove-FakeHost $h
        }
    }

    It 'uses the --node-ip kubeadm gave the kubelet, and its interface, over the default route: <Flags>' -ForEach @(
        @{ Flags = 'KUBELET_KUBEADM_ARGS="--container-runtime-endpoint=npipe:////./pipe/containerd-containerd --node-ip=10.2.0.4 --pod-infra-container-image=registry.k8s.io/pause:3.10.1"' }
        @{ Flags = 'KUBELET_KUBEADM_ARGS="--node-ip=10.2.0.4"' }
        @{ Flags = 'KUBELET_KUBEADM_ARGS="--node-ip=10.2.0.4,fd00:10:2::4"' }
    ) {
        $h = New-FlannelHost -KubeadmFlags $Flags
        try {
            $run = Invoke-StartScript $h 'flannel-windows.ps1' $environment
            $run.Error | Should -BeNullOrEmpty
            Get-FakeProgramLog $h 'C:\k\flanneld.exe' | Should -BeLike '*--iface=10.2.0.4*'
            Get-ExternalAdapter | Should -Be 'Ethernet 3'
        } finally {
            Remove-FakeHost $h
        }
    }

    It 'fails, naming the address, when kubeadm''s --node-ip is on no interface of the machine' {
        $h = New-FlannelHost -KubeadmFlags 'KUBELET_KUBEADM_ARGS="--node-ip=10.9.9.9"'
        try {
            $run = Invoke-StartScript $h 'flannel-windows.ps1' $environment
            $run.Error.Exception.Message | Should -BeLike '*kubeadm-flags.env names --node-ip=10.9.9.9, which is on no interface of this machine*'
            @([WinconformTest.FakeHns]::Calls).Count | Should -Be 0
            Get-FakeProgramLog $h 'C:\k\flanneld.exe' | Should -BeNullOrEmpty
        } finally {
            Remove-FakeHost $h
        }
    }

    It 'fails when kubeadm''s --node-ip has no IPv4 address' {
        $h = New-FlannelHost -KubeadmFlags 'KUBELET_KUBEADM_ARGS="--node-ip=fd00:10:2::4"'
        try {
            $run = Invoke-StartScript $h 'flannel-windows.ps1' $environment
            $run.Error.Exception.Message | Should -BeLike '*--node-ip=fd00:10:2::4, which has no IPv4 address*'
            Get-FakeProgramLog $h 'C:\k\flanneld.exe' | Should -BeNullOrEmpty
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
