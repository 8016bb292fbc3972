# winconform-step: probe
# parameters: Source, Destination
# Puts the network matrix's probe program at $Destination, from a URL or a
# path on the machine. Nothing changes when the same file is there.
$changed = $false
$state = Get-State 'probe'
$present = Test-Path -LiteralPath $Destination
if (Test-Url $Source) {
    $current = $present -and (Get-StateValue $state 'source') -eq $Source
} else {
    if (-not (Test-Path -LiteralPath $Source)) { throw "$Source does not exist on this machine" }
    $current = $present -and ((Get-FileHash -LiteralPath $Source -Algorithm SHA256).Hash -eq (Get-FileHash -LiteralPath $Destination -Algorithm SHA256).Hash)
}
if (-not $current) {
    New-Item -ItemType Directory -Force -Path (Split-Path -Parent $Destination) | Out-Null
    $file = Get-SourceFile -Source $Source -Destination (Join-Path (New-WorkDir 'probe') 'probe.exe')
    Copy-Item -LiteralPath $file -Destination $Destination -Force
    Set-State 'probe' ([ordered]@{ source = $Source })
    $changed = $true
}
$hash = (Get-FileHash -LiteralPath $Destination -Algorithm SHA256).Hash.ToLowerInvariant()
Write-Status ([ordered]@{ changed = $changed; path = $Destination; sha256 = $hash })
