// Package vsphere is the vms provider of a vCenter: each machine is a
// linked clone of a template's snapshot (image-builder's Windows OVA,
// imported as a template), powered on in a cluster or resource pool.
//
//	provider: vsphere
//	connection:
//	  endpoint: vcenter.lab.example      # or https://vcenter.lab.example/sdk
//	  user: winconform@vsphere.local
//	  credentials:
//	    password: {env: VSPHERE_PASSWORD}
//	image: windows-2022-kube-v1.34.4     # the template, by name or inventory path
//	vsphere:
//	  datacenter: DC1                    # optional when the vCenter has one
//	  cluster: Cluster1                  # or resourcePool; optional when there is one
//	  resourcePool: ci                   # within cluster, or an inventory path
//	  host: esxi-1.lab.example           # optional; a cluster without DRS needs it
//	  datastore: ds1                     # the delta disks; default: the template's
//	  folder: winconform                 # the VM folder; default: the datacenter's
//	  network: VM Network                # the first NIC's port group; default: the template's
//	  snapshot: golden                   # default: the template's current snapshot
//	  caBundle: vcenter-ca.pem           # or insecure: true
//
// A machine carries the run tags in its extraConfig, set by the clone
// request itself: winconform.run, winconform.created and (set by a user,
// never by the harness) winconform.keep. They are plain keys, not
// guestinfo.* ones: the guest can neither read nor change them, and the
// property collector reads them back as config.extraConfig. List finds them
// with a container view of the datacenter's VMs; it never lists a template,
// and Delete refuses a VM without winconform.run, so a golden image or
// someone else's VM is never destroyed.
//
// Addresses are what VMware Tools in the guest reports: guest.ipAddress
// (its primary address) first, then every address of guest.net.
//
// Open checks the connection and every name of the block, each error a
// config.Problem naming its field; Create checks the template (image) and
// its snapshot before it clones. The session is kept alive while the
// provider is open (vCenter ends idle API sessions after 30 minutes),
// logged in again when the vCenter ends it anyway, and logged out by Close.
package vsphere
