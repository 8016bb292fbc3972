# Wait-Http: GET a URI until it answers, every IntervalSeconds, for at most
# Seconds; the answer, or an error naming the URI. Dot-sourced by the
# Windows runners' test scripts.
function Wait-Http {
    param([string] $Uri, [int] $Seconds = 60, [int] $IntervalSeconds = 1)
    $deadline = (Get-Date).AddSeconds($Seconds)
    while ($true) {
        try {
            return Invoke-WebRequest -UseBasicParsing -Uri $Uri -TimeoutSec 5
        } catch {
            if ((Get-Date) -gt $deadline) { throw "$Uri did not answer within ${Seconds}s: $_" }
            Start-Sleep -Seconds $IntervalSeconds
        }
    }
}
