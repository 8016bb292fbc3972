# winconform-step: collect-logs
# parameters: Item, Lines
# Prints one item of a machine's logs: kubelet, containerd, kube-proxy or
# flannel (the last $Lines lines of each log file), containerd-config (its
# config.toml), hns-networks or hns-endpoints (as JSON), service-events (the
# System log's service-control errors: 7000 a service did not start, 7009 it
# did not answer in time, 7034 it ended unexpectedly), kubelet-service (the
# kubelet's command line as the service manager holds it), routes
# (route.exe print) or ipconfig (ipconfig.exe /all). The status line follows.
$files = @()
switch ($Item) {
    'kubelet' { $files = @(Get-ChildItem -Path 'C:\var\log\kubelet' -File -Filter '*.log' -ErrorAction SilentlyContinue) }
    'containerd' { $files = @(Get-ChildItem -Path 'C:\var\log\containerd' -File -Filter '*.log' -ErrorAction SilentlyContinue) }
    'kube-proxy' { $files = @(Get-ChildItem -Path 'C:\var\log\pods\kube-system_kube-proxy-windows-*' -Recurse -File -Filter '*.log' -ErrorAction SilentlyContinue) }
    'flannel' { $files = @(Get-ChildItem -Path 'C:\var\log\pods\kube-flannel_kube-flannel-ds-windows-*' -Recurse -File -Filter '*.log' -ErrorAction SilentlyContinue) }
    'containerd-config' { $files = @(Get-ChildItem -Path 'C:\Program Files\containerd' -File -Filter 'config.toml' -ErrorAction SilentlyContinue) }
    'service-events' {
        # Newest first from Get-WinEvent; none found is an error it reports.
        $events = @(Get-WinEvent -FilterHashtable @{ LogName = 'System'; ProviderName = 'Service Control Manager'; Id = 7000, 7009, 7034 } -MaxEvents ([int]$Lines) -ErrorAction SilentlyContinue)
        [array]::Reverse($events)
        foreach ($e in $events) {
            Write-Output ('{0} {1} {2}' -f $e.TimeCreated.ToUniversalTime().ToString('o'), $e.Id, ([string]$e.Message -replace '\s*\r?\n\s*', ' ').Trim())
        }
        Write-Status ([ordered]@{ changed = $false; item = $Item; count = $events.Count })
        return
    }
    'kubelet-service' {
        $service = Get-CimInstance -ClassName Win32_Service -Filter "Name='kubelet'"
        if ($null -ne $service) { Write-Output $service.PathName }
        Write-Status ([ordered]@{ changed = $false; item = $Item; registered = ($null -ne $service) })
        return
    }
    { $_ -in 'routes', 'ipconfig' } {
        $program = @{ routes = @('ROUTE.EXE', 'print'); ipconfig = @('ipconfig.exe', '/all') }[$Item]
        $r = Invoke-Native -FilePath (Join-Path $env:SystemRoot ('System32\' + $program[0])) -ArgumentList @($program[1])
        $r.Output | ForEach-Object { Write-Output $_ }
        Write-Status ([ordered]@{ changed = $false; item = $Item; exitCode = $r.ExitCode })
        return
    }
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
