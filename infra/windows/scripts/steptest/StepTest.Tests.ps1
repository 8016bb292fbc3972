# Pester tests of StepTest.ps1 itself: a case the script does not bear out
# fails, and a secret in any output stream fails naming the step.
Describe 'StepTest.ps1' {
    BeforeAll {
        . (Join-Path (Split-Path -Parent $PSScriptRoot) 'lib.ps1')
        . (Join-Path $PSScriptRoot 'StepTest.ps1')
        # The firewall step's cases: 0 adds the rule, 1 finds it there.
        $adds = 0
        $there = 1
    }

    It 'passes the firewall cases as they are' {
        Invoke-StepCase -Step 'firewall' -Index $adds
        Invoke-StepCase -Step 'firewall' -Index $there
    }

    It 'fails a case whose status says no change where the script changes something' {
        $data = Get-StepData 'firewall'
        $data.cases[$adds].changed = $false
        { Invoke-StepCase -Step 'firewall' -Index $adds -Data $data } | Should -Throw
    }

    It 'fails a case that sets another value than the script does' {
        $data = Get-StepData 'firewall'
        $data.cases[$adds].sets.'firewall:{RuleName}' = '{Port}/False'
        { Invoke-StepCase -Step 'firewall' -Index $adds -Data $data } | Should -Throw '*firewall:*'
    }

    It 'fails a case that says nothing changes where the script acts' {
        $data = Get-StepData 'firewall'
        $data.cases[$there].given.'firewall:{RuleName}' = '{Port}/False'
        { Invoke-StepCase -Step 'firewall' -Index $there -Data $data } | Should -Throw
    }

    It 'fails a case whose error the script does not throw' {
        $data = Get-StepData 'kube-proxy'
        $data.cases[0].error = 'some other error'
        { Invoke-StepCase -Step 'kube-proxy' -Index 0 -Data $data } | Should -Throw '*some other error*'
    }

    It 'fails a run that printed a secret parameter, naming the step and the parameter' {
        $data = [pscustomobject]@{ secrets = @('Token') }
        $params = @{ Token = 'abcdef.0123456789abcdef' }
        foreach ($where in @('output', 'error')) {
            $run = [pscustomobject]@{ All = @('[preflight] ok') }
            if ($where -eq 'output') { $run.All += 'kubeadm join --token abcdef.0123456789abcdef' } else { $run.All += 'At line:3 char:1 + ... abcdef.0123456789abcdef' }
            { Assert-NoSecret -Step 'kubeadm-join' -Data $data -Params $params -Run $run } | Should -Throw '*step kubeadm-join*secret parameter Token*'
        }
        $clean = [pscustomobject]@{ All = @('[preflight] ok', 'This node has joined the cluster') }
        { Assert-NoSecret -Step 'kubeadm-join' -Data $data -Params $params -Run $clean } | Should -Not -Throw
    }

    It 'moves C:\ paths to the fake machine once' {
        $m = New-FakeMachine
        try {
            $moved = ConvertTo-MachinePath $m 'C:\k\kubelet.exe and C:\etc'
            $moved | Should -Be ($m.Root + '\k\kubelet.exe and ' + $m.Root + '\etc')
            ConvertTo-MachinePath $m $moved | Should -Be $moved
        } finally {
            Remove-FakeMachine $m
        }
    }

    It 'expands templates as the Go side does' {
        $m = New-FakeMachine
        try {
            $params = [ordered]@{ LogFile = 'C:\var\log\c\c.log'; Port = '10250' }
            Expand-Template 'dir:{LogFile|dir}' $params $m | Should -Be ('dir:' + $m.Root + '\var\log\c')
            Expand-StatusValue '{Port:int}' $params $m | Should -BeExactly 10250
            { Expand-Template '{Missing}' $params $m } | Should -Throw '*no parameter Missing*'
        } finally {
            Remove-FakeMachine $m
        }
    }
}
