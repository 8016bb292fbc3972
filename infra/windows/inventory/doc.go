// Package inventory loads the inventory file: the YAML list of the remote
// Windows machines that the harness joins, over WinRM, to its kind control
// plane as Kubernetes nodes.
//
// # Format
//
//	defaults:                    # optional: applies to every machine that does not set the field
//	  winrm: {https: true, caBundle: ./ca.pem}
//	  user: Administrator
//	  passwordFrom: {env: WINDOWS_ADMIN_PASSWORD}
//	machines:                    # at least one
//	- name: win-2022-a           # unique node name: a lower-case DNS label (at most 63)
//	  address: 192.168.56.20     # IP address or DNS name, no scheme, no port
//	  nodeIP: 10.0.0.20          # optional: the node's address on the cluster's network (several NICs)
//	  winrm:
//	    port: 5986               # 1..65535; default 5985 without HTTPS, 5986 with
//	    https: true              # default false: a stock Windows Server listens for HTTP only
//	    caBundle: ./ca.pem       # PEM certificates trusted for the machine's certificate
//	    insecure: false          # skip the certificate check (HTTPS only; not with caBundle)
//	    tlsServerName: win-2022-a.lab  # name to verify in the certificate
//	    auth: ntlm               # ntlm (default; every message sealed, also over HTTP) or basic (HTTPS only)
//	  user: Administrator        # required, here or in defaults
//	  passwordFrom:              # required, here or in defaults: exactly one of
//	    env: WIN_A_PASSWORD      #   a variable, set and non-empty when the file is loaded
//	    # file: ./secrets/win-a  #   a file holding only the password (a final newline is trimmed)
//	  expectedBuild: "10.0.20348"  # the Windows build the machine must have
//	  labels: {topology.kubernetes.io/zone: lab-1}
//	  taints: ["os=windows:NoSchedule"]   # key=value:Effect or key:Effect
//	  binaries:                  # component -> http(s) URL or absolute path on the machine
//	    containerd: https://example.com/containerd.zip
//	    kubelet: 'C:\install\kubelet.exe'
//	    images: 'C:\install\node-images.tar'   # an image archive the join imports into containerd
//	  kubeletVersion: v1.36.3    # the node's kubelet, kubeadm and kube-proxy, when not the cluster's version
//	  containerdVersion: 2.3.7   # the node's containerd; default: the version binaries.containerd names, else 2.3.7
//	  defenderExclusions: true   # default false
//	  cloudMetadataRoute: true   # a cloud VM: the host's route to 169.254.169.254; default false
//	  prepullImages: true        # pull the node's images into containerd at the join; default false
//	  underlay:                  # how the machine reaches the kind network (infra/underlay)
//	    shape: routed            # routed (default: through the kind host), same-host (a VM on the kind network's bridge) or none
//	    via: 192.168.56.1        # routed: the kind host's address the machine reaches (default: this host's address toward it)
//
// Defaults apply field by field: within winrm and underlay each field on its own, labels
// and binaries key by key (the machine's value wins), every other field
// whole. A field written empty on a machine drops the default for the
// built-in one: port: ~ takes the port that goes with https, and caBundle: ""
// leaves the machine without the defaults' CA bundle (and so free to set
// insecure: true or https: false). Defaults cannot set name, address or
// nodeIP.
//
// With nothing set, a machine is reached as a stock Windows Server can be:
// HTTP on 5985, NTLM, every message sealed. Basic over HTTP is refused
// (its password would travel in clear, and a stock server refuses it).
//
// Relative paths (caBundle, passwordFrom.file) are relative to the
// inventory file's directory. Paths in binaries are on the Windows machine.
//
// Passwords never appear in the file: a password key anywhere is refused,
// in favour of passwordFrom. A loaded password is a Secret, which prints and
// encodes as "********".
//
// # Errors
//
// Load and Parse check everything and return one *Error listing every
// problem, one per line, each naming the file, the machine (by name and
// position, counting from 1), the field, what is wrong, and the fix:
//
//	inventory.yaml: machine "win-a" (#1): winrm.port: 70000 is out of range (line 9); use a port from 1 to 65535: 5986 for WinRM over HTTPS, 5985 over HTTP
//
// Problems outside a machine name the field from the top of the file
// (defaults.winrm.auth, machines, yaml for the syntax). A problem with a
// value a machine takes from defaults is reported once, under defaults.
package inventory
