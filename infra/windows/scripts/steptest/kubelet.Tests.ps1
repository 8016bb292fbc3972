# Pester tests of kubelet.ps1: it parses, and on a fake machine it does what
# each case of kubelet.json says (see StepTest.ps1).
BeforeDiscovery {
    . (Join-Path $PSScriptRoot 'StepTest.ps1')
    $cases = @(Get-StepCases -Step 'kubelet')
    $cutCases = @(Get-StepCases -Step 'kubelet' -Cut)
}

Describe 'kubelet.ps1' {
    BeforeAll {
        . (Join-Path (Split-Path -Parent $PSScriptRoot) 'lib.ps1')
        . (Join-Path $PSScriptRoot 'StepTest.ps1')
    }

    It 'parses with PowerShell''s parser, alone and as the harness renders it' {
        Test-StepScriptParses -Step 'kubelet'
    }

    It '<Name>' -ForEach $cases {
        Invoke-StepCase -Step 'kubelet' -Index $Index
    }
}
