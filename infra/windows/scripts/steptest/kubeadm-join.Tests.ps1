# Pester tests of kubeadm-join.ps1: it parses, and on a fake machine it does what
# each case of kubeadm-join.json says (see StepTest.ps1).
BeforeDiscovery {
    . (Join-Path $PSScriptRoot 'StepTest.ps1')
    $cases = @(Get-StepCases -Step 'kubeadm-join')
    $cutCases = @(Get-StepCases -Step 'kubeadm-join' -Cut)
}

Describe 'kubeadm-join.ps1' {
    BeforeAll {
        . (Join-Path (Split-Path -Parent $PSScriptRoot) 'lib.ps1')
        . (Join-Path $PSScriptRoot 'StepTest.ps1')
    }

    It 'parses with PowerShell''s parser, alone and as the harness renders it' {
        Test-StepScriptParses -Step 'kubeadm-join'
    }

    It '<Name>' -ForEach $cases {
        Invoke-StepCase -Step 'kubeadm-join' -Index $Index
    }
}
