package main

import (
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/winconform/winconform/internal/atomicfile"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"

	"github.com/winconform/winconform/images"
	"github.com/winconform/winconform/images/suiteimage"
	"github.com/winconform/winconform/infra/kind"
	"github.com/winconform/winconform/infra/sonobuoy"
	"github.com/winconform/winconform/internal/flagvalue"
	"github.com/winconform/winconform/internal/userfile"
)

// sonobuoyCmd runs the suites inside a cluster, as a Sonobuoy plugin.
func sonobuoyCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sonobuoy",
		Short: "Run the suites inside a cluster as a Sonobuoy plugin: the plugin, its images, a run on the local cluster",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(sonobuoyPluginCmd(), sonobuoyImagesCmd(), sonobuoyRunCmd())
	return cmd
}

// pluginFlags choose what the plugin runs, and from which image.
type pluginFlags struct {
	rf          runFlags // suite binary and selection
	image       string
	pullPolicy  string
	strictDrift bool
	overrides   string
}

func (p *pluginFlags) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.Var(flagvalue.Name(&p.rf.binary, binPath("e2e.test"), "the suite binary's path"), "suite-binary", "the suite binary (make build): it checks the selection, and goes into the suite image")
	f.StringVar(&p.rf.suite, "suite", "", "run one area (a package under suites/), e.g. limitations (default: all)")
	f.Var(flagvalue.List(&p.rf.claim, ""), "claim", "run the specs of these claims, e.g. LIM-01 or LIM-01,LIM-02 (repeatable)")
	f.StringVar(&p.rf.labels, "labels", "", "a Ginkgo label filter, passed as --ginkgo.label-filter, e.g. 'os:linux'")
	f.BoolVar(&p.strictDrift, "strict-drift", false, "fail a spec when a documented limitation no longer holds")
	f.Var(flagvalue.Name(&p.image, suiteimage.Suite, "the suite image's reference"), "image", "the suite image the plugin runs (winconform sonobuoy images makes it)")
	f.StringVar(&p.pullPolicy, "image-pull-policy", string(corev1.PullIfNotPresent), "the plugin's image pull policy: Always, IfNotPresent or Never")
	f.StringVar(&p.overrides, "image-overrides", "", "image override file, given to the suites through the plugin's config-map (default: $"+images.OverridesEnv+")")
	p.rf.registerFlakeAttempts(cmd)
}

// plugin checks the selection and the suite flags in extra, and makes the
// plugin definition; it returns the number of specs the plugin will run.
// Nothing reaches a cluster.
func (p *pluginFlags) plugin(ctx context.Context, extra []string) (*sonobuoy.Plugin, int, error) {
	if err := p.rf.checkFilters(); err != nil {
		return nil, 0, err
	}
	args := p.rf.selection()
	if p.strictDrift {
		args = append(args, "--strict-drift")
	}
	args = append(args, extra...)

	overrides, origin := p.overrides, "--image-overrides"
	if overrides == "" {
		overrides, origin = os.Getenv(images.OverridesEnv), "$"+images.OverridesEnv
	}
	var overrideData []byte
	if overrides != "" {
		data, err := userfile.Read(origin, overrides, userfile.Config("image override file"))
		if err != nil {
			return nil, 0, err
		}
		if _, err := images.ParseOverrides(overrides, data); err != nil {
			return nil, 0, err
		}
		overrideData = data
	}
	plugin, err := sonobuoy.New(sonobuoy.Options{Image: p.image, PullPolicy: corev1.PullPolicy(p.pullPolicy), Args: args, ImageOverrides: overrideData,
		FlakeAttempts: p.rf.flakeAttempts})
	if err != nil {
		return nil, 0, err
	}
	check := args
	if overrides != "" {
		check = append(append([]string(nil), args...), "--image-overrides="+overrides)
	}
	n, err := checkSelection(ctx, p.rf.binary, check)
	if err != nil {
		return nil, 0, p.rf.unknownSuite(err)
	}
	return plugin, n, nil
}

