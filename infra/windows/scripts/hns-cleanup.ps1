# winconform-step: hns-cleanup
# parameters: Networks
# Removes the HNS networks flannel made (flannel.<VNI>, and External, made so
# that the overlay network does not cut the host off). Removing them resets
# the host's network adapter: the connection may drop, and the harness runs
# this step again once the machine answers. $Networks is a list separated by
# '|'; a name ending in '*' is a prefix.
$patterns = @($Networks -split '\|' | Where-Object { $_ -ne '' })
$removed = @()
if (Get-Command -Name Get-HnsNetwork -ErrorAction SilentlyContinue) {
    foreach ($network in @(Get-HnsNetwork)) {
        foreach ($pattern in $patterns) {
            if ($network.Name -like $pattern) {
                $network | Remove-HnsNetwork
                $removed += $network.Name
                break
            }
        }
    }
}
Write-Status ([ordered]@{ changed = ($removed.Count -gt 0); removed = $removed })
