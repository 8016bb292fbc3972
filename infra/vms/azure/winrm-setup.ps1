# winrm-setup.ps1: the azure provider runs it through Azure's Run Command
# (RunPowerShellScript, as SYSTEM) once a VM is provisioned, when the VM
# file's azure.winrmSetup is runCommand (the default).
#
# It leaves WinRM as the harness reaches a stock Windows Server: HTTP on
# 5985, NTLM, every message sealed, so AllowUnencrypted and Basic stay
# false. Windows Server runs WinRM with an HTTP listener already, but its
# own firewall rule for the Public profile (WINRM-HTTP-In-TCP-PUBLIC) lets
# in the local subnet only, and an Azure VM's network is Public: this adds
# a rule of its own for the ranges the provider passes (RemoteAddress: the
# VM file's azure.network.winrmFrom, or Any when the network security group
# is what limits them). The account the join uses is Azure's admin.user,
# which Azure makes by renaming the built-in Administrator (SID -500), so
# no LocalAccountTokenFilterPolicy is needed. Running it again changes
# nothing.
param([string]$RemoteAddress = 'Any')
$ErrorActionPreference = 'Stop'

Set-Service -Name WinRM -StartupType Automatic
Start-Service -Name WinRM

$http = @(Get-ChildItem -Path WSMan:\localhost\Listener | Where-Object { $_.Keys -contains 'Transport=HTTP' })
if ($http.Count -eq 0) {
    New-Item -Path WSMan:\localhost\Listener -Transport HTTP -Address * -Force | Out-Null
}

$ranges = @($RemoteAddress -split ',' | Where-Object { $_ -ne '' })
$name = 'winconform-WinRM-HTTP-In'
if ($null -eq (Get-NetFirewallRule -Name $name -ErrorAction SilentlyContinue)) {
    New-NetFirewallRule -Name $name -DisplayName 'winconform WinRM (HTTP-In)' -Direction Inbound -Protocol TCP `
        -LocalPort 5985 -Action Allow -Profile Any -RemoteAddress $ranges | Out-Null
} else {
    Set-NetFirewallRule -Name $name -RemoteAddress $ranges -Enabled True
}
Write-Output 'winconform: WinRM ready'