func sonobuoyPluginCmd() *cobra.Command {
	var (
		pf     pluginFlags
		output string
	)
	cmd := &cobra.Command{
		Use:   "plugin [SUITE] [-- suite flags]",
		Short: "Write the Sonobuoy plugin definition that runs the suites inside a cluster",
		Long: `Write the Sonobuoy plugin definition (YAML) that runs the suite binary inside
the cluster, from the suite image (winconform sonobuoy images), with the
selection (--suite, --claim, --labels) and any suite flags after --. The
selection is checked first, with the suite binary's dry run: an unknown suite,
claim, label filter or flag, or a selection that matches no spec, is refused
and nothing is written.

Run it with the aggregator image built from Sonobuoy ` + suiteimage.SonobuoyVersion + ` (winconform
sonobuoy images), and a Sonobuoy configuration that has the workers reach the
aggregator by its Service (a Sonobuoy built with Go 1.24.8, 1.25.2 or later
cannot parse the address it advertises by default):
  echo '{"Server": {"advertiseaddress": "` + sonobuoy.AggregatorService + `"}}' > sonobuoy-config.json
  sonobuoy run --config sonobuoy-config.json --plugin winconform.yaml --sonobuoy-image ` + suiteimage.Aggregator + `
The plugin uses Sonobuoy's service account, which sonobuoy run binds to
cluster-admin by default (--aggregator-permissions=clusterAdmin): the suites
make namespaces and simulated nodes.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			extra, err := suiteArgs(cmd, args, &pf.rf)
			if err != nil {
				return err
			}
			p, n, err := pf.plugin(cmd.Context(), extra)
			if err != nil {
				return usage(err)
			}
			data, err := p.YAML()
			if err != nil {
				return err
			}
			if output == "" || output == "-" {
				_, err = cmd.OutOrStdout().Write(data)
				return err
			}
			if err := os.WriteFile(output, data, 0o644); err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s: plugin %s, %d spec(s), image %s\n", output, sonobuoy.PluginName, n, pf.image)
			return nil
		},
	}
	pf.register(cmd)
	cmd.Flags().VarP(flagvalue.OutFile(&output, "", true), "output", "o", "file to write (default: standard output)")
	return cmd
}

// imageFlags are the binaries the suite and aggregator images are made of.
type imageFlags struct {
	runner, kwok, sonobuoy string
}

func (f *imageFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.runner, "runner", binPath("suite-runner"), "the suite image's entrypoint (make build)")
	cmd.Flags().StringVar(&f.kwok, "kwok-binary", binPath("kwok"), "kwok, for simulated Windows nodes (make build)")
	cmd.Flags().StringVar(&f.sonobuoy, "sonobuoy-binary", binPath("sonobuoy"), "the sonobuoy binary, "+suiteimage.SonobuoyVersion+" (make sonobuoy builds it)")
}

// archive writes the suite image (with suite as its suite binary) and the
// aggregator image to path, whole: a file beside it is renamed into place.
func (f *imageFlags) archive(suite, path string) error {
	s, err := suiteimage.SuiteImage(suiteimage.Binaries{Runner: f.runner, Suite: suite, Kwok: f.kwok})
	if err != nil {
		return fmt.Errorf("suite image: %w", err)
	}
	a, err := suiteimage.AggregatorImage(f.sonobuoy)
	if err != nil {
		return fmt.Errorf("aggregator image: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.Produce(path, 0o644, func(tmp string) error { return suiteimage.Archive(tmp, s, a) })
}

func sonobuoyImagesCmd() *cobra.Command {
	var (
		f      imageFlags
		suite  string
		output string
	)
	cmd := &cobra.Command{
		Use:   "images",
		Short: "Build the suite image and Sonobuoy's aggregator image into one archive",
		Long: `Build, from files and without Docker, the suite image (` + suiteimage.Suite + `:
the suite binary, its entrypoint and kwok) and Sonobuoy's aggregator image
(` + suiteimage.Aggregator + `: the sonobuoy binary), and write both to one
docker-archive, for docker load, ctr images import, or a copy to a registry
(point the plugin at it with winconform sonobuoy plugin --image).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := f.archive(suite, output); err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s: %s and %s\n", output, suiteimage.Suite, suiteimage.Aggregator)
			return nil
		},
	}
	f.register(cmd)
	cmd.Flags().Var(flagvalue.Name(&suite, binPath("e2e.test"), "the suite binary's path"), "suite-binary", "the suite binary (make build; static)")
	cmd.Flags().VarP(flagvalue.OutFile(&output, outPath("sonobuoy", "images.tar"), false), "output", "o", "the archive to write")
	return cmd
}

