# Pester tests of collect-logs.ps1: it parses, and on a fake machine it does what
# each case of collect-logs.json says (see StepTest.ps1).
BeforeDiscovery {
    . (Join-Path $PSScriptRoot 'StepTest.ps1')
    $cases = @(Get-StepCases -Step 'collect-logs')
    $cutCases = @(Get-StepCases -Step 'collect-logs' -Cut)
}

Describe 'collect-logs.ps1' {
    BeforeAll {
        . (Join-Path (Split-Path -Parent $PSScriptRoot) 'lib.ps1')
        . (Join-Path $PSScriptRoot 'StepTest.ps1')
    }

    It 'parses with PowerShell''s parser, alone and as the harness renders it' {
        Test-StepScriptParses -Step 'collect-logs'
    }

    It '<Name>' -ForEach $cases {
        Invoke-StepCase -Step 'collect-logs' -Index $Index
    }
}
