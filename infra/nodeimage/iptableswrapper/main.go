// Command iptables-wrapper stands in for iptables, iptables-save,
// iptables-restore and their ip6tables twins in the locally built kube-proxy
// and flannel images. Debian ships two iptables back ends (legacy and nft) and
// a host-network pod must write its rules to the one the node uses. On first
// use it finds that back end from the rules already present (kubelet's hint
// chains first, then the larger rule count, as kind's node entrypoint and the
// upstream iptables wrappers decide), points the plain names at it, and
// executes the real binary; later calls go straight to the real binary.
//
// It is compiled by infra/nodeimage from this file alone, so it imports only
// the standard library.
package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

const sbin = "/usr/sbin"

// plainNames are the commands the wrapper answers for.
var plainNames = []string{
	"iptables", "iptables-save", "iptables-restore",
	"ip6tables", "ip6tables-save", "ip6tables-restore",
}

func main() {
	name := filepath.Base(os.Args[0])
	mode := detect(run)
	relink(sbin, mode)
	target := filepath.Join(sbin, "xtables-"+mode+"-multi")
	err := syscall.Exec(target, append([]string{name}, os.Args[1:]...), os.Environ())
	fmt.Fprintf(os.Stderr, "iptables-wrapper: exec %s: %v\n", target, err)
	os.Exit(1)
}

// run returns what command prints, or nothing when it fails or hangs.
func run(command string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, _ := exec.CommandContext(ctx, filepath.Join(sbin, command)).Output()
	return string(out)
}

// detect picks "nft" or "legacy" from the rules each back end holds.
func detect(save func(command string) string) string {
	legacy := save("iptables-legacy-save") + save("ip6tables-legacy-save")
	nft := save("iptables-nft-save") + save("ip6tables-nft-save")
	for _, hint := range []string{"KUBE-IPTABLES-HINT", "KUBE-KUBELET-CANARY"} {
		if strings.Contains(nft, ":"+hint) {
			return "nft"
		}
		if strings.Contains(legacy, ":"+hint) {
			return "legacy"
		}
	}
	if countRules(legacy) >= countRules(nft) {
		return "legacy"
	}
	return "nft"
}

func countRules(save string) int {
	n := 0
	for _, line := range bytes.Split([]byte(save), []byte("\n")) {
		if bytes.HasPrefix(line, []byte("-")) {
			n++
		}
	}
	return n
}

// relink points the plain names at the chosen back end, so the decision is
// made once per container. Failure (a read-only root) only costs a detection
// per call.
func relink(dir, mode string) {
	target := "xtables-" + mode + "-multi"
	for _, n := range plainNames {
		tmp := filepath.Join(dir, "."+n+".tmp")
		_ = os.Remove(tmp)
		if err := os.Symlink(target, tmp); err != nil {
			return
		}
		if err := os.Rename(tmp, filepath.Join(dir, n)); err != nil {
			_ = os.Remove(tmp)
			return
		}
	}
}
