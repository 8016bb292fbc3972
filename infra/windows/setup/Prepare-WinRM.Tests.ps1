# Pester tests of Prepare-WinRM.ps1's logic, on the Windows runners: the
# subject alternative names New-SelfSignedCertificate really writes from
# the script's -TextExtension, the PEM it prints (read back by .NET), and
# when the HTTPS listener is made, rebound or kept. The parts that change the
# machine (listener, firewall, registry) run only on a machine being
# prepared.
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
}
