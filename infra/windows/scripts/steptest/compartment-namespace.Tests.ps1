# Pester tests of compartment-namespace.ps1: it parses, and on a fake machine it does what
# each case of compartment-namespace.json says (see StepTest.ps1).
BeforeDiscovery {
    . (Join-Path $PSScriptRoot 'StepTest.ps1')
    $cases = @(Get-StepCases -Step 'compartment-namespace')
}

Describe 'compartment-namespace.ps1' {
    BeforeAll {
        . (Join-Path (Split-Path -Parent $PSScriptRoot) 'lib.ps1')
        . (Join-Path $PSScriptRoot 'StepTest.ps1')
    }

    It 'parses with PowerShell''s parser, alone and as the harness renders it' {
        Test-StepScriptParses -Step 'compartment-namespace'
    }

    It '<Name>' -ForEach $cases {
        Invoke-StepCase -Step 'compartment-namespace' -Index $Index
    }
}
