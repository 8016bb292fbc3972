# Pester tests of ping.ps1: it parses, and on a fake machine it does what
# each case of ping.json says (see StepTest.ps1).
BeforeDiscovery {
    . (Join-Path $PSScriptRoot 'StepTest.ps1')
    $cases = @(Get-StepCases -Step 'ping')
    $cutCases = @(Get-StepCases -Step 'ping' -Cut)
}

Describe 'ping.ps1' {
    BeforeAll {
        . (Join-Path (Split-Path -Parent $PSScriptRoot) 'lib.ps1')
        . (Join-Path $PSScriptRoot 'StepTest.ps1')
    }

    It 'parses with PowerShell''s parser, alone and as the harness renders it' {
        Test-StepScriptParses -Step 'ping'
    }

    It '<Name>' -ForEach $cases {
        Invoke-StepCase -Step 'ping' -Index $Index
    }
}
