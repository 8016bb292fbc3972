# Pester tests of kubeadm-join.ps1: it parses, and on a fake machine it does what
# each case of kubeadm-join.json says (see StepTest.ps1).
BeforeDiscovery {
    . (Join-Path $PSScriptRoot 'StepTest.ps1')
    $cases = @(Get-StepCases -Step 'kubeadm-join')
    $cutCases = @(Get-StepCases -Step 'kubeadm-join' -Cut)
}

Describe 'kubeadm-join.ps1' {
    BeforeAll {
        . (Join-Path (Split-Path -Parent $PSScriptRoot) 'lib.ps1')
        . (Join-Path $PSScriptRoot 'StepTest.ps1')
    }

    It 'parses with PowerShell''s parser, alone and as the harness renders it' {
        Test-StepScriptParses -Step 'kubeadm-join'
    }

    It '<Name>' -ForEach $cases {
        Invoke-StepCase -Step 'kubeadm-join' -Index $Index
    }

    # The premise of the PATH the cases refresh: without Update-SessionPath
    # the step runs kubeadm with the PATH the WinRM shell inherited, where
    # the kubelet's directory is not, and kubeadm's preflight fails
    # (KubeletVersionCheck runs kubelet --version by name).
    It 'fails to join when it does not refresh its PATH (kubeadm''s preflight cannot run the kubelet)' {
        function Update-SessionPath { }
        $data = Get-StepData 'kubeadm-join'
        $index = [array]::IndexOf(@($data.cases | ForEach-Object { [bool](Get-Field $_ 'refreshesPath' $false) -and (Get-Field (Get-Field $_ 'world') 'kubeadm:join') -eq 'ok' }), $true)
        { Invoke-StepCase -Step 'kubeadm-join' -Index $index -Data $data } | Should -Throw
    }

    It 'writes kubeadm''s node address into a v1beta4 JoinConfiguration, and removes it with the token after the join' {
        $data = Get-StepData 'kubeadm-join'
        $index = [array]::IndexOf(@($data.cases | ForEach-Object { (Get-Field (Get-Field $_ 'world') 'kubeadm:join') -eq 'ok' -and $null -eq (Get-Field (Get-Field $_ 'params') 'NodeIP') }), $true)
        $m = New-FakeMachine
        $saved = $env:Path
        try {
            $raw = Get-CaseParams $data $data.cases[$index]
            $given = Expand-Facts $data.cases[$index].given $raw $m
            foreach ($k in $given.Keys) { Set-FakeFact $m $k $given[$k] }
            $params = [ordered]@{}
            foreach ($k in $raw.Keys) { $params[$k] = ConvertTo-MachinePath $m ([string]$raw[$k]) }
            $run = Invoke-Step -Step 'kubeadm-join' -Params $params -Machine $m
            (Get-StatusLine $run 'kubeadm-join').Status.joined | Should -BeTrue
            $flags = [IO.File]::ReadAllText((ConvertTo-MachinePath $m 'C:\var\lib\kubelet\kubeadm-flags.env'))
            $flags | Should -BeLike ('*--node-ip=' + $raw.NodeIP + '"*')
            Test-Path -LiteralPath (ConvertTo-MachinePath $m 'C:\winconform\join\join.json') | Should -BeFalse -Because 'the configuration holds the token'
        } finally {
            $env:Path = $saved
            Remove-FakeMachine $m
        }
    }

    # lib.ps1's Update-SessionPath for real: the session, and a program it
    # starts, get the machine's PATH, whatever the session had.
    It 'Update-SessionPath gives the session and its programs the machine''s PATH' {
        $saved = $env:Path
        try {
            & {
                . (Join-Path (Split-Path -Parent $PSScriptRoot) 'lib.ps1')
                $env:Path = 'C:\winconform-nowhere'
                Update-SessionPath
            }
            $machine = @([Environment]::GetEnvironmentVariable('Path', 'Machine') -split ';' | Where-Object { $_ -ne '' })
            $session = @($env:Path -split ';')
            $session | Should -Not -Contain 'C:\winconform-nowhere'
            foreach ($dir in $machine) { $session | Should -Contain $dir }
            $child = (& "$env:SystemRoot\System32\cmd.exe" /d /c 'echo %PATH%') -split ';'
            foreach ($dir in $machine) { $child | Should -Contain $dir }
        } finally {
            $env:Path = $saved
        }
    }
}
