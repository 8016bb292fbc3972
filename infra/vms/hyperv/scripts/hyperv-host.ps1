# winconform-step: hyperv-host
# parameters: VhdxDir, Switch
# Says whether this host can make the harness's VMs: the Hyper-V module, the
# account's right to use it, the virtual switch, the VHDX directory.
$module = $null -ne (Get-Command -Name 'Hyper-V\New-VM' -ErrorAction SilentlyContinue)
$switches = @()
$access = ''
if ($module) {
    try {
        $switches = @(Hyper-V\Get-VMSwitch | ForEach-Object { [string]$_.Name })
    } catch {
        # Not an administrator nor in Hyper-V Administrators: the cmdlets
        # refuse ("You do not have the required permission...").
        $access = $_.Exception.Message
    }
}
Write-Status ([ordered]@{
    computer     = [Environment]::MachineName
    hyperV       = $module
    access       = $access
    switches     = $switches
    switchFound  = ($switches -contains $Switch)
    vhdxDirFound = (Test-Path -LiteralPath $VhdxDir -PathType Container)
})
