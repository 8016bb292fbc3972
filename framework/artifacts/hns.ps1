# The Windows node's network state as HNS holds it, as JSON: its networks,
# endpoints and policy lists. A HostProcess pod runs it with the host's
# PowerShell; the cmdlets are the HostNetworkingService module's, which
# Windows Server 2019 and later ship. A cmdlet the host lacks is named in
# the output, not an error.
$ErrorActionPreference = 'Continue'
Import-Module HostNetworkingService -ErrorAction SilentlyContinue
$state = [ordered]@{}
foreach ($pair in @(@('networks', 'Get-HnsNetwork'), @('endpoints', 'Get-HnsEndpoint'), @('policyLists', 'Get-HnsPolicyList'))) {
    $name, $cmdlet = $pair
    if (Get-Command $cmdlet -ErrorAction SilentlyContinue) {
        try {
            $state[$name] = @(& $cmdlet)
        } catch {
            $state[$name] = "$cmdlet failed: $($_.Exception.Message)"
        }
    } else {
        $state[$name] = "$cmdlet is not on this host"
    }
}
$state | ConvertTo-Json -Depth 8
