package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/winconform/winconform/infra/docker"
	"github.com/winconform/winconform/infra/nodeimage"
	"github.com/winconform/winconform/internal/kubelines"
)

func nodeImageCmd() *cobra.Command {
	var force bool
	var version string
	cmd := &cobra.Command{
		Use:   "node-image",
		Short: "Build (or find cached) the air-gapped kind node image of a Kubernetes line and print its tag",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, release, err := kubelines.Resolve(version)
			if err != nil {
				return usage(fmt.Errorf("--kubernetes-version: %w", err))
			}
			d, err := docker.New()
			if err != nil {
				return err
			}
			if _, err := d.Ping(cmd.Context()); err != nil {
				return err
			}
			tag, err := nodeimage.Ensure(cmd.Context(), d, nodeimage.Spec{
				KubernetesVersion: release,
				CacheDir:          nodeimage.DefaultCacheDir(),
				Force:             force,
				Log:               errOut,
			})
			if err != nil {
				return err
			}
			cmd.Println(tag)
			return nil
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "rebuild even when an image with the same inputs exists")
	cmd.Flags().StringVar(&version, "kubernetes-version", kubelines.Default().Version, "Kubernetes release, on a supported line: "+kubelines.Supported()+"; a line's name (1.36) means its newest patch")
	return cmd
}
