# Pester tests of winrm-setup.ps1, the script the azure provider runs in a
# new VM through Azure's Run Command, on the Windows runners (the WinRM and
# firewall cmdlets mocked: the runner's own WinRM and firewall stay as they
# are). The Go tests check what the provider sends; these check what the
# script then does with it.
Describe 'winrm-setup.ps1' {
    BeforeAll {
        $script:path = Join-Path $PSScriptRoot 'winrm-setup.ps1'
    }
    BeforeEach {
        Mock Set-Service { $null }
        Mock Start-Service { $null }
        Mock New-Item { $null }
        Mock New-NetFirewallRule { $null }
        Mock Set-NetFirewallRule { $null }
    }

    It 'parses with PowerShell''s parser' {
        $tokens = $null
        $errors = $null
        [void][System.Management.Automation.Language.Parser]::ParseFile($script:path, [ref]$tokens, [ref]$errors)
        (@($errors | ForEach-Object { '{0}: {1}' -f $_.Extent.StartLineNumber, $_.Message }) -join "`n") | Should -BeNullOrEmpty
    }

    It 'opens 5985 to the given ranges only, with a rule of its own, and says so' {
        Mock Get-ChildItem { [pscustomobject]@{ Keys = @('Transport=HTTP', 'Address=*') } }
        Mock Get-NetFirewallRule { $null }
        $out = & $script:path -RemoteAddress '198.51.100.0/24,192.0.2.7/32'
        Should -Invoke New-NetFirewallRule -Times 1 -Exactly -ParameterFilter {
            $Name -eq 'winconform-WinRM-HTTP-In' -and $LocalPort -eq '5985' -and $Protocol -eq 'TCP' -and $Direction -eq 'Inbound' -and
            (($RemoteAddress -join ',') -eq '198.51.100.0/24,192.0.2.7/32')
        }
        Should -Invoke New-Item -Times 0 -Exactly
        $out | Should -Be 'winconform: WinRM ready'
    }

    It 'makes the HTTP listener when there is none' {
        Mock Get-ChildItem { [pscustomobject]@{ Keys = @('Transport=HTTPS', 'Address=*') } }
        Mock Get-NetFirewallRule { $null }
        & $script:path | Out-Null
        Should -Invoke New-Item -Times 1 -Exactly -ParameterFilter { $Path -eq 'WSMan:\localhost\Listener' -and $Transport -eq 'HTTP' }
        Should -Invoke New-NetFirewallRule -Times 1 -Exactly -ParameterFilter { ($RemoteAddress -join ',') -eq 'Any' }
    }

    It 'run again, changes the rule it made rather than adding one' {
        Mock Get-ChildItem { [pscustomobject]@{ Keys = @('Transport=HTTP') } }
        Mock Get-NetFirewallRule { [pscustomobject]@{ Name = 'winconform-WinRM-HTTP-In' } }
        & $script:path -RemoteAddress '203.0.113.0/24' | Out-Null
        Should -Invoke New-NetFirewallRule -Times 0 -Exactly
        Should -Invoke Set-NetFirewallRule -Times 1 -Exactly -ParameterFilter { ($RemoteAddress -join ',') -eq '203.0.113.0/24' }
    }
}
