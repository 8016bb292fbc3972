# Pester tests of containerd.ps1: it parses, and on a fake machine it does what
# each case of containerd.json says (see StepTest.ps1).
BeforeDiscovery {
    . (Join-Path $PSScriptRoot 'StepTest.ps1')
    $cases = @(Get-StepCases -Step 'containerd')
    $cutCases = @(Get-StepCases -Step 'containerd' -Cut)
}

Describe 'containerd.ps1' {
    BeforeAll {
        . (Join-Path (Split-Path -Parent $PSScriptRoot) 'lib.ps1')
        . (Join-Path $PSScriptRoot 'StepTest.ps1')
    }

    It 'parses with PowerShell''s parser, alone and as the harness renders it' {
        Test-StepScriptParses -Step 'containerd'
    }

    It '<Name>' -ForEach $cases {
        Invoke-StepCase -Step 'containerd' -Index $Index
    }

    It '<Name> (cut short)' -ForEach $cutCases {
        Invoke-StepCase -Step 'containerd' -Index $Index -Cut
    }
}
