package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/winconform/winconform/infra/nodeimage"
	"github.com/winconform/winconform/internal/kubelines"
	"github.com/winconform/winconform/internal/version"
)

// versionInfo is what `winconform version` says: the build, and the
// versions of what the harness installs unless told otherwise.
type versionInfo struct {
	version.Info
	Kubernetes        string   `json:"kubernetes"`
	KubernetesLines   []string `json:"kubernetesLines"`
	Kind              string   `json:"kind"`
	WindowsContainerd string   `json:"windowsContainerd"`
	NodeContainerd    string   `json:"nodeImageContainerd"`
	NodeRunc          string   `json:"nodeImageRunc"`
}

func currentVersion() versionInfo {
	v := versionInfo{
		Info:              version.Get(),
		Kubernetes:        kubelines.Default().Version,
		Kind:              nodeimage.KindVersion(),
		WindowsContainerd: kubelines.DefaultContainerd,
		NodeContainerd:    nodeimage.ContainerdVersion,
		NodeRunc:          nodeimage.RuncVersion,
	}
	for _, l := range kubelines.Lines() {
		v.KubernetesLines = append(v.KubernetesLines, l.String())
	}
	return v
}

func versionCmd() *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print winconform's version and commit, and the Kubernetes, kind and containerd versions it uses by default",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := currentVersion()
			out := cmd.OutOrStdout()
			switch output {
			case "json":
				data, err := json.MarshalIndent(v, "", "  ")
				if err != nil {
					return err
				}
				_, err = fmt.Fprintln(out, string(data))
				return err
			case "", "text":
			default:
				return usage(fmt.Errorf("--output %q: want text or json", output))
			}
			w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
			fmt.Fprintf(w, "winconform\t%s\n", v.Info)
			if v.CommitTime != "" {
				fmt.Fprintf(w, "commit time\t%s\n", v.CommitTime)
			}
			fmt.Fprintf(w, "built with\t%s\n", v.Go)
			fmt.Fprintf(w, "kubernetes\t%s by default; supported lines %s\n", v.Kubernetes, strings.Join(v.KubernetesLines, ", "))
			fmt.Fprintf(w, "kind\t%s\n", v.Kind)
			fmt.Fprintf(w, "containerd\t%s on Windows nodes unless the inventory says otherwise; %s (runc %s) in a locally built node image\n", v.WindowsContainerd, v.NodeContainerd, v.NodeRunc)
			return w.Flush()
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "text or json")
	return cmd
}
