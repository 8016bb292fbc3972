// Package hyperv is the VM provider "hyperv": it makes the harness's
// Windows VMs on a Hyper-V host, running PowerShell there over WinRM (the
// harness's own client, infra/windows/remote: NTLM, every message sealed,
// by default). The CLI imports it for its registration.
//
// # The VM file
//
//	provider: hyperv
//	connection:
//	  endpoint: hv01.lab                # the host's name or address alone
//	  user: LAB\winconform              # an administrator, or in Hyper-V Administrators
//	  credentials:
//	    password: {env: HYPERV_PASSWORD}
//	image: D:\golden\win2022.vhdx       # the golden VHDX, on the host's own disks
//	count: 2
//	machine:
//	  user: Administrator
//	  passwordFrom: {env: WINDOWS_ADMIN_PASSWORD}
//	hyperv:
//	  switch: k8s                       # the virtual switch the VMs connect to
//	  vhdxDir: D:\winconform            # the harness's own directory on the host
//	  generation: 2                     # 2 (UEFI, default) or 1 (BIOS)
//	  secureBootTemplate: MicrosoftWindows   # or MicrosoftUEFICertificateAuthority, OpenSourceShieldedVM, off
//	  winrm: {port: 5985}               # as an inventory's winrm block: https, port, caBundle, insecure, tlsServerName, auth
//
// # What it does on the host
//
// Every action is one embedded script (scripts/, checked by make pscheck,
// with Pester tests for the Windows runners), its parameters quoted with
// windows.QuotePS:
//
//   - Open (hyperv-host): the Hyper-V module is there (Get-Command
//     Hyper-V\New-VM, as hashicorp/vagrant's check_hyperv.ps1 asks), the
//     account may use it, the switch and the VHDX directory exist.
//   - Create (hyperv-create): in <vhdxDir>\<run ID>\<machine>, a
//     differencing disk whose parent is the golden image (New-VHD
//     -ParentPath -Differencing), the VM on it (New-VM -Generation
//     -MemoryStartupBytes -VHDPath -SwitchName, its configuration in the
//     same folder), tagged by the same script (Set-VM -Notes: New-VM takes
//     no notes), automatic checkpoints off, secure boot set
//     (Set-VMFirmware), started. A failure removes what it made.
//   - Delete (hyperv-delete): Stop-VM -TurnOff, Remove-VM (which keeps the
//     disks), then the machine's folder; nothing outside vhdxDir.
//   - List (hyperv-list): the VMs whose Notes have a winconform-run= line,
//     and the machine folders no such VM uses (a Create cut short between
//     New-VHD and Set-VM -Notes), whose ID is "folder:<run>\<machine>".
//   - Addresses (hyperv-addresses): Get-VMNetworkAdapter's IPAddresses,
//     which the guest's integration services report through KVP: none
//     until they run, and a Windows guest's 169.254.x.y address until DHCP
//     answers (hashicorp/vagrant#9064, #9532).
//   - ConsoleLog (hyperv-console): Hyper-V keeps no console log. A COM port
//     can be a named pipe (Set-VMComPort -Path \\.\pipe\...), but a pipe
//     keeps nothing written while no client reads it, and a reader on the
//     host would have to outlive the WinRM command that starts it; and a
//     Windows guest writes nothing there unless its image turns EMS on. So
//     the console log is what the host knows instead: the VM's state, its
//     integration services (Heartbeat "No Contact": the guest never ran
//     them), the KVP addresses, and the Hyper-V-Worker-Admin and
//     Hyper-V-VMMS-Admin events whose message names the VM's ID (the
//     filter microsoft/openvmm's petri uses), its boot events (18601 to
//     18605) named.
//
// The golden image and vhdxDir are on the host's own disks: over WinRM the
// host cannot reach a share with the harness's credentials (the second hop
// of PowerShell remoting).
package hyperv
