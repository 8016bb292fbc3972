# Pester tests of Prepare-WinRM.ps1's logic, on the Windows runners: the
# subject alternative names New-SelfSignedCertificate really writes from
# the script's -TextExtension, the PEM it prints (read back by .NET), and
# when the HTTPS listener is made, rebound or kept; and the main body, with
# the cmdlets that change the machine (certificate, listener, firewall,
# registry) mocked as they answer on a stock Windows Server.
Describe 'Prepare-WinRM.ps1' {
    BeforeAll {
        $path = Join-Path $PSScriptRoot 'Prepare-WinRM.ps1'
        . $path
    }

    It 'parses with PowerShell''s parser' {
        $tokens = $null
        $errors = $null
        [void][System.Management.Automation.Language.Parser]::ParseFile($path, [ref]$tokens, [ref]$errors)
        (@($errors | ForEach-Object { '{0}: {1}' -f $_.Extent.StartLineNumber, $_.Message }) -join "`n") | Should -BeNullOrEmpty
    }

    Context 'a self-signed certificate, as the script makes it' {
        BeforeAll {
            # The current user's store needs no elevation; the script uses
            # the machine's.
            $script:cert = New-SelfSignedCertificate -CertStoreLocation 'Cert:\CurrentUser\My' -Subject 'CN=win-test.winconform.invalid' `
                -TextExtension @(Get-SubjectAlternativeNameExtension -DnsName @('win-test', 'win-test.winconform.invalid') -IPAddress @('192.0.2.20')) `
                -KeyExportPolicy NonExportable -KeyAlgorithm RSA -KeyLength 2048 -HashAlgorithm SHA256 -NotAfter (Get-Date).AddDays(1)
        }
        AfterAll {
            if ($script:cert) { Remove-Item -Path "Cert:\CurrentUser\My\$($script:cert.Thumbprint)" -Force }
        }

        It 'holds every name and address in its subject alternative names' {
            $san = $script:cert.Extensions | Where-Object { $_.Oid.Value -eq '2.5.29.17' }
            $text = $san.Format($false)
            $text | Should -BeLike '*win-test.winconform.invalid*'
            $text | Should -Match 'DNS Name=win-test(,|$)'
            $text | Should -BeLike '*192.0.2.20*'
        }

        It 'prints as PEM that reads back as the same certificate' {
            $pem = ConvertTo-PemCertificate -Der $script:cert.RawData
            $lines = $pem -split "`n"
            $lines[0] | Should -Be '-----BEGIN CERTIFICATE-----'
            $lines[-1] | Should -Be '-----END CERTIFICATE-----'
            @($lines[1..($lines.Count - 2)] | Where-Object { $_.Length -gt 64 }) | Should -BeNullOrEmpty
            $der = [Convert]::FromBase64String(($lines[1..($lines.Count - 2)] -join ''))
            (New-Object Security.Cryptography.X509Certificates.X509Certificate2 -ArgumentList @(, $der)).Thumbprint | Should -Be $script:cert.Thumbprint
        }
    }

    It 'decides the listener: <Name>' -ForEach @(
        @{ Name = 'none yet'; Listener = $null; Action = 'create' }
        @{ Name = 'the same certificate and port'; Listener = [pscustomobject]@{ CertificateThumbprint = 'AB12'; Port = '5986' }; Action = 'keep' }
        @{ Name = 'another certificate'; Listener = [pscustomobject]@{ CertificateThumbprint = 'CD34'; Port = '5986' }; Action = 'rebind' }
        @{ Name = 'another port'; Listener = [pscustomobject]@{ CertificateThumbprint = 'AB12'; Port = '15986' }; Action = 'rebind' }
    ) {
        Get-ListenerAction -Listener $Listener -Thumbprint 'AB12' -Port 5986 | Should -Be $Action
    }

    It 'names the computer, and its FQDN in a domain' {
        (Get-DefaultDnsName -ComputerName 'WIN-A') -join ',' | Should -Be 'WIN-A'
        (Get-DefaultDnsName -ComputerName 'WIN-A' -Domain 'lab.example') -join ',' | Should -Be 'WIN-A,WIN-A.lab.example'
    }

    It 'prints the inventory line the listener takes' {
        Get-InventoryLine -Port 5986 -CAFile 'C:\winrm-ca.pem' | Should -Be "winrm: {https: true, caBundle: 'C:\winrm-ca.pem'}"
        Get-InventoryLine -Port 15986 | Should -Be 'winrm: {https: true, port: 15986, caBundle: ./winrm-ca.pem}'
    }
    Context 'the main body, on a stock Windows Server' {
        BeforeAll {
            # A stock server has WinRM's HTTP listener on all addresses and no
            # HTTPS listener. Get-WSManInstance for a listener that does not
            # exist raises a terminating error (PowerShell's
            # Microsoft.WSMan.Management: WsManHelper.AssertError calls
            # ThrowTerminatingError; the error is 0x80338000, "cannot find the
            # resource identified by the resource URI and selectors"), which
            # -ErrorAction SilentlyContinue does not silence
            # (about_Error_Handling); a throw in a mock does the same.
            # WSMan:\localhost\Listener lists each listener as
            # Listener_<hash> with Keys such as Transport=HTTP and Address=*
            # (PowerShell's ConfigProvider.cs), its values as child items.
            $script:listenerRoot = 'Microsoft.WSMan.Management\WSMan::localhost\Listener'
            $script:httpListener = [pscustomobject]@{ Name = 'Listener_1084132640'; Keys = @('Transport=HTTP', 'Address=*'); PSPath = "$script:listenerRoot\Listener_1084132640" }
            $script:httpsListener = [pscustomobject]@{ Name = 'Listener_1305953032'; Keys = @('Transport=HTTPS', 'Address=*'); PSPath = "$script:listenerRoot\Listener_1305953032" }
            $script:newCert = [pscustomobject]@{ Thumbprint = 'AB12CD34AB12CD34AB12CD34AB12CD34AB12CD34'; RawData = [byte[]](1..40); Subject = 'CN=win-a'; Issuer = 'CN=win-a'; HasPrivateKey = $true }
        }
        BeforeEach {
            $script:listeners = @($script:httpListener)
            $script:httpsValues = @()
            Mock Test-Elevated { $true }
            Mock Get-Service { [pscustomobject]@{ Name = 'WinRM'; StartType = 'Automatic'; Status = 'Running' } }
            Mock Set-Service { $null }
            Mock Start-Service { $null }
            Mock Get-CimInstance { [pscustomobject]@{ Domain = 'WORKGROUP' } }
            Mock New-SelfSignedCertificate { $script:newCert }
            Mock Get-WSManInstance { throw [InvalidOperationException]::new('The WS-Management service cannot process the request. The service cannot find the resource identified by the resource URI and selectors.') }
            Mock Get-ChildItem -ParameterFilter { $Path -eq 'WSMan:\localhost\Listener' } { $script:listeners }
            Mock Get-ChildItem -ParameterFilter { $Path -eq $script:httpsListener.PSPath } { $script:httpsValues }
            Mock New-WSManInstance { $null }
            Mock Set-WSManInstance { $null }
            Mock Get-NetFirewallRule { $null }
            Mock New-NetFirewallRule { $null }
            Mock Set-NetFirewallRule { $null }
            Mock New-ItemProperty { $null }
        }

        It 'makes the HTTPS listener and its firewall rule where there is none' {
            $out = Invoke-PrepareWinRM -DnsName 'win-a' -IPAddress '192.0.2.20'
            Should -Invoke Get-WSManInstance -Times 0 -Exactly
            Should -Invoke New-WSManInstance -Times 1 -Exactly -ParameterFilter {
                $SelectorSet.Transport -eq 'HTTPS' -and $SelectorSet.Address -eq '*' -and $ValueSet.CertificateThumbprint -eq $script:newCert.Thumbprint -and $ValueSet.Port -eq 5986
            }
            Should -Invoke Set-WSManInstance -Times 0 -Exactly
            Should -Invoke New-NetFirewallRule -Times 1 -Exactly -ParameterFilter { $Name -eq 'winconform-WinRM-HTTPS-In' -and $LocalPort -eq 5986 }
            Should -Invoke New-NetFirewallRule -Times 0 -Exactly -ParameterFilter { $Name -eq 'winconform-WinRM-HTTP-In' }
            ($out -join "`n") | Should -BeLike '*made the HTTPS listener on port 5986*'
            ($out -join "`n") | Should -BeLike '*-----BEGIN CERTIFICATE-----*'
        }

        It 'rebinds an HTTPS listener that has another certificate' {
            $script:listeners = @($script:httpListener, $script:httpsListener)
            $script:httpsValues = @(
                [pscustomobject]@{ Name = 'Port'; Value = '5986' }
                [pscustomobject]@{ Name = 'CertificateThumbprint'; Value = 'OLD0OLD0OLD0OLD0OLD0OLD0OLD0OLD0OLD0OLD0' }
            )
            $out = Invoke-PrepareWinRM -DnsName 'win-a'
            Should -Invoke Set-WSManInstance -Times 1 -Exactly -ParameterFilter { $ValueSet.CertificateThumbprint -eq $script:newCert.Thumbprint }
            Should -Invoke New-WSManInstance -Times 0 -Exactly
            ($out -join "`n") | Should -BeLike '*bound the HTTPS listener*'
        }

        It 'keeps an HTTPS listener that is right' {
            $script:listeners = @($script:httpsListener)
            $script:httpsValues = @(
                [pscustomobject]@{ Name = 'Port'; Value = '5986' }
                [pscustomobject]@{ Name = 'CertificateThumbprint'; Value = $script:newCert.Thumbprint }
            )
            $out = Invoke-PrepareWinRM -DnsName 'win-a'
            Should -Invoke Set-WSManInstance -Times 0 -Exactly
            Should -Invoke New-WSManInstance -Times 0 -Exactly
            ($out -join "`n") | Should -BeLike '*already uses certificate*'
        }

        # On the Public network profile Windows Server's own WinRM HTTP rule,
        # WINRM-HTTP-In-TCP-PUBLIC, admits only the local subnet
        # (Enable-PSRemoting's documentation, -SkipNetworkProfileCheck).
        It 'opens WinRM''s HTTP port to the ranges -HttpFrom names' {
            Invoke-PrepareWinRM -DnsName 'win-a' -HttpFrom '10.20.0.0/16', '192.0.2.0/24' | Out-Null
            Should -Invoke New-NetFirewallRule -Times 1 -Exactly -ParameterFilter {
                $Name -eq 'winconform-WinRM-HTTP-In' -and $LocalPort -eq 5985 -and ($RemoteAddress -join ',') -eq '10.20.0.0/16,192.0.2.0/24'
            }
        }

        It 'stops unelevated before it changes anything' {
            Mock Test-Elevated { $false }
            { Invoke-PrepareWinRM -DnsName 'win-a' } | Should -Throw '*must run elevated*'
            Should -Invoke New-SelfSignedCertificate -Times 0 -Exactly
            Should -Invoke Set-Service -Times 0 -Exactly
            Should -Invoke New-WSManInstance -Times 0 -Exactly
        }
    }
}
