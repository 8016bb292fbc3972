// Package podexec runs a command in a container through the API server, as
// kubectl exec does (WebSocket, falling back to SPDY), with a context.
package podexec

import (
	"bytes"
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
)

// Client execs into pods of one cluster.
type Client struct {
	Config    *rest.Config
	Clientset kubernetes.Interface
}

// Exec runs command in container of pod and returns what it printed. A
// command that ran and exited non-zero returns its output and an error.
func (c Client) Exec(ctx context.Context, namespace, pod, container string, command []string) (stdout, stderr string, err error) {
	req := c.Clientset.CoreV1().RESTClient().Post().
		Resource("pods").Namespace(namespace).Name(pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{
			Container: container, Command: command, Stdout: true, Stderr: true,
		}, scheme.ParameterCodec)
	ws, err := remotecommand.NewWebSocketExecutor(c.Config, "GET", req.URL().String())
	if err != nil {
		return "", "", err
	}
	spdy, err := remotecommand.NewSPDYExecutor(c.Config, "POST", req.URL())
	if err != nil {
		return "", "", err
	}
	exec, err := remotecommand.NewFallbackExecutor(ws, spdy, func(err error) bool {
		return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
	})
	if err != nil {
		return "", "", err
	}
	var out, errb bytes.Buffer
	err = exec.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: &out, Stderr: &errb})
	if err != nil {
		err = fmt.Errorf("exec in %s/%s: %w", namespace, pod, err)
	}
	return out.String(), errb.String(), err
}
