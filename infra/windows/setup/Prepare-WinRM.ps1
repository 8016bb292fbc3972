<#
.SYNOPSIS
Prepares a Windows machine for winconform's harness: a WinRM HTTPS listener
with a certificate, its firewall rule, and (when asked) remote
administration for local administrators other than the built-in one.

.DESCRIPTION
A stock Windows Server listens for WinRM over HTTP on 5985 only (Basic off,
AllowUnencrypted=false), which the harness reaches with NTLM and sealed
messages without this script. Run it, elevated, on the machine to reach it
over HTTPS on 5986 instead:

  - the certificate: the one whose thumbprint -CertificateThumbprint gives
    (in Cert:\LocalMachine\My), or a new self-signed one for -DnsName (the
    computer's name and FQDN by default) and -IPAddress;
  - an HTTPS listener on all addresses, port -Port, bound to it (an existing
    HTTPS listener with another certificate is rebound);
  - an inbound firewall rule for that port, on every profile;
  - with -HttpFrom, an inbound firewall rule for WinRM's HTTP port (5985)
    from those remote addresses (a range, a subnet, or Any): on the Public
    network profile Windows Server's own rule (WINRM-HTTP-In-TCP-PUBLIC)
    admits only the local subnet, and a harness elsewhere times out;
  - with -LocalAdministrator, LocalAccountTokenFilterPolicy=1: without it UAC
    filters the token of a local administrator other than the built-in
    Administrator on a network logon, and WinRM refuses the account. It weakens
    UAC's remote restrictions for every local administrator: prefer the
    built-in Administrator or a domain account.

It prints the certificate in PEM, the CA bundle to give the harness
(caBundle; a self-signed certificate is its own CA), writes it to -CAFile
when given, and prints the inventory lines that go with it. Running it again
changes nothing that is already right.

.EXAMPLE
.\Prepare-WinRM.ps1 -DnsName win-2022-a.lab -IPAddress 192.168.56.20 -CAFile C:\winrm-ca.pem

.EXAMPLE
.\Prepare-WinRM.ps1 -HttpFrom 10.20.0.0/16

.EXAMPLE
.\Prepare-WinRM.ps1 -CertificateThumbprint 0123456789ABCDEF0123456789ABCDEF01234567 -LocalAdministrator
#>
[CmdletBinding()]
param(
    [string] $CertificateThumbprint,
    [string[]] $DnsName,
    [string[]] $IPAddress = @(),
    [ValidateRange(1, 65535)][int] $Port = 5986,
    [string] $CAFile,
    [switch] $LocalAdministrator,
    [ValidateRange(1, 20)][int] $ValidYears = 5,
    [string[]] $HttpFrom = @()
)
Set-StrictMode -Version Latest
$ErrorActionPreference = 'Stop'

# The firewall rules this script owns.
$FirewallRuleName = 'winconform-WinRM-HTTPS-In'
$HttpFirewallRuleName = 'winconform-WinRM-HTTP-In'

# ConvertTo-PemCertificate returns a certificate's DER bytes as PEM, in
# 64-character lines.
function ConvertTo-PemCertificate {
    param([Parameter(Mandatory = $true)][byte[]] $Der)
    $b64 = [Convert]::ToBase64String($Der)
    $lines = for ($i = 0; $i -lt $b64.Length; $i += 64) { $b64.Substring($i, [Math]::Min(64, $b64.Length - $i)) }
    (@('-----BEGIN CERTIFICATE-----') + $lines + @('-----END CERTIFICATE-----')) -join "`n"
}

# Get-DefaultDnsName returns the names a self-signed certificate is for: the
# computer's name and, when it has a DNS domain, its FQDN.
function Get-DefaultDnsName {
    param([string] $ComputerName = $env:COMPUTERNAME, [string] $Domain)
    $names = @($ComputerName)
    if ($Domain) { $names += "$ComputerName.$Domain" }
    $names
}

# Get-SubjectAlternativeNameExtension returns the -TextExtension value that
# puts the DNS names and IP addresses in the certificate's subject
# alternative names (the harness checks the name it dials against them).
function Get-SubjectAlternativeNameExtension {
    param([string[]] $DnsName = @(), [string[]] $IPAddress = @())
    $entries = @($DnsName | ForEach-Object { "DNS=$_" }) + @($IPAddress | ForEach-Object { "IPAddress=$_" })
    '2.5.29.17={text}' + ($entries -join '&')
}

# Get-ListenerAction decides what to do with the HTTPS listener: 'create'
# when there is none, 'rebind' when it has another certificate or port,
# 'keep' when it is right.
function Get-ListenerAction {
    param($Listener, [Parameter(Mandatory = $true)][string] $Thumbprint, [Parameter(Mandatory = $true)][int] $Port)
    if ($null -eq $Listener) { return 'create' }
    if ($Listener.CertificateThumbprint -ne $Thumbprint -or [int]$Listener.Port -ne $Port) { return 'rebind' }
    'keep'
}

# Get-InventoryLine is the inventory's winrm line for this listener.
function Get-InventoryLine {
    param([Parameter(Mandatory = $true)][int] $Port, [string] $CAFile, [string] $ServerName)
    $fields = @('https: true')
    if ($Port -ne 5986) { $fields += "port: $Port" }
    if ($CAFile) { $fields += "caBundle: '$CAFile'" } else { $fields += 'caBundle: ./winrm-ca.pem' }
    if ($ServerName) { $fields += "tlsServerName: $ServerName" }
    'winrm: {' + ($fields -join ', ') + '}'
}

# Test-Elevated tells whether the script runs as an administrator.
function Test-Elevated {
    $principal = New-Object Security.Principal.WindowsPrincipal([Security.Principal.WindowsIdentity]::GetCurrent())
    $principal.IsInRole([Security.Principal.WindowsBuiltInRole]::Administrator)
}

# Get-HttpsListener returns the HTTPS listener on all addresses
# (CertificateThumbprint, Port), or $null when the machine has none, which
# is every stock server. It lists the listeners through the WSMan: drive,
# as Ansible's ConfigureRemotingForAnsible.ps1 does: Get-WSManInstance for
# a listener that does not exist raises a terminating error (PowerShell's
# WsManHelper.AssertError calls ThrowTerminatingError), which
# -ErrorAction SilentlyContinue does not silence.
function Get-HttpsListener {
    $listener = @(Get-ChildItem -Path 'WSMan:\localhost\Listener' |
            Where-Object { $_.Keys -contains 'Transport=HTTPS' -and $_.Keys -contains 'Address=*' })
    if ($listener.Count -eq 0) { return $null }
    $values = @{}
    Get-ChildItem -Path $listener[0].PSPath | ForEach-Object { $values[$_.Name] = $_.Value }
    [pscustomobject]@{ CertificateThumbprint = $values['CertificateThumbprint']; Port = $values['Port'] }
}

# Set-FirewallRule makes the inbound TCP rule $Name for $Port from
# $RemoteAddress, or sets an existing one to them.
function Set-FirewallRule {
    param(
        [Parameter(Mandatory = $true)][string] $Name,
        [Parameter(Mandatory = $true)][string] $DisplayName,
        [Parameter(Mandatory = $true)][int] $Port,
        [string[]] $RemoteAddress = @('Any')
    )
    $rule = Get-NetFirewallRule -Name $Name -ErrorAction SilentlyContinue
    if (-not $rule) {
        New-NetFirewallRule -Name $Name -DisplayName $DisplayName -Direction Inbound -Protocol TCP -LocalPort $Port `
            -RemoteAddress $RemoteAddress -Action Allow -Profile Any | Out-Null
        Write-Output "opened TCP $Port in the firewall from $($RemoteAddress -join ', ') (rule $Name)"
    } else {
        Set-NetFirewallRule -Name $Name -LocalPort $Port -RemoteAddress $RemoteAddress -Enabled True -Action Allow | Out-Null
    }
}

function Invoke-PrepareWinRM {
    param(
        [string] $CertificateThumbprint,
        [string[]] $DnsName,
        [string[]] $IPAddress = @(),
        [int] $Port = 5986,
        [string] $CAFile,
        [switch] $LocalAdministrator,
        [int] $ValidYears = 5,
        [string[]] $HttpFrom = @()
    )
    if (-not (Test-Elevated)) {
        throw 'Prepare-WinRM.ps1 must run elevated (as an administrator).'
    }

    $svc = Get-Service -Name WinRM
    if ($svc.StartType -ne 'Automatic') { Set-Service -Name WinRM -StartupType Automatic }
    if ($svc.Status -ne 'Running') { Start-Service -Name WinRM }

    if ($CertificateThumbprint) {
        $thumb = $CertificateThumbprint.Replace(' ', '').ToUpperInvariant()
        $cert = Get-Item -Path "Cert:\LocalMachine\My\$thumb" -ErrorAction SilentlyContinue
        if (-not $cert) { throw "No certificate $thumb in Cert:\LocalMachine\My: import it there, or leave -CertificateThumbprint out for a self-signed one." }
        if (-not $cert.HasPrivateKey) { throw "The certificate $thumb has no private key: WinRM cannot serve TLS with it." }
    } else {
        if (-not $DnsName) {
            $domain = (Get-CimInstance -ClassName Win32_ComputerSystem).Domain
            if ($domain -eq 'WORKGROUP') { $domain = $null }
            $DnsName = Get-DefaultDnsName -Domain $domain
        }
        $cert = New-SelfSignedCertificate -CertStoreLocation 'Cert:\LocalMachine\My' -Subject "CN=$($DnsName[0])" `
            -TextExtension @(Get-SubjectAlternativeNameExtension -DnsName $DnsName -IPAddress $IPAddress) `
            -KeyExportPolicy NonExportable -KeyAlgorithm RSA -KeyLength 2048 -HashAlgorithm SHA256 `
            -NotAfter (Get-Date).AddYears($ValidYears)
        $thumb = $cert.Thumbprint
        Write-Output "made a self-signed certificate $thumb for $(($DnsName + $IPAddress) -join ', ')"
    }

    $selector = @{ Address = '*'; Transport = 'HTTPS' }
    switch (Get-ListenerAction -Listener (Get-HttpsListener) -Thumbprint $thumb -Port $Port) {
        'create' {
            New-WSManInstance -ResourceURI 'winrm/config/Listener' -SelectorSet $selector -ValueSet @{ CertificateThumbprint = $thumb; Port = $Port } | Out-Null
            Write-Output "made the HTTPS listener on port $Port"
        }
        'rebind' {
            Set-WSManInstance -ResourceURI 'winrm/config/Listener' -SelectorSet $selector -ValueSet @{ CertificateThumbprint = $thumb; Port = $Port } | Out-Null
            Write-Output "bound the HTTPS listener on port $Port to certificate $thumb"
        }
        'keep' { Write-Output "the HTTPS listener on port $Port already uses certificate $thumb" }
    }

    Set-FirewallRule -Name $FirewallRuleName -DisplayName "Windows Remote Management (HTTPS-In, port $Port, winconform)" -Port $Port
    if ($HttpFrom.Count -gt 0) {
        Set-FirewallRule -Name $HttpFirewallRuleName -DisplayName 'Windows Remote Management (HTTP-In, winconform)' -Port 5985 -RemoteAddress $HttpFrom
    }

    if ($LocalAdministrator) {
        $key = 'HKLM:\SOFTWARE\Microsoft\Windows\CurrentVersion\Policies\System'
        New-ItemProperty -Path $key -Name LocalAccountTokenFilterPolicy -PropertyType DWord -Value 1 -Force | Out-Null
        Write-Output 'set LocalAccountTokenFilterPolicy=1: local administrators keep their rights over WinRM'
    }

    $pem = ConvertTo-PemCertificate -Der $cert.RawData
    if ($CAFile) {
        [IO.File]::WriteAllText($CAFile, $pem + "`n")
        Write-Output "wrote the CA bundle to $CAFile"
    }
    $issuer = if ($cert.Subject -eq $cert.Issuer) { 'self-signed: it is its own CA' } else { "issued by $($cert.Issuer): give the harness that CA's certificate instead" }
    Write-Output ''
    Write-Output "The listener's certificate ($issuer):"
    Write-Output $pem
    Write-Output ''
    Write-Output 'In the inventory (the address must be a name or IP address the certificate holds, or set tlsServerName):'
    Write-Output ('  ' + (Get-InventoryLine -Port $Port -CAFile $CAFile))
}

# Dot-sourced (by its Pester tests), the script only defines its functions.
if ($MyInvocation.InvocationName -ne '.') {
    Invoke-PrepareWinRM @PSBoundParameters
}
