package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/user"
	"strconv"
	"time"
)

// The tool subcommands let tests look inside a container that has no shell
// (Windows nanoserver, or the probe's own scratch image) with one program
// on both OSes.

// runEnv prints the value of environment variable NAME; exit 1 when unset.
func runEnv(args []string, stdout, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintln(stderr, "probe env: want exactly one variable name")
		return exitUsage
	}
	v, ok := os.LookupEnv(args[0])
	if !ok {
		fmt.Fprintf(stderr, "probe env: %s is not set\n", args[0])
		return exitFailure
	}
	fmt.Fprint(stdout, v)
	return exitOK
}

// runCat prints the content of file PATH; exit 1 with the OS error otherwise.
func runCat(args []string, stdout, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintln(stderr, "probe cat: want exactly one path")
		return exitUsage
	}
	data, err := os.ReadFile(args[0])
	if err != nil {
		fmt.Fprintf(stderr, "probe cat: %v\n", err)
		return exitFailure
	}
	stdout.Write(data)
	return exitOK
}

// runWrite writes CONTENT to file PATH; exit 1 with the OS error (a
// read-only mount, say) otherwise.
func runWrite(args []string, stderr io.Writer) int {
	if len(args) != 2 {
		fmt.Fprintln(stderr, "probe write: want a path and the content")
		return exitUsage
	}
	if err := os.WriteFile(args[0], []byte(args[1]), 0o644); err != nil {
		fmt.Fprintf(stderr, "probe write: %v\n", err)
		return exitFailure
	}
	return exitOK
}

// identity is what `probe whoami` prints.
type identity struct {
	UID      string `json:"uid"`
	GID      string `json:"gid"`
	Username string `json:"username"`
}

// runWhoami prints the user the process runs as, as JSON (on Windows the
// username is DOMAIN\User, e.g. "User Manager\ContainerUser").
func runWhoami(args []string, stdout, stderr io.Writer) int {
	if len(args) != 0 {
		fmt.Fprintln(stderr, "probe whoami: takes no arguments")
		return exitUsage
	}
	u, err := user.Current()
	if err != nil {
		// A uid with no user database entry (runAsUser with a number the
		// image does not know) still has ids; Windows has no numeric ones.
		if os.Getuid() < 0 {
			fmt.Fprintf(stderr, "probe whoami: %v\n", err)
			return exitFailure
		}
		u = &user.User{Uid: strconv.Itoa(os.Getuid()), Gid: strconv.Itoa(os.Getgid())}
	}
	json.NewEncoder(stdout).Encode(identity{UID: u.Uid, GID: u.Gid, Username: u.Username})
	return exitOK
}

// runPost sends an empty POST to URL and prints the answer; exit 1 unless 2xx.
func runPost(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintln(stderr, "probe post: want exactly one URL")
		return exitUsage
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, args[0], bytes.NewReader(nil))
	if err != nil {
		fmt.Fprintf(stderr, "probe post: %v\n", err)
		return exitUsage
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Fprintf(stderr, "probe post: %v\n", err)
		return exitFailure
	}
	defer resp.Body.Close()
	io.Copy(stdout, resp.Body)
	if resp.StatusCode/100 != 2 {
		fmt.Fprintf(stderr, "probe post: %s\n", resp.Status)
		return exitFailure
	}
	return exitOK
}
