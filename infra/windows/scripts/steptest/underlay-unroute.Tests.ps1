# Pester tests of underlay-unroute.ps1: it parses, and on a fake machine it does what
# each case of underlay-unroute.json says (see StepTest.ps1).
BeforeDiscovery {
    . (Join-Path $PSScriptRoot 'StepTest.ps1')
    $cases = @(Get-StepCases -Step 'underlay-unroute')
}

Describe 'underlay-unroute.ps1' {
    BeforeAll {
        . (Join-Path (Split-Path -Parent $PSScriptRoot) 'lib.ps1')
        . (Join-Path $PSScriptRoot 'StepTest.ps1')
    }

    It 'parses with PowerShell''s parser, alone and as the harness renders it' {
        Test-StepScriptParses -Step 'underlay-unroute'
    }

    It '<Name>' -ForEach $cases {
        Invoke-StepCase -Step 'underlay-unroute' -Index $Index
    }
}
