package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// serviceAccountDir is where the kubelet mounts a pod's service account
// token, CA bundle and namespace. A Windows HostProcess container sees the
// host's file system, and its volumes under %CONTAINER_SANDBOX_MOUNT_POINT%.
const serviceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// apiUser is what `probe apiuser` prints: the API server it asked and the
// identity the server gave the pod's token.
type apiUser struct {
	Server   string   `json:"server"`
	Dir      string   `json:"dir"`
	Username string   `json:"username"`
	UID      string   `json:"uid,omitempty"`
	Groups   []string `json:"groups"`
}

// runAPIUser asks the API server, with the pod's service account token and
// CA bundle, who the token belongs to (a SelfSubjectReview, which every
// authenticated identity may create), and prints the answer as JSON. It
// shows that the container reaches the API server in the cluster and is
// known there as its service account.
func runAPIUser(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("apiuser")
	dir := fs.String("sa-dir", "", "the service account directory (default: under $CONTAINER_SANDBOX_MOUNT_POINT when it has one, else "+serviceAccountDir+")")
	server := fs.String("server", "", "the API server's URL (default: https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT)")
	timeout := fs.Duration("timeout", 10*time.Second, "how long to wait for the answer")
	err := fs.Parse(args)
	if err == nil && fs.NArg() > 0 {
		err = fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if err == nil && *timeout <= 0 {
		err = fmt.Errorf("--timeout %s is not positive", *timeout)
	}
	if err != nil {
		return reportArgsError("apiuser", err, stdout, stderr)
	}
	u, err := askAPIUser(ctx, *dir, *server, *timeout)
	if err != nil {
		fmt.Fprintf(stderr, "probe apiuser: %v\n", err)
		return exitFailure
	}
	if err := json.NewEncoder(stdout).Encode(u); err != nil {
		fmt.Fprintf(stderr, "probe apiuser: %v\n", err)
		return exitFailure
	}
	return exitOK
}

// findServiceAccountDir is dir when given, else the first of the usual
// places that holds a token.
func findServiceAccountDir(dir string) (string, error) {
	if dir != "" {
		return dir, nil
	}
	var candidates []string
	if root := os.Getenv("CONTAINER_SANDBOX_MOUNT_POINT"); root != "" {
		candidates = append(candidates, filepath.Join(root, filepath.FromSlash(serviceAccountDir)))
	}
	candidates = append(candidates, filepath.FromSlash(serviceAccountDir))
	for _, c := range candidates {
		if _, err := os.Stat(filepath.Join(c, "token")); err == nil {
			return c, nil
		}
	}
	return "", fmt.Errorf("no service account token in %s (is automountServiceAccountToken off?)", strings.Join(candidates, " or "))
}

// inClusterServer is the API server's URL from the environment the kubelet
// gives every container.
func inClusterServer() (string, error) {
	host, port := os.Getenv("KUBERNETES_SERVICE_HOST"), os.Getenv("KUBERNETES_SERVICE_PORT")
	if host == "" || port == "" {
		return "", errors.New("KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set: not in a pod? (or pass --server)")
	}
	return "https://" + net.JoinHostPort(host, port), nil
}

func askAPIUser(ctx context.Context, dir, server string, timeout time.Duration) (apiUser, error) {
	dir, err := findServiceAccountDir(dir)
	if err != nil {
		return apiUser{}, err
	}
	if server == "" {
		if server, err = inClusterServer(); err != nil {
			return apiUser{}, err
		}
	}
	token, err := os.ReadFile(filepath.Join(dir, "token"))
	if err != nil {
		return apiUser{}, fmt.Errorf("reading the token: %w", err)
	}
	if len(bytes.TrimSpace(token)) == 0 {
		return apiUser{}, fmt.Errorf("the token in %s is empty", dir)
	}
	ca, err := os.ReadFile(filepath.Join(dir, "ca.crt"))
	if err != nil {
		return apiUser{}, fmt.Errorf("reading the CA bundle: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return apiUser{}, fmt.Errorf("%s holds no PEM certificate", filepath.Join(dir, "ca.crt"))
	}
	client := &http.Client{
		Timeout:   timeout,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}, Proxy: nil},
	}
	body := `{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}`
	url := strings.TrimRight(server, "/") + "/apis/authentication.k8s.io/v1/selfsubjectreviews"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return apiUser{}, err
	}
	req.Header.Set("Authorization", "Bearer "+string(bytes.TrimSpace(token)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return apiUser{}, fmt.Errorf("POST %s: %w", url, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return apiUser{}, fmt.Errorf("reading the answer of %s: %w", url, err)
	}
	if resp.StatusCode/100 != 2 {
		return apiUser{}, fmt.Errorf("POST %s: %s: %s", url, resp.Status, firstBytes(data, 300))
	}
	var review struct {
		Status struct {
			UserInfo struct {
				Username string   `json:"username"`
				UID      string   `json:"uid"`
				Groups   []string `json:"groups"`
			} `json:"userInfo"`
		} `json:"status"`
	}
	if err := json.Unmarshal(data, &review); err != nil {
		return apiUser{}, fmt.Errorf("the answer of %s is not a SelfSubjectReview: %w", url, err)
	}
	ui := review.Status.UserInfo
	if ui.Username == "" {
		return apiUser{}, fmt.Errorf("the answer of %s names no user: %s", url, firstBytes(data, 300))
	}
	if ui.Groups == nil {
		ui.Groups = []string{}
	}
	return apiUser{Server: server, Dir: dir, Username: ui.Username, UID: ui.UID, Groups: ui.Groups}, nil
}

func firstBytes(data []byte, n int) string {
	s := strings.TrimSpace(string(data))
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}