func sonobuoyRunCmd() *cobra.Command {
	var (
		cf         clusterFlags
		pf         pluginFlags
		f          imageFlags
		kubeconfig string
		namespace  string
		outDir     string
		aggImage   string
		timeout    time.Duration
		keep       bool
	)
	cmd := &cobra.Command{
		Use:   "run [SUITE] [-- suite flags]",
		Short: "Run the suites inside the local cluster under Sonobuoy, and show the results",
		Long: `Check the selection, build the suite and aggregator images, bring up the local
cluster (as up does, reusing it when it exists) with the images loaded into
its nodes, write the plugin, and run it with the sonobuoy CLI: sonobuoy run
(this plugin only), sonobuoy retrieve, sonobuoy results. The results tarball,
the plugin and the suite's reports (summary, ledger, network matrix, JUnit)
go to --out. With --kubeconfig FILE (or --existing FILE) no cluster is made
and nothing is loaded: the cluster must be able to pull --image and
--sonobuoy-image.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			start := time.Now()
			ctx := cmd.Context()
			stderr := cmd.ErrOrStderr()
			extra, err := suiteArgs(cmd, args, &pf.rf)
			if err != nil {
				return err
			}
			// The run's own input first (the selection, with the suite
			// binary's dry run; the kubeconfig), then the sonobuoy CLI.
			plugin, n, err := pf.plugin(ctx, extra)
			if err != nil {
				return usage(err)
			}
			if kubeconfig != "" {
				if err := checkKubeconfig(kubeconfig); err != nil {
					return err
				}
			}
			cli := sonobuoy.CLI{Binary: f.sonobuoy, Namespace: namespace, Log: stderr}
			if err := cli.Check(ctx, suiteimage.SonobuoyVersion); err != nil {
				return err
			}
			fmt.Fprintf(stderr, "plugin %s: %d spec(s) selected\n", sonobuoy.PluginName, n)

			if kubeconfig == "" {
				// In this checkout's _output, not the shared cache: another
				// checkout's binaries never reach this cluster.
				archive := outPath("images", "sonobuoy-images.tar")
				t := time.Now()
				if err := f.archive(pf.rf.binary, archive); err != nil {
					return err
				}
				fmt.Fprintf(stderr, "built %s and %s in %s\n", suiteimage.Suite, suiteimage.Aggregator, time.Since(t).Round(100*time.Millisecond))
				cf.images = append(cf.images, kind.ImageArchive{Name: suiteimage.Suite + " and " + suiteimage.Aggregator, Path: archive})
				res, err := up(cmd, &cf)
				if err != nil {
					return err
				}
				kubeconfig = res.Kubeconfig
			}
			if cli.Kubeconfig, err = filepath.Abs(kubeconfig); err != nil {
				return err
			}
			// Only what an earlier run left here goes: --out may be any directory.
			for _, old := range []string{"report", "sonobuoy-results.tar.gz", "sonobuoy-diagnostics.txt"} {
				if err := os.RemoveAll(filepath.Join(outDir, old)); err != nil {
					return err
				}
			}
			if err := os.MkdirAll(outDir, 0o755); err != nil {
				return err
			}
			data, err := plugin.YAML()
			if err != nil {
				return err
			}
			pluginFile := filepath.Join(outDir, sonobuoy.PluginName+".yaml")
			if err := os.WriteFile(pluginFile, data, 0o644); err != nil {
				return err
			}
			// A run left behind (an interrupted one) would make sonobuoy run refuse.
			if err := cli.Delete(ctx, 5*time.Minute); err != nil {
				return err
			}
			if !keep {
				defer func() {
					if err := cli.Delete(context.WithoutCancel(ctx), 5*time.Minute); err != nil {
						fmt.Fprintln(stderr, "winconform:", err)
					}
				}()
			}
			runErr := cli.Run(ctx, sonobuoy.RunOptions{Plugin: pluginFile, AggregatorImage: aggImage, PullPolicy: pf.pullPolicy, Timeout: timeout})
			if runErr != nil {
				where := saveDiagnostics(context.WithoutCancel(ctx), cli, outDir)
				return fmt.Errorf("%w (status and logs in %s)", runErr, where)
			}
			tarball, err := cli.Retrieve(ctx, outDir)
			if err != nil {
				return err
			}
			return showResults(ctx, cmd.OutOrStdout(), cli, tarball, outDir, time.Since(start))
		},
	}
	cf.register(cmd)
	pf.register(cmd)
	f.register(cmd)
	registerTarget(cmd, &kubeconfig, "the cluster to run the plugin in, as it is (nothing is made or loaded)")
	cmd.Flags().Var(flagvalue.Name(&namespace, "sonobuoy", "a namespace"), "namespace", "Sonobuoy's namespace")
	cmd.Flags().Var(flagvalue.Name(&aggImage, suiteimage.Aggregator, "the aggregator image's reference"), "sonobuoy-image", "Sonobuoy's aggregator and worker image")
	cmd.Flags().Var(flagvalue.Dir(&outDir, outPath("sonobuoy"), "the plugin, the results tarball and the suite's reports"), "out", "where the plugin, the results tarball and the suite's reports go")
	cmd.Flags().Var(flagvalue.Duration(&timeout, 60*time.Minute, 0, "", "30m"), "timeout", "how long the plugin may run")
	cmd.Flags().BoolVar(&keep, "keep", false, "leave Sonobuoy's namespace in the cluster afterwards (sonobuoy delete removes it)")
	return cmd
}

// saveDiagnostics writes `sonobuoy status` and `sonobuoy logs` to outDir
// and returns the file's path.
func saveDiagnostics(ctx context.Context, cli sonobuoy.CLI, outDir string) string {
	path := filepath.Join(outDir, "sonobuoy-diagnostics.txt")
	var b strings.Builder
	status, err := cli.Status(ctx)
	fmt.Fprintf(&b, "$ sonobuoy status\n%s", status)
	if err != nil {
		fmt.Fprintf(&b, "(%v)\n", err)
	}
	logs, err := cli.Logs(ctx)
	fmt.Fprintf(&b, "\n$ sonobuoy logs\n%s", logs)
	if err != nil {
		fmt.Fprintf(&b, "(%v)\n", err)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return fmt.Sprintf("(not written: %v)", err)
	}
	return path
}

// showResults prints `sonobuoy results` for the tarball, the specs that
// ran, and the suite's summary, extracted into outDir/report; it fails when
// a spec failed.
func showResults(ctx context.Context, out io.Writer, cli sonobuoy.CLI, tarball, outDir string, took time.Duration) error {
	report, err := cli.Results(ctx, tarball, "report")
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\n$ sonobuoy results %s --plugin %s\n%s", tarball, sonobuoy.PluginName, report)
	dir := filepath.Join(outDir, "report")
	files, err := sonobuoy.Extract(tarball, dir)
	if err != nil {
		return err
	}
	junit, err := os.ReadFile(filepath.Join(dir, sonobuoy.JUnitFile))
	if err != nil {
		return fmt.Errorf("the suite's JUnit report: %w", err)
	}
	detailed, err := cli.Results(ctx, tarball, "detailed")
	if err != nil {
		return err
	}
	specs, err := sonobuoy.ParseDetailed(detailed)
	if err != nil {
		return err
	}
	if err := sonobuoy.FromJUnit(specs, junit); err != nil {
		return err
	}
	fmt.Fprintf(out, "\n$ sonobuoy results %s --plugin %s --mode detailed\n  (the specs in the selection, with the skip reasons of the suite's JUnit; Sonobuoy counts the specs outside the selection as skipped)\n", tarball, sonobuoy.PluginName)
	sonobuoy.WriteSpecs(out, specs)

	fmt.Fprintf(out, "\nthe suite's reports, from the results tarball (%s), in %s:\n", sonobuoy.PluginResults, dir)
	for _, f := range files {
		fmt.Fprintf(out, "  %s\n", f)
	}
	if summary, err := os.ReadFile(filepath.Join(dir, "summary.md")); err == nil {
		fmt.Fprintf(out, "\n%s\n", strings.TrimSpace(string(summary)))
	} else {
		fmt.Fprintf(out, "\nno summary.md in the results: %v\n", err)
	}
	failed, err := junitFailures(junit)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\nsonobuoy run of the suites: %s in all; results in %s\n", took.Round(time.Second), outDir)
	if failed > 0 {
		fmt.Fprintf(out, "%d spec(s) failed\n", failed)
		return exitCode(1)
	}
	return nil
}

// junitFailures counts the failures and errors of a JUnit report.
func junitFailures(data []byte) (int, error) {
	var suites struct {
		Failures int `xml:"failures,attr"`
		Errors   int `xml:"errors,attr"`
	}
	if err := xml.Unmarshal(data, &suites); err != nil {
		return 0, fmt.Errorf("the suite's JUnit report: %w", err)
	}
	return suites.Failures + suites.Errors, nil
}
