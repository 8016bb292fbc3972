# Pester tests of probe.ps1: it parses, and on a fake machine it does what
# each case of probe.json says (see StepTest.ps1).
BeforeDiscovery {
    . (Join-Path $PSScriptRoot 'StepTest.ps1')
    $cases = @(Get-StepCases -Step 'probe')
    $cutCases = @(Get-StepCases -Step 'probe' -Cut)
}

Describe 'probe.ps1' {
    BeforeAll {
        . (Join-Path (Split-Path -Parent $PSScriptRoot) 'lib.ps1')
        . (Join-Path $PSScriptRoot 'StepTest.ps1')
    }

    It 'parses with PowerShell''s parser, alone and as the harness renders it' {
        Test-StepScriptParses -Step 'probe'
    }

    It '<Name>' -ForEach $cases {
        Invoke-StepCase -Step 'probe' -Index $Index
    }

    It 'reports the SHA-256 of the probe it put in place' {
        $m = New-FakeMachine
        try {
            Set-FakeFact $m (ConvertTo-MachinePath $m 'file:C:\install\probe.exe') 'the probe, built'
            $params = [ordered]@{ Source = (ConvertTo-MachinePath $m 'C:\install\probe.exe'); Destination = (ConvertTo-MachinePath $m 'C:\winconform\probe.exe') }
            $run = Invoke-Step -Step 'probe' -Params $params -Machine $m
            $status = (Get-StatusLine $run 'probe').Status
            $status.sha256 | Should -BeExactly (Get-FileHash -LiteralPath $params.Destination -Algorithm SHA256).Hash.ToLowerInvariant()
        } finally {
            Remove-FakeMachine $m
        }
    }
}
