# winconform-step: ping
# parameters: none
# Answers with the machine's boot time: the harness polls it while a machine
# reboots, and knows it is back when the boot time has changed.
$os = Get-CimInstance -ClassName Win32_OperatingSystem
Write-Status ([ordered]@{
    changed  = $false
    hostname = [Environment]::MachineName
    bootTime = $os.LastBootUpTime.ToUniversalTime().ToString('o')
})
