// Command upstreamjudge is kubeadm's judgement of a join's files in the
// working directory (upstream.JudgeJoinHere), for the Pester fakes of the
// join's steps: their kubeadm join runs it where the step runs kubeadm
// join, so that a file kubeadm refuses fails the fake too. On Windows it is
// kubeadm's Windows build that judges.
//
//	upstreamjudge kubeadm-join CONFIG [KUBELET-CONFIGURATION]
//
// prints what kubeadm made of them as JSON (upstream.JoinResult), or
// kubeadm's error and exits 1. KUBELET-CONFIGURATION is the cluster's
// KubeletConfiguration, kind's when none is given.
package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/winconform/winconform/internal/kubelines"
	"github.com/winconform/winconform/testing/upstream"
)

func main() {
	if len(os.Args) < 3 || len(os.Args) > 4 || os.Args[1] != "kubeadm-join" {
		fmt.Fprintln(os.Stderr, "usage: upstreamjudge kubeadm-join CONFIG [KUBELET-CONFIGURATION]")
		os.Exit(2)
	}
	base := upstream.KindKubelet(kubelines.Default())
	if len(os.Args) == 4 {
		var err error
		if base, err = os.ReadFile(os.Args[3]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	}
	// kubeadm prints its progress on standard output: the JSON goes there
	// alone.
	stdout := os.Stdout
	os.Stdout = os.Stderr
	res, err := upstream.JudgeJoinHere(os.Args[2], base)
	os.Stdout = stdout
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := json.NewEncoder(os.Stdout).Encode(res); err != nil {
		os.Exit(1)
	}
}
