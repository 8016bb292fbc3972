# Pester tests of kubeadm-reset.ps1: it parses, and on a fake machine it does what
# each case of kubeadm-reset.json says (see StepTest.ps1).
BeforeDiscovery {
    . (Join-Path $PSScriptRoot 'StepTest.ps1')
    $cases = @(Get-StepCases -Step 'kubeadm-reset')
    $cutCases = @(Get-StepCases -Step 'kubeadm-reset' -Cut)
}

Describe 'kubeadm-reset.ps1' {
    BeforeAll {
        . (Join-Path (Split-Path -Parent $PSScriptRoot) 'lib.ps1')
        . (Join-Path $PSScriptRoot 'StepTest.ps1')
    }

    It 'parses with PowerShell''s parser, alone and as the harness renders it' {
        Test-StepScriptParses -Step 'kubeadm-reset'
    }

    It '<Name>' -ForEach $cases {
        Invoke-StepCase -Step 'kubeadm-reset' -Index $Index
    }

    # lib.ps1's Remove-Tree for real, on a directory symbolic link (as the
    # kubelet's pki link): the link goes as a link, its target stays whole.
    It 'Remove-Tree removes a tree holding a directory link, and leaves the link''s target as it is' {
        $base = Join-Path ([IO.Path]::GetTempPath()) ('wc-tree-' + [guid]::NewGuid().ToString('N'))
        $target = Join-Path $base 'pki'
        $tree = Join-Path $base 'kubelet'
        New-Item -ItemType Directory -Force -Path $target, (Join-Path $tree 'etc\kubernetes') | Out-Null
        [IO.File]::WriteAllText((Join-Path $target 'ca.crt'), 'the cluster CA')
        [IO.File]::WriteAllText((Join-Path $tree 'config.yaml'), 'kind: KubeletConfiguration')
        New-Item -ItemType SymbolicLink -Path (Join-Path $tree 'etc\kubernetes\pki') -Value $target | Out-Null
        try {
            Remove-Tree -Path $tree
            Test-Path -LiteralPath $tree | Should -BeFalse
            [IO.File]::ReadAllText((Join-Path $target 'ca.crt')) | Should -Be 'the cluster CA'
        } finally {
            Remove-Item -LiteralPath $base -Recurse -Force -ErrorAction SilentlyContinue
        }
    }

    # The premise, where it holds: Windows PowerShell 5.1's Remove-Item
    # -Recurse stops at a directory symbolic link (PowerShell/PowerShell#621;
    # PowerShell 6 changed it).
    It 'Remove-Item -Recurse stops at a directory link under Windows PowerShell 5.1' -Skip:($PSVersionTable.PSEdition -ne 'Desktop') {
        $base = Join-Path ([IO.Path]::GetTempPath()) ('wc-tree-' + [guid]::NewGuid().ToString('N'))
        $target = Join-Path $base 'pki'
        $tree = Join-Path $base 'kubelet'
        New-Item -ItemType Directory -Force -Path $target, $tree | Out-Null
        [IO.File]::WriteAllText((Join-Path $target 'ca.crt'), 'the cluster CA')
        New-Item -ItemType SymbolicLink -Path (Join-Path $tree 'pki') -Value $target | Out-Null
        try {
            { Remove-Item -LiteralPath $tree -Recurse -Force -ErrorAction Stop } | Should -Throw
        } finally {
            $link = New-Object IO.DirectoryInfo (Join-Path $tree 'pki')
            if ($link.Exists) { $link.Delete() }
            Remove-Item -LiteralPath $base -Recurse -Force -ErrorAction SilentlyContinue
        }
    }
}
