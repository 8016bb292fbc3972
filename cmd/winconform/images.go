package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/spf13/cobra"

	"github.com/winconform/winconform/images"
)

// imagesCmd lists the images the suites use and pushes the probe image for
// clusters with Windows nodes, which pull it from a registry.
func imagesCmd() *cobra.Command {
	var overrides string
	cmd := &cobra.Command{
		Use:   "images",
		Short: "List the images the suites use; push the multi-platform probe image",
		Args:  cobra.NoArgs,
	}
	cmd.PersistentFlags().StringVar(&overrides, "overrides", "", "image override file (default: $"+images.OverridesEnv+")")
	load := func() error {
		if overrides != "" {
			if err := images.LoadOverrides(overrides); err != nil {
				return fmt.Errorf("--overrides: %w", err)
			}
			return nil
		}
		_, err := images.FromEnv()
		return err
	}
	cmd.AddCommand(imagesListCmd(load), imagesPushCmd(load))
	return cmd
}

func imagesListCmd(load func() error) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "Print every image name with the reference the suites use (overrides applied)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := load(); err != nil {
				return err
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "NAME\tREFERENCE")
			for _, n := range images.Names() {
				fmt.Fprintf(w, "%s\t%s", n, images.Ref(n))
				if images.Ref(n) != images.Default(n) {
					fmt.Fprintf(w, "\t(default %s)", images.Default(n))
				}
				fmt.Fprintln(w)
			}
			return w.Flush()
		},
	}
}

func imagesPushCmd(load func() error) *cobra.Command {
	var (
		ref      string
		bases    []string
		build    images.ProbeBuild
		insecure bool
	)
	cmd := &cobra.Command{
		Use:   "push",
		Short: "Build the probe image (linux/amd64 and windows/amd64 per Windows release) and push it",
		Long: `Build the probe image index (the Linux image and one Windows image per
release, each on its nanoserver base) and push it to --ref, for clusters with
Windows nodes: each node pulls the variant of its OS and Windows build. Point
the suites at it with an override file (images: probe: REF).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := load(); err != nil {
				return err
			}
			defaults := images.WindowsBases()
			build.Bases = maps.Clone(defaults)
			for _, b := range bases {
				rel, base, ok := strings.Cut(b, "=")
				if _, known := defaults[rel]; !ok || !known {
					return fmt.Errorf("--base %q: want RELEASE=REF with RELEASE one of %s, e.g. ltsc2022=mirror.example.com/nanoserver:ltsc2022 (RELEASE= leaves it out)",
						b, strings.Join(slices.Sorted(maps.Keys(defaults)), ", "))
				}
				if base == "" {
					delete(build.Bases, rel)
				} else {
					build.Bases[rel] = base
				}
			}
			if ref == "" {
				ref = images.Ref("probe")
			}
			if ref == images.Probe {
				return fmt.Errorf("--ref: %s is the probe's local name, which no registry serves: give --ref REGISTRY/REPO:TAG, or point probe at a registry in an override file", ref)
			}
			build.Insecure = insecure
			auth := remote.WithAuthFromKeychain(authn.DefaultKeychain)
			idx, err := images.ProbeIndex(cmd.Context(), build, auth)
			if err != nil {
				return err
			}
			if err := images.PushProbe(cmd.Context(), ref, idx, insecure, auth); err != nil {
				return err
			}
			digest, err := idx.Digest()
			if err != nil {
				return err
			}
			im, err := idx.IndexManifest()
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "pushed %s (%s)\n", ref, digest)
			for _, m := range im.Manifests {
				fmt.Fprintf(out, "  %s %s\n", m.Platform, m.Digest)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&ref, "ref", "", "where to push, REGISTRY/REPO:TAG (default: the probe's reference, overrides applied)")
	cmd.Flags().StringArrayVar(&bases, "base", nil, "Windows base image of a release, RELEASE=REF (repeatable; default: the nanoserver-RELEASE images)")
	cmd.Flags().StringVar(&build.LinuxBinary, "linux-binary", binPath("probe-linux-amd64"), "the Linux probe (make build)")
	cmd.Flags().StringVar(&build.WindowsBinary, "windows-binary", binPath("probe-windows-amd64.exe"), "the Windows probe (make build)")
	cmd.Flags().BoolVar(&insecure, "insecure", false, "allow registries over plain HTTP or with certificates that do not verify")
	return cmd
}
