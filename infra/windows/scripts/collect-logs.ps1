# winconform-step: collect-logs
# parameters: Item, Lines
# Prints one item of a machine's logs: kubelet, containerd, kube-proxy or
# flannel (the last $Lines lines of each log file), or hns-networks or
# hns-endpoints (as JSON). The status line follows.
$files = @()
switch ($Item) {
    'kubelet' { $files = @(Get-ChildItem -Path 'C:\var\log\kubelet' -File -Filter '*.log' -ErrorAction SilentlyContinue) }
    'containerd' { $files = @(Get-ChildItem -Path 'C:\var\log\containerd' -File -Filter '*.log' -ErrorAction SilentlyContinue) }
    'kube-proxy' { $files = @(Get-ChildItem -Path 'C:\var\log\pods\kube-system_kube-proxy-windows-*' -Recurse -File -Filter '*.log' -ErrorAction SilentlyContinue) }
    'flannel' { $files = @(Get-ChildItem -Path 'C:\var\log\pods\kube-flannel_kube-flannel-ds-windows-*' -Recurse -File -Filter '*.log' -ErrorAction SilentlyContinue) }
    'hns-networks' {
        $networks = @()
        if (Get-Command -Name Get-HnsNetwork -ErrorAction SilentlyContinue) { $networks = @(Get-HnsNetwork) }
        Write-Output (ConvertTo-Json -InputObject $networks -Depth 8)
        Write-Status ([ordered]@{ changed = $false; item = $Item; count = $networks.Count })
        return
    }
    'hns-endpoints' {
        $endpoints = @()
        if (Get-Command -Name Get-HnsEndpoint -ErrorAction SilentlyContinue) { $endpoints = @(Get-HnsEndpoint) }
        Write-Output (ConvertTo-Json -InputObject $endpoints -Depth 8)
        Write-Status ([ordered]@{ changed = $false; item = $Item; count = $endpoints.Count })
        return
    }
    default { throw "unknown log item $Item" }
}
foreach ($file in $files) {
    Write-Output "==> $($file.FullName) <=="
    Get-Content -LiteralPath $file.FullName -Tail ([int]$Lines) | ForEach-Object { Write-Output $_ }
}
Write-Status ([ordered]@{ changed = $false; item = $Item; files = @($files | ForEach-Object { $_.FullName }) })
