# winconform-step: hyperv-addresses
# parameters: VMId
# The VM's addresses as Hyper-V sees them: its network adapters'
# IPAddresses, which the guest's integration services report through KVP
# (empty until they run, link-local first when DHCP has not answered).
$vm = @(Get-WinconformVM -Id $VMId)
if ($vm.Count -eq 0) {
    Write-Status ([ordered]@{ found = $false; addresses = @() })
    return
}
$addresses = @(foreach ($adapter in @(Hyper-V\Get-VMNetworkAdapter -VM $vm[0])) {
    if ($null -ne $adapter.IPAddresses) {
        foreach ($ip in @($adapter.IPAddresses)) { [string]$ip }
    }
})
Write-Status ([ordered]@{ found = $true; state = [string]$vm[0].State; addresses = $addresses })
