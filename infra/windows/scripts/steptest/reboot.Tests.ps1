# Pester tests of reboot.ps1: it parses, and on a fake machine it does what
# each case of reboot.json says (see StepTest.ps1).
BeforeDiscovery {
    . (Join-Path $PSScriptRoot 'StepTest.ps1')
    $cases = @(Get-StepCases -Step 'reboot')
    $cutCases = @(Get-StepCases -Step 'reboot' -Cut)
}

Describe 'reboot.ps1' {
    BeforeAll {
        . (Join-Path (Split-Path -Parent $PSScriptRoot) 'lib.ps1')
        . (Join-Path $PSScriptRoot 'StepTest.ps1')
    }

    It 'parses with PowerShell''s parser, alone and as the harness renders it' {
        Test-StepScriptParses -Step 'reboot'
    }

    It '<Name>' -ForEach $cases {
        Invoke-StepCase -Step 'reboot' -Index $Index
    }
}
