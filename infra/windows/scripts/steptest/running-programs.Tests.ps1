# Pester tests, on the runner's real Windows, of what the fakes model about
# running programs (FakeProcesses.ps1, and simmachine/processes.go on the Go
# side): Windows refuses to overwrite or delete the file of a running
# program, lets it be moved, and the program runs on; and lib.ps1's
# Install-Program replaces such a file.
Describe 'a running program''s file' {
    BeforeAll {
        . (Join-Path (Split-Path -Parent $PSScriptRoot) 'lib.ps1')
        $StepName = 'running-programs-test'
        $WinconformDir = Join-Path $TestDrive 'winconform'
        $dir = Join-Path $TestDrive 'k'
        New-Item -ItemType Directory -Force -Path $dir | Out-Null
        $program = Join-Path $dir 'runner.exe'
        # ping.exe stays up for as long as it is told to ping.
        Copy-Item -LiteralPath (Join-Path $env:SystemRoot 'System32\PING.EXE') -Destination $program
        $newer = Join-Path $TestDrive 'newer.exe'
        Copy-Item -LiteralPath (Join-Path $env:SystemRoot 'System32\whoami.exe') -Destination $newer
        $process = Start-Process -FilePath $program -ArgumentList @('-n', '120', '127.0.0.1') -PassThru -WindowStyle Hidden
        Start-Sleep -Milliseconds 500
    }
    AfterAll {
        if ($process -and -not $process.HasExited) { Stop-Process -Id $process.Id -Force; $process.WaitForExit(10000) | Out-Null }
    }

    It 'cannot be overwritten while it runs' {
        { Copy-Item -LiteralPath $newer -Destination $program -Force -ErrorAction Stop } | Should -Throw
        (Get-FileHash -LiteralPath $program).Hash | Should -Not -Be (Get-FileHash -LiteralPath $newer).Hash
    }

    It 'cannot be deleted while it runs' {
        { Remove-Item -LiteralPath $program -Force -ErrorAction Stop } | Should -Throw
        Test-Path -LiteralPath $program | Should -BeTrue
    }

    It 'is replaced by Install-Program, which moves it aside; the program runs on' {
        $aside = Install-Program -Source $newer -Destination $program
        $aside | Should -Be (Join-Path $WinconformDir 'work\replaced\runner.exe.1')
        Test-Path -LiteralPath $aside | Should -BeTrue
        (Get-FileHash -LiteralPath $program).Hash | Should -Be (Get-FileHash -LiteralPath $newer).Hash
        $process.HasExited | Should -BeFalse
        # The moved file still runs: it cannot be deleted yet.
        { Remove-Item -LiteralPath $aside -Force -ErrorAction Stop } | Should -Throw
    }

    It 'deletes the moved copy on a later install, once nothing runs it' {
        Stop-Process -Id $process.Id -Force
        $process.WaitForExit(10000) | Out-Null
        $aside = Install-Program -Source $newer -Destination $program
        $aside | Should -Be (Join-Path $WinconformDir 'work\replaced\runner.exe.1')
        # The copy of the earlier run was deleted, so its name was free again.
        @(Get-ChildItem -LiteralPath (Join-Path $WinconformDir 'work\replaced')).Count | Should -Be 1
    }
}
