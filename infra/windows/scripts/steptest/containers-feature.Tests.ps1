# Pester tests of containers-feature.ps1: it parses, and on a fake machine it does what
# each case of containers-feature.json says (see StepTest.ps1).
BeforeDiscovery {
    . (Join-Path $PSScriptRoot 'StepTest.ps1')
    $cases = @(Get-StepCases -Step 'containers-feature')
    $cutCases = @(Get-StepCases -Step 'containers-feature' -Cut)
}

Describe 'containers-feature.ps1' {
    BeforeAll {
        . (Join-Path (Split-Path -Parent $PSScriptRoot) 'lib.ps1')
        . (Join-Path $PSScriptRoot 'StepTest.ps1')
    }

    It 'parses with PowerShell''s parser, alone and as the harness renders it' {
        Test-StepScriptParses -Step 'containers-feature'
    }

    It '<Name>' -ForEach $cases {
        Invoke-StepCase -Step 'containers-feature' -Index $Index
    }
}
