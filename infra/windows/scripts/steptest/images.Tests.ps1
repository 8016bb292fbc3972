# Pester tests of images.ps1: it parses, and on a fake machine it does what
# each case of images.json says (see StepTest.ps1).
BeforeDiscovery {
    . (Join-Path $PSScriptRoot 'StepTest.ps1')
    $cases = @(Get-StepCases -Step 'images')
}

Describe 'images.ps1' {
    BeforeAll {
        . (Join-Path (Split-Path -Parent $PSScriptRoot) 'lib.ps1')
        . (Join-Path $PSScriptRoot 'StepTest.ps1')
    }

    It 'parses with PowerShell''s parser, alone and as the harness renders it' {
        Test-StepScriptParses -Step 'images'
    }

    It '<Name>' -ForEach $cases {
        Invoke-StepCase -Step 'images' -Index $Index
    }
}
