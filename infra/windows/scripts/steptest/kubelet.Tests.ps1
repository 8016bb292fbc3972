# Pester tests of kubelet.ps1: it parses, and on a fake machine it does what
# each case of kubelet.json says (see StepTest.ps1).
BeforeDiscovery {
    . (Join-Path $PSScriptRoot 'StepTest.ps1')
    $cases = @(Get-StepCases -Step 'kubelet')
    $cutCases = @(Get-StepCases -Step 'kubelet' -Cut)
}

Describe 'kubelet.ps1' {
    BeforeAll {
        . (Join-Path (Split-Path -Parent $PSScriptRoot) 'lib.ps1')
        . (Join-Path $PSScriptRoot 'StepTest.ps1')
    }

    It 'parses with PowerShell''s parser, alone and as the harness renders it' {
        Test-StepScriptParses -Step 'kubelet'
    }

    It '<Name>' -ForEach $cases {
        Invoke-StepCase -Step 'kubelet' -Index $Index
    }

    # The service control manager keeps its own copy of the command line:
    # the step changes it through Win32_Service.Change, never the registry,
    # and the restarted kubelet runs the new one.
    It 'changes a running kubelet''s command line through the service control manager, and restarts it' {
        $data = Get-StepData 'kubelet'
        $index = [array]::IndexOf(@($data.cases | ForEach-Object { $_.name -like 'joined, the kubelet running with another command line*' }), $true)
        $case = $data.cases[$index]
        $m = New-FakeMachine
        try {
            $raw = Get-CaseParams $data $case
            $given = Expand-Facts $case.given $raw $m
            foreach ($k in $given.Keys) { Set-FakeFact $m $k $given[$k] }
            $params = [ordered]@{}
            foreach ($k in $raw.Keys) { $params[$k] = ConvertTo-MachinePath $m ([string]$raw[$k]) }
            $old = Get-FakeFact $m 'service-command:kubelet'
            $run = Invoke-Step -Step 'kubelet' -Params $params -Machine $m
            $binPath = (Get-StatusLine $run 'kubelet').Status.binPath
            $m.Actions | Should -Contain 'Win32_Service.Change kubelet'
            $m.Actions | Should -Contain 'Restart-Service kubelet'
            @($m.Actions | Where-Object { $_ -like 'Set-ItemProperty*' }) | Should -BeNullOrEmpty
            Get-FakeFact $m 'service-process:kubelet' | Should -BeExactly $binPath
            $binPath | Should -Not -Be $old
        } finally {
            Remove-FakeMachine $m
        }
    }

    # lib.ps1's Get-KubeletCommandLine for real: kubeadm's flags take the
    # place of the same flags, the others go at the end.
    It 'Get-KubeletCommandLine puts kubeadm-flags.env''s flags on the command line' {
        $dir = Join-Path ([IO.Path]::GetTempPath()) ('wc-flags-' + [guid]::NewGuid().ToString('N'))
        New-Item -ItemType Directory -Path $dir | Out-Null
        try {
            $file = Join-Path $dir 'kubeadm-flags.env'
            Get-KubeletCommandLine -Command 'kubelet.exe --v=2' -NodeName 'win-a' -NodeIP '' -FlagsFile $file | Should -BeExactly 'kubelet.exe --v=2 --hostname-override=win-a'
            [IO.File]::WriteAllText($file, 'KUBELET_KUBEADM_ARGS="--hostname-override=win-a --register-with-taints=os=windows:NoSchedule --node-ip=10.0.0.2 --v 4"' + "`n")
            Get-KubeletCommandLine -Command 'kubelet.exe --v=2' -NodeName 'win-a' -NodeIP '10.0.0.2' -FlagsFile $file |
                Should -BeExactly 'kubelet.exe --v=4 --hostname-override=win-a --node-ip=10.0.0.2 --register-with-taints=os=windows:NoSchedule'
            { Get-KubeletCommandLine -Command 'kubelet.exe' -NodeName 'win-a' -NodeIP '10.0.0.3' -FlagsFile $file } | Should -Throw '*--node-ip=10.0.0.2*join it again*'
        } finally {
            Remove-Item -LiteralPath $dir -Recurse -Force
        }
    }
}
