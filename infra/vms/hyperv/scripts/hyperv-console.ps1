# winconform-step: hyperv-console
# parameters: VMId
# What the host knows of a VM, for the run's artifacts in place of a console
# log (Hyper-V keeps none): its state, its integration services' status
# (Heartbeat: No Contact means the guest never ran them), the addresses KVP
# reports, and the events of the Hyper-V worker and management service
# whose message names the VM's ID, since it was made.
$vm = @(Get-WinconformVM -Id $VMId)
if ($vm.Count -eq 0) {
    Write-Status ([ordered]@{ found = $false })
    return
}
$vm = $vm[0]
$services = @(Hyper-V\Get-VMIntegrationService -VM $vm | ForEach-Object {
    [ordered]@{ name = [string]$_.Name; enabled = [bool]$_.Enabled; status = [string]$_.PrimaryStatusDescription }
})
$addresses = @(foreach ($adapter in @(Hyper-V\Get-VMNetworkAdapter -VM $vm)) {
    if ($null -ne $adapter.IPAddresses) {
        foreach ($ip in @($adapter.IPAddresses)) { [string]$ip }
    }
})
$events = @()
$eventsError = ''
try {
    $filter = @{ LogName = @('Microsoft-Windows-Hyper-V-Worker-Admin', 'Microsoft-Windows-Hyper-V-VMMS-Admin'); StartTime = $vm.CreationTime }
    $events = @(Get-WinEvent -FilterHashtable $filter -Oldest | Where-Object { [string]$_.Message -like ('*' + $VMId + '*') } |
        Select-Object -Last 200 | ForEach-Object {
            [ordered]@{ time = $_.TimeCreated.ToUniversalTime().ToString('o'); id = [int]$_.Id; level = [string]$_.LevelDisplayName; log = [string]$_.LogName; message = [string]$_.Message }
        })
} catch {
    # None is an error of its own ("No events were found that match the
    # specified selection criteria").
    if ($_.FullyQualifiedErrorId -notlike 'NoMatchingEventsFound*') { $eventsError = $_.Exception.Message }
}
Write-Status ([ordered]@{
    found       = $true
    computer    = [Environment]::MachineName
    name        = [string]$vm.Name
    state       = [string]$vm.State
    status      = [string]$vm.Status
    uptime      = [string]$vm.Uptime
    created     = $vm.CreationTime.ToUniversalTime().ToString('o')
    services    = $services
    addresses   = $addresses
    events      = $events
    eventsError = $eventsError
})
