# Pester tests of hns-cleanup.ps1: it parses, and on a fake machine it does what
# each case of hns-cleanup.json says (see StepTest.ps1).
BeforeDiscovery {
    . (Join-Path $PSScriptRoot 'StepTest.ps1')
    $cases = @(Get-StepCases -Step 'hns-cleanup')
    $cutCases = @(Get-StepCases -Step 'hns-cleanup' -Cut)
}

Describe 'hns-cleanup.ps1' {
    BeforeAll {
        . (Join-Path (Split-Path -Parent $PSScriptRoot) 'lib.ps1')
        . (Join-Path $PSScriptRoot 'StepTest.ps1')
    }

    It 'parses with PowerShell''s parser, alone and as the harness renders it' {
        Test-StepScriptParses -Step 'hns-cleanup'
    }

    It '<Name>' -ForEach $cases {
        Invoke-StepCase -Step 'hns-cleanup' -Index $Index
    }
}
