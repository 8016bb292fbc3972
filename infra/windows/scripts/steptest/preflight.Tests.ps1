# Pester tests of preflight.ps1: it parses, and on a fake machine it does what
# each case of preflight.json says (see StepTest.ps1).
BeforeDiscovery {
    . (Join-Path $PSScriptRoot 'StepTest.ps1')
    $cases = @(Get-StepCases -Step 'preflight')
    $cutCases = @(Get-StepCases -Step 'preflight' -Cut)
}

Describe 'preflight.ps1' {
    BeforeAll {
        . (Join-Path (Split-Path -Parent $PSScriptRoot) 'lib.ps1')
        . (Join-Path $PSScriptRoot 'StepTest.ps1')
    }

    It 'parses with PowerShell''s parser, alone and as the harness renders it' {
        Test-StepScriptParses -Step 'preflight'
    }

    It '<Name>' -ForEach $cases {
        Invoke-StepCase -Step 'preflight' -Index $Index
    }
}
