# winconform-step: preflight
# parameters: none
# Reports the Windows build (major.minor.build.UBR), the host name, whether
# the account is an administrator, the boot time, what makes a reboot pending
# (Get-PendingReboot), the system drive's free and total bytes, and the
# machine's clock in UTC (Win32_OperatingSystem's LocalDateTime, which the
# harness compares with the API server's), and its routable IPv4 addresses
# (Get-RoutableAddress: with more than one the node's address must be
# given). It changes nothing; the harness judges them.
$cv = Get-ItemProperty -LiteralPath 'HKLM:\SOFTWARE\Microsoft\Windows NT\CurrentVersion'
$major = 10
$minor = 0
$ubr = 0
if ($cv.PSObject.Properties['CurrentMajorVersionNumber']) { $major = [int]$cv.CurrentMajorVersionNumber }
if ($cv.PSObject.Properties['CurrentMinorVersionNumber']) { $minor = [int]$cv.CurrentMinorVersionNumber }
if ($cv.PSObject.Properties['UBR']) { $ubr = [int]$cv.UBR }
$build = '{0}.{1}.{2}.{3}' -f $major, $minor, $cv.CurrentBuildNumber, $ubr

$installationType = ''
if ($cv.PSObject.Properties['InstallationType']) { $installationType = [string]$cv.InstallationType }

$identity = [Security.Principal.WindowsIdentity]::GetCurrent()
$admin = Test-Administrator
$os = Get-CimInstance -ClassName Win32_OperatingSystem
$disk = Get-CimInstance -ClassName Win32_LogicalDisk -Filter "DeviceID='$env:SystemDrive'"

Write-Status ([ordered]@{
    changed          = $false
    build            = $build
    productName      = [string]$cv.ProductName
    installationType = $installationType
    hostname         = [Environment]::MachineName
    user             = $identity.Name
    admin            = $admin
    bootTime         = $os.LastBootUpTime.ToUniversalTime().ToString('o')
    pendingReboot    = @(Get-PendingReboot)
    freeBytes        = [string][int64]$disk.FreeSpace
    sizeBytes        = [string][int64]$disk.Size
    utcNow           = $os.LocalDateTime.ToUniversalTime().ToString('o')
    addresses        = @(Get-RoutableAddress)
})
