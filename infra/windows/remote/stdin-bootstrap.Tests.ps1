# Pester tests of stdin-bootstrap.ps1, the command the harness sends over
# WinRM when a script is too long for a command line: run here by the real
# powershell.exe, as the harness runs it (-NoProfile -NonInteractive
# -EncodedCommand, stdin a pipe, with winrm's
# preamble), the script on its stdin as base64 lines, as the harness sends it.
Describe 'stdin-bootstrap.ps1' {
    BeforeAll {
        $path = Join-Path $PSScriptRoot 'stdin-bootstrap.ps1'
        # Invoke-Bootstrap runs the bootstrap with $Script on its stdin and
        # returns what came back.
        function Invoke-Bootstrap {
            param([string] $Script)
            $bootstrap = [IO.File]::ReadAllText($path).Replace("`r`n", "`n")
            $command = [Convert]::ToBase64String([Text.Encoding]::Unicode.GetBytes("`$ProgressPreference = 'SilentlyContinue';" + $bootstrap))
            $psi = New-Object Diagnostics.ProcessStartInfo
            $psi.FileName = Join-Path $env:SystemRoot 'System32\WindowsPowerShell\v1.0\powershell.exe'
            $psi.Arguments = '-NoProfile -NonInteractive -EncodedCommand ' + $command
            $psi.UseShellExecute = $false
            $psi.RedirectStandardInput = $true
            $psi.RedirectStandardOutput = $true
            $psi.RedirectStandardError = $true
            $p = [Diagnostics.Process]::Start($psi)
            $stdout = $p.StandardOutput.ReadToEndAsync()
            $stderr = $p.StandardError.ReadToEndAsync()
            $b64 = [Convert]::ToBase64String([Text.Encoding]::UTF8.GetBytes($Script))
            for ($i = 0; $i -lt $b64.Length; $i += 76) {
                $p.StandardInput.Write($b64.Substring($i, [Math]::Min(76, $b64.Length - $i)) + "`r`n")
            }
            $p.StandardInput.Close()
            if (-not $p.WaitForExit(120000)) { $p.Kill(); throw 'powershell.exe did not end within 2 minutes' }
            [pscustomobject]@{ Stdout = $stdout.Result; Stderr = $stderr.Result; ExitCode = $p.ExitCode }
        }
    }

    It 'parses with PowerShell''s parser' {
        $tokens = $null
        $errors = $null
        [void][System.Management.Automation.Language.Parser]::ParseFile($path, [ref]$tokens, [ref]$errors)
        (@($errors | ForEach-Object { '{0}: {1}' -f $_.Extent.StartLineNumber, $_.Message }) -join "`n") | Should -BeNullOrEmpty
    }

    It 'runs a long script that comes on stdin, whole' {
        $lines = foreach ($i in 1..400) { "`$n$i = $i" }
        $script = ($lines -join "`n") + "`nWrite-Output ('sum ' + (`$n1 + `$n200 + `$n400))`n"
        $r = Invoke-Bootstrap $script
        $r.ExitCode | Should -Be 0 -Because $r.Stderr
        $r.Stdout | Should -BeLike '*sum 601*'
    }

    It 'ends with the script''s exit code: <Name>' -ForEach @(
        @{ Name = 'exit 3'; Script = "Write-Output 'x'`nexit 3"; Code = 3 }
        @{ Name = 'a native program''s 5'; Script = "Write-Output 'x'`n& cmd.exe /c exit 5"; Code = 5 }
        @{ Name = 'a terminating error'; Script = "`$ErrorActionPreference = 'Stop'`nthrow 'the step failed'"; Code = 1 }
        @{ Name = 'success'; Script = "Write-Output 'x'"; Code = 0 }
    ) {
        (Invoke-Bootstrap $Script).ExitCode | Should -Be $Code
    }

    It 'sends a script''s error back as CLIXML, as over WinRM' {
        $r = Invoke-Bootstrap "`$ErrorActionPreference = 'Stop'`nthrow 'kube-proxy.exe is missing'"
        $r.Stderr | Should -BeLike '#< CLIXML*'
        $r.Stderr | Should -BeLike '*kube-proxy.exe is missing*'
    }

    It 'keeps the script (and the secret it holds) off its output streams' {
        $secret = 'w1nc0n.5ecretf0rp3ster'
        $r = Invoke-Bootstrap "`$Token = '$secret'`n`$ErrorActionPreference = 'Stop'`nWrite-Output 'joining'`nthrow ('join failed: ' + `$Token.Length)"
        $r.Stderr | Should -BeLike '*join failed: 22*'
        ($r.Stdout + $r.Stderr) | Should -Not -BeLike "*$secret*"
    }
}
