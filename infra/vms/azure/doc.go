// Package azure is the VM provider "azure": Windows VMs in an Azure
// subscription, made with the Azure SDK for Go (armcompute, armnetwork,
// armresources; azidentity for the sign-in).
//
// Each run has a resource group of its own, <resourceGroupPrefix>-<run ID>,
// tagged with the run (vms.TagRun, vms.TagCreated) and the VM file's tags.
// It holds the run's virtual network (unless azure.network.subnet names an
// existing subnet), a network security group letting WinRM in from
// azure.network.winrmFrom (only when set), and per machine a VM, its NIC and
// OS disk (both deleted with the VM: their delete options say Delete), and
// a Standard public IP (only with publicIP: true). The VM carries the run's
// tags too. A machine's provider ID is its VM's resource ID; List also
// returns a tagged group that holds no VM, under the group's ID, so that
// down and sweep remove a group whose deletion did not finish.
//
// The VM file's azure block:
//
//	azure:
//	  subscription: <subscription ID>
//	  tenant: <tenant ID>            # with a service principal (connection.user)
//	  location: westeurope
//	  size: Standard_D4s_v3          # must have the VM file's cpus and memory
//	  resourceGroupPrefix: winconform
//	  admin: {user: winadmin, password: {env: WINDOWS_ADMIN_PASSWORD}}  # machine.user's account
//	  network:
//	    subnet: <subnet resource ID> # or addressSpace: 10.240.0.0/16 for a network of the run's own
//	    publicIP: false
//	    winrmFrom: [203.0.113.7/32]
//	  winrmSetup: runCommand         # or none
//	  tags: {team: sig-windows}
//
// connection.user and credentials.clientSecret sign in as a service
// principal; without them the default credential chain is used.
// connection.endpoint names another cloud's Resource Manager (Azure
// Government, Azure China). Open checks the sign-in, the subscription, the
// location, the size, the image (the VM file's image: a gallery image or
// version, a managed image, or publisher:offer:sku:version) and the subnet
// before any machine is made.
package azure
