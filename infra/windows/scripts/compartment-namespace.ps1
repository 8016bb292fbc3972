# winconform-step: compartment-namespace
# parameters: none
# Sets HNS's EnableCompartmentNamespace to 1 (a DWORD under
# HKLM\SYSTEM\CurrentControlSet\Services\hns\State), as image-builder's
# containerd role and AKS's Windows images do: without it, a pod that
# containerd runs reaches an SMB share by its address but not by its name
# (kubernetes-sigs/windows-gmsa#30). Windows reads the value when it makes a
# pod's network compartment: no reboot and no restart of HNS is needed, but
# the pods made before keep their compartments until they are made again.
$key = 'HKLM:\SYSTEM\CurrentControlSet\Services\hns\State'
$name = 'EnableCompartmentNamespace'
$current = Get-ItemProperty -LiteralPath $key -Name $name -ErrorAction SilentlyContinue
$value = $null
if ($null -ne $current) { $value = $current.$name }
$changed = $false
if ($value -ne 1) {
    $r = Invoke-Native -FilePath (Join-Path $env:SystemRoot 'System32\reg.exe') -ArgumentList @('add', 'HKLM\SYSTEM\CurrentControlSet\Services\hns\State', '/v', $name, '/t', 'REG_DWORD', '/d', '1', '/f')
    if ($r.ExitCode -ne 0) { throw "reg add $name failed: $($r.Output -join '; ')" }
    $changed = $true
    if (Test-Path -LiteralPath 'C:\etc\kubernetes\kubelet.conf') {
        Write-Output "$name is set now, on a node that has run pods: the pods made before keep their network compartments until they are made again"
    }
}
Write-Status ([ordered]@{ changed = $changed; enableCompartmentNamespace = 1 })
