package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/winconform/winconform/infra/docker"
	"github.com/winconform/winconform/infra/kind"
	"github.com/winconform/winconform/infra/nodeimage"
)

func nodeImageCmd() *cobra.Command {
	var force bool
	cmd := &cobra.Command{
		Use:   "node-image",
		Short: "Build (or find cached) the air-gapped kind node image and print its tag",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			d, err := docker.New()
			if err != nil {
				return err
			}
			if _, err := d.Ping(cmd.Context()); err != nil {
				return err
			}
			tag, err := nodeimage.Ensure(cmd.Context(), d, nodeimage.Spec{
				KubernetesVersion: kind.HarnessKubernetesVersion(),
				CacheDir:          nodeimage.DefaultCacheDir(),
				Force:             force,
				Log:               os.Stderr,
			})
			if err != nil {
				return err
			}
			cmd.Println(tag)
			return nil
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "rebuild even when an image with the same inputs exists")
	return cmd
}
