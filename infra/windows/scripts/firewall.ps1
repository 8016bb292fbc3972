# winconform-step: firewall
# parameters: RuleName, Port
# Lets the control plane reach the kubelet: an inbound rule for TCP $Port.
$changed = $false
$rule = Get-NetFirewallRule -Name $RuleName -ErrorAction SilentlyContinue
if ($null -eq $rule) {
    New-NetFirewallRule -Name $RuleName -DisplayName "kubelet (TCP $Port, winconform)" -Direction Inbound -Protocol TCP -LocalPort $Port -Action Allow -Enabled True | Out-Null
    $changed = $true
} elseif ($rule.Enabled.ToString() -ne 'True') {
    Enable-NetFirewallRule -Name $RuleName
    $changed = $true
}
Write-Status ([ordered]@{ changed = $changed; rule = $RuleName; port = [int]$Port })
