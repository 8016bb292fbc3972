// Package kubefile reads a kubeconfig a user names through the one door
// for users' files (internal/userfile): a regular file, opened without
// blocking, at most userfile.KubeconfigMax. Every kubeconfig the harness
// reads is read here, never by client-go's own loading from a path.
package kubefile

import (
	"fmt"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/clientcmd/api"

	"github.com/winconform/winconform/internal/userfile"
)

// Load reads the kubeconfig at path, which origin names ("--kubeconfig";
// "" for none), as clientcmd.LoadFromFile does: the paths in it (a
// certificate-authority, a client-key) are made absolute from the file's
// directory.
func Load(origin, path string) (*api.Config, error) {
	data, err := userfile.Read(origin, path, userfile.Kubeconfig)
	if err != nil {
		return nil, err
	}
	cfg, err := clientcmd.Load(data)
	if err != nil {
		return nil, &userfile.Error{Origin: origin, Path: path, Problem: "is not a kubeconfig (" + err.Error() + ")",
			Fix: "pass the kubeconfig of the cluster (kind get kubeconfig, or the cloud's own command, writes one)", Err: err}
	}
	for _, a := range cfg.AuthInfos {
		a.LocationOfOrigin = path
	}
	for _, c := range cfg.Clusters {
		c.LocationOfOrigin = path
	}
	for _, c := range cfg.Contexts {
		c.LocationOfOrigin = path
	}
	if err := clientcmd.ResolveLocalPaths(cfg); err != nil {
		return nil, &userfile.Error{Origin: origin, Path: path, Problem: "names paths that cannot be resolved (" + err.Error() + ")",
			Fix: "write the paths in it as absolute paths", Err: err}
	}
	return cfg, nil
}

// REST is the client configuration of the current context of the
// kubeconfig at path, which origin names: clientcmd.BuildConfigFromFlags
// of the path, read through the door.
func REST(origin, path string) (*rest.Config, error) {
	cfg, err := Load(origin, path)
	if err != nil {
		return nil, err
	}
	return clientcmd.NewDefaultClientConfig(*cfg, &clientcmd.ConfigOverrides{}).ClientConfig()
}

// Clients is the client configuration of the kubeconfig at path (REST),
// each request bounded by timeout (none when 0), and a clientset of it:
// the harness's one way from a kubeconfig file to a cluster's clients.
func Clients(origin, path string, timeout time.Duration) (*rest.Config, kubernetes.Interface, error) {
	cfg, err := REST(origin, path)
	if err != nil {
		return nil, nil, err
	}
	cfg.Timeout = timeout
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("%s %s: %w", origin, path, err)
	}
	return cfg, cs, nil
}
