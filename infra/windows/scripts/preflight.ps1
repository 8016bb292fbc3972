# winconform-step: preflight
# parameters: none
# Reports the Windows build (major.minor.build.UBR), the host name, whether
# the account is an administrator, and the boot time. It changes nothing; the
# harness checks the build.
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

Write-Status ([ordered]@{
    changed          = $false
    build            = $build
    productName      = [string]$cv.ProductName
    installationType = $installationType
    hostname         = [Environment]::MachineName
    user             = $identity.Name
    admin            = $admin
    bootTime         = $os.LastBootUpTime.ToUniversalTime().ToString('o')
})
