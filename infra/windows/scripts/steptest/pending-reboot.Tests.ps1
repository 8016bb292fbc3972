# Pester tests of lib.ps1's Get-PendingReboot on the runner's real registry:
# it reads the keys Windows keeps for a pending reboot without failing, and
# names each reason as preflight.json's cases do.
Describe 'Get-PendingReboot' {
    BeforeAll {
        . (Join-Path (Split-Path -Parent $PSScriptRoot) 'lib.ps1')
    }

    It 'lists only the known reasons, from the real registry' {
        $known = @('Component Based Servicing\RebootPending', 'WindowsUpdate\Auto Update\RebootRequired', 'Session Manager\PendingFileRenameOperations')
        $reasons = @(Get-PendingReboot)
        foreach ($r in $reasons) { $known | Should -Contain $r }
        $cbs = Test-Path -LiteralPath 'HKLM:\SOFTWARE\Microsoft\Windows\CurrentVersion\Component Based Servicing\RebootPending'
        ($reasons -contains 'Component Based Servicing\RebootPending') | Should -Be $cbs
    }
}
