# Pester tests of lib.ps1, the helpers every step uses, run for real on the
# runner: the programs are Windows's own (cmd.exe, tar.exe), the archives
# real ones, the state files real files (in Pester's TestDrive).
Describe 'lib.ps1' {
    BeforeAll {
        . (Join-Path (Split-Path -Parent $PSScriptRoot) 'lib.ps1')
        $StepName = 'lib-test'
        $WinconformDir = Join-Path $TestDrive 'winconform'
        $StateDir = Join-Path $WinconformDir 'state'
        $cmd = Join-Path $env:SystemRoot 'System32\cmd.exe'
    }

    It 'parses with PowerShell''s parser' {
        $tokens = $null
        $errors = $null
        $path = Join-Path (Split-Path -Parent $PSScriptRoot) 'lib.ps1'
        [void][System.Management.Automation.Language.Parser]::ParseFile($path, [ref]$tokens, [ref]$errors)
        (@($errors | ForEach-Object { '{0}: {1}' -f $_.Extent.StartLineNumber, $_.Message }) -join "`n") | Should -BeNullOrEmpty
    }

    It 'Write-Status prints one JSON line, the step first, and clears the exit code' {
        $global:LASTEXITCODE = 7
        $out = @(Write-Status ([ordered]@{ changed = $true; n = 1 }))
        $out.Count | Should -Be 1
        $out[0] | Should -BeExactly '{"step":"lib-test","changed":true,"n":1}'
        $global:LASTEXITCODE | Should -Be 0
    }

    It 'Invoke-Native returns a program''s exit code without throwing' {
        $r = Invoke-Native -FilePath $cmd -ArgumentList @('/c', 'exit', '3')
        $r.ExitCode | Should -Be 3
    }

    It 'Invoke-Native keeps what a program writes to stderr, under ErrorActionPreference Stop' {
        $ErrorActionPreference = 'Stop'
        $r = Invoke-Native -FilePath $cmd -ArgumentList @('/c', 'dir', 'C:\winconform-no-such-directory')
        $r.ExitCode | Should -Not -Be 0
        @($r.Output).Count | Should -BeGreaterThan 0
    }

    It 'Invoke-Native refuses a program that does not exist' {
        { Invoke-Native -FilePath 'C:\winconform-no-such-directory\kubeadm.exe' } | Should -Throw '*does not exist*'
    }

    It 'Get-ExeVersion reads the first version a program prints, or nothing' {
        Get-ExeVersion -Path $cmd -ArgumentList @('/c', 'ver') | Should -Match '^\d+\.\d+\.\d+'
        Get-ExeVersion -Path 'C:\winconform-no-such-directory\kubelet.exe' | Should -BeExactly ''
    }

    It 'names sources: <Source>' -ForEach @(
        @{ Source = 'https://dl.k8s.io/v1.34.4/bin/windows/amd64/kubelet.exe'; Name = 'kubelet.exe'; Url = $true; Archive = $false }
        @{ Source = 'https://example.com/containerd-1.7.28-windows-amd64.tar.gz?sig=1#x'; Name = 'containerd-1.7.28-windows-amd64.tar.gz'; Url = $true; Archive = $true }
        @{ Source = 'C:\install\cni-plugins-windows-amd64-v1.7.1.tgz'; Name = 'cni-plugins-windows-amd64-v1.7.1.tgz'; Url = $false; Archive = $true }
        @{ Source = 'C:\install\kubernetes\'; Name = 'kubernetes'; Url = $false; Archive = $false }
        @{ Source = 'D:/share/node.zip'; Name = 'node.zip'; Url = $false; Archive = $true }
    ) {
        Get-SourceName $Source | Should -BeExactly $Name
        Test-Url $Source | Should -Be $Url
        Test-Archive $Source | Should -Be $Archive
    }

    It 'keeps state: what is set is read back, a missing state is empty' {
        (Get-State 'nothing-yet').Count | Should -Be 0
        Set-State 'lib-test' ([ordered]@{ source = 'C:\install\x.exe'; version = 'v1.2.3' })
        $state = Get-State 'lib-test'
        Get-StateValue $state 'source' | Should -BeExactly 'C:\install\x.exe'
        Get-StateValue $state 'version' | Should -BeExactly 'v1.2.3'
        Get-StateValue $state 'absent' | Should -BeExactly ''
    }

    It 'New-WorkDir gives an empty directory each time' {
        $dir = New-WorkDir 'lib-test'
        Set-Content -LiteralPath (Join-Path $dir 'left.txt') -Value 'x'
        $again = New-WorkDir 'lib-test'
        $again | Should -BeExactly $dir
        @(Get-ChildItem -LiteralPath $again).Count | Should -Be 0
    }

    It 'Expand-Source unpacks a .zip and a .tar.gz, and Find-SourceFile finds what they hold' {
        $src = Join-Path $TestDrive 'src'
        New-Item -ItemType Directory -Force -Path (Join-Path $src 'bin') | Out-Null
        Set-Content -LiteralPath (Join-Path $src 'bin\containerd.exe') -Value 'not really containerd'
        $zip = Join-Path $TestDrive 'containerd.zip'
        Compress-Archive -Path (Join-Path $src '*') -DestinationPath $zip
        $tgz = Join-Path $TestDrive 'containerd.tar.gz'
        & (Join-Path $env:SystemRoot 'System32\tar.exe') -czf $tgz -C $src bin
        $LASTEXITCODE | Should -Be 0
        foreach ($archive in @($zip, $tgz)) {
            $out = Expand-Source -Source $archive -Work (New-WorkDir 'lib-expand')
            Test-Path -LiteralPath (Join-Path $out 'bin\containerd.exe') | Should -BeTrue -Because "$archive is unpacked"
            $found = Find-SourceFile -Source $archive -Name 'containerd.exe' -Work (New-WorkDir 'lib-find')
            Split-Path -Leaf $found | Should -BeExactly 'containerd.exe'
        }
        Find-SourceFile -Source $src -Name 'containerd.exe' -Work (New-WorkDir 'lib-dir') | Should -BeExactly (Join-Path $src 'bin\containerd.exe')
        { Find-SourceFile -Source $src -Name 'kubelet.exe' -Work (New-WorkDir 'lib-none') } | Should -Throw "*holds no kubelet.exe*"
    }

    It 'Wait-Condition returns at once when the condition holds, and times out naming what it waited for' {
        Wait-Condition -Seconds 1 -What 'nothing' -Test { $true }
        { Wait-Condition -Seconds 1 -What 'the never pipe' -Test { $false } } | Should -Throw 'timed out after 1s waiting for the never pipe'
    }

    It 'Test-Administrator answers with a boolean' {
        Test-Administrator | Should -BeOfType ([bool])
    }

    It 'Get-RoutableAddress lists the runner''s own addresses, neither loopback nor link-local' {
        $addresses = @(Get-RoutableAddress)
        $addresses.Count | Should -BeGreaterThan 0
        foreach ($a in $addresses) {
            $a | Should -Match '^\d+\.\d+\.\d+\.\d+ on .+$'
            $a | Should -Not -BeLike '127.*'
            $a | Should -Not -BeLike '169.254.*'
        }
    }
}
