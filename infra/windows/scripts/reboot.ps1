# winconform-step: reboot
# parameters: none
# Restarts the machine. The connection usually drops before an answer comes.
Write-Status ([ordered]@{ changed = $true })
Restart-Computer -Force
