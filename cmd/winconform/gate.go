package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/winconform/winconform/internal/flagvalue"
	"github.com/winconform/winconform/reports/gate"
	"github.com/winconform/winconform/reports/html"
	"github.com/winconform/winconform/reports/policy"
	"github.com/winconform/winconform/reports/rundir"
)

// unusable is refused input (a usage error, or an input the gate cannot
// decide on): exit status 2, with the error's message.
type unusable struct{ error }

func (u unusable) Unwrap() error { return u.error }

// As lets main find the exit status.
func (u unusable) As(target any) bool {
	if p, ok := target.(*exitCode); ok {
		*p = 2
		return true
	}
	return false
}

// Exit statuses of gate.
const (
	exitShip     = 0
	exitBlocked  = 1
	exitUnusable = 2
)

func gateCmd() *cobra.Command {
	var (
		report, policyFile, baseline, now, out string
		builds                                 []string
		check                                  bool
		signed                                 string
		signer                                 gate.Signer
	)
	cmd := &cobra.Command{
		Use:   "gate --report DIR --policy FILE [--baseline DIR]",
		Short: "Decide whether a run lets a release ship under a policy: exit 0 ship, 1 blocked, 2 unusable policy or report",
		Long: `gate reads a run's report directory and a policy (YAML; policies/ has examples,
docs/gate.md describes every field) and decides:
exit status 0 (ship), 1 (blocked, with every reason), 2 (the policy, the
report or the baseline cannot be used). It writes gate.md, gate.json and
report.html into the report directory (or --out), and the decision as an
in-toto statement (gate.intoto.json, to sign with cosign attest-blob
--statement); with --baseline, also diff.md and diff.json. It reads local
files only.

gate --verify BUNDLE --report DIR checks a signed statement (the Sigstore
bundle cosign attest-blob --bundle wrote) against the run's directory: signed
by --key, or keyless by --certificate-identity and --certificate-oidc-issuer
under --trusted-root; its subject this directory's manifest and record; its
decision the one the gate makes again. Exit status 0 ship, 1 blocked, 2 not
verified.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if signed != "" {
				if report == "" {
					return unusable{errors.New("gate --verify needs --report DIR, the run's report directory the statement is about")}
				}
				s, err := gate.VerifySigned(signed, signer, report)
				if err != nil {
					return unusable{err}
				}
				p := s.Statement.Predicate
				fmt.Fprintf(cmd.OutOrStdout(), "verified: %s is signed by %s and states the gate's decision on run %s in %s: %s (policy %s, sha256 %s; decided %s by winconform %s, catalogue %s)\n",
					signed, s.By, p.RunID, report, strings.ToUpper(p.Decision), p.Policy.Name, p.Policy.Digest["sha256"], p.DecidedAt.Format(time.RFC3339), p.Harness.Version, p.Catalogue)
				if s.Result.Blocked() {
					return exitCode(exitBlocked)
				}
				return nil
			}
			if check {
				// Before a long run: a policy that cannot be used is said
				// now, not after the machines and the suites.
				if policyFile == "" {
					return unusable{errors.New("gate --check needs --policy FILE")}
				}
				p, err := policy.Load(policyFile)
				if err != nil {
					return unusable{fmt.Errorf("--policy: %w", err)}
				}
				// An expired known issue waives nothing; it stays loadable,
				// for gating the old runs it was written for.
				today := time.Now().UTC()
				for _, k := range p.KnownIssues {
					if k.Expired(today) {
						fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s: the known issue of %s expired on %s and waives nothing: renew its expires, or remove it\n", policyFile, k.Subject(), k.Expires)
					}
				}
				fmt.Fprintf(cmd.OutOrStdout(), "policy %s can be used (sha256 %s, as a gate's statement names it)\n", policyFile, gate.PolicyDigest(*p))
				return nil
			}
			res, err := runGate(gateOptions{report: report, policy: policyFile, baseline: baseline, now: now, out: out, builds: builds}, cmd.OutOrStdout())
			if err != nil {
				return unusable{err}
			}
			if res.Blocked() {
				return exitCode(exitBlocked)
			}
			return nil
		},
	}
	cmd.Flags().Var(flagvalue.Name(&report, "", "a run's report directory"), "report", "the run's report directory (required)")
	cmd.Flags().Var(flagvalue.Name(&policyFile, "", "a policy file, e.g. policies/linux-only.yaml"), "policy", "the policy file (required), e.g. policies/linux-only.yaml")
	cmd.Flags().Var(flagvalue.Name(&baseline, "", "an earlier run's report directory"), "baseline", "an earlier run's report directory (last night's, the last release's) to compare with")
	cmd.Flags().StringVar(&now, "now", "", "the day known issues expire against, YYYY-MM-DD (default: today, UTC)")
	cmd.Flags().Var(flagvalue.Dir(&out, "", "gate.md, gate.json, diff.* and report.html"), "out", "where gate.md, gate.json, diff.* and report.html go (default: the report directory)")
	cmd.Flags().BoolVar(&check, "check", false, "only read and check the policy file (no --report needed); exit 0 when it can be used, 2 when not")
	cmd.Flags().StringVar(&signed, "verify", "", "check this signed statement (a Sigstore bundle, from cosign attest-blob --statement --bundle) against --report instead of deciding")
	cmd.Flags().StringVar(&signer.Key, "key", "", "with --verify: the public key (PEM) the statement must be signed with")
	cmd.Flags().StringVar(&signer.Identity, "certificate-identity", "", "with --verify, keyless: the signing certificate's identity (a workflow's ref URL)")
	cmd.Flags().StringVar(&signer.Issuer, "certificate-oidc-issuer", "", "with --verify, keyless: the identity's OIDC issuer (https://token.actions.githubusercontent.com)")
	cmd.Flags().StringVar(&signer.TrustedRoot, "trusted-root", "", "with --verify, keyless: the Sigstore trusted root (JSON) anchoring the certificate and the transparency log")
	cmd.Flags().StringSliceVar(&builds, "windows-build", nil, "a Windows build (10.0.NNNNN) a real node of the cluster must have had, beside the policy's cluster.windowsBuilds")
	return cmd
}

type gateOptions struct {
	report, policy, baseline, now, out string
	builds                             []string
	clock                              func() time.Time // time.Now when nil
}

// runGate decides and writes the gate's files; an error means an input is unusable.
func runGate(o gateOptions, w io.Writer) (gate.Result, error) {
	res, err := gate.Evaluate(gate.Options{Report: o.report, Policy: o.policy, Baseline: o.baseline, Now: o.now, WindowsBuilds: o.builds, Clock: o.clock})
	if err != nil {
		return res, err
	}
	out := o.out
	if out == "" {
		out = o.report
	}
	if err := res.Write(out); err != nil {
		return res, fmt.Errorf("writing the gate's reports into %s: %v", out, err)
	}
	files := []string{gate.MarkdownFile, gate.JSONFile, rundir.StatementFile}
	if res.Diff != nil {
		if err := res.Diff.Write(out); err != nil {
			return res, fmt.Errorf("writing the diff into %s: %v", out, err)
		}
		files = append(files, "diff.md", "diff.json")
	}
	if out == o.report {
		if err := html.WriteHTML(o.report); errors.Is(err, html.ErrScreenshotRemoved) {
			fmt.Fprintln(w, "winconform:", err)
		} else if err != nil {
			return res, fmt.Errorf("writing %s into %s: %v", html.File, o.report, err)
		}
		files = append(files, html.File)
	}
	printGate(w, res)
	fmt.Fprintf(w, "written to %s: %s\n", out, strings.Join(files, ", "))
	return res, nil
}

func printGate(w io.Writer, r gate.Result) {
	verdict := "SHIP"
	if r.Blocked() {
		verdict = "BLOCKED"
	}
	fmt.Fprintf(w, "winconform gate: %s (policy %s, %s; report %s", verdict, r.Policy, r.PolicyFile, r.Report)
	if r.Baseline != "" {
		fmt.Fprintf(w, "; baseline %s", r.Baseline)
	}
	fmt.Fprintf(w, ")\nrun: %s\n%s\nrequired claims met: %d of %d\n", r.Status, r.Headline, r.Met, r.Required)
	if len(r.Reasons) > 0 {
		fmt.Fprintf(w, "blocked by %d finding(s) of %d cause(s):\n", len(r.Reasons), len(r.Groups))
		for _, g := range r.Groups {
			fmt.Fprintf(w, "  - %s\n", g.Line())
		}
	}
	if fl := r.Flakes(); len(fl) > 0 {
		fmt.Fprintf(w, "flaky (%d), each with its first failure:\n  - %s\n", len(fl), strings.Join(fl, "\n  - "))
	}
	for _, d := range []gate.Decision{gate.Waived, gate.Report} {
		var lines []string
		for _, it := range r.Items {
			if it.Decision == d {
				lines = append(lines, "  - "+it.Subject()+": "+it.Reason)
			}
		}
		if len(lines) > 0 {
			fmt.Fprintf(w, "%s (%d):\n%s\n", map[gate.Decision]string{gate.Waived: "waived by known issues", gate.Report: "reported, not blocking"}[d], len(lines), strings.Join(lines, "\n"))
		}
	}
	if d := r.Diff; d != nil {
		fmt.Fprintf(w, "since the baseline: newly failing %s; newly fixed %s; no longer shown %s; %d claim(s), %d matrix cell(s), %d ledger verdict(s) changed\n",
			listOrNone(d.NewlyFailing), listOrNone(d.NewlyFixed), listOrNone(d.LostShown), len(d.Claims), len(d.Cells), len(d.Ledger))
	}
}

func listOrNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}
