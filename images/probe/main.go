// Command probe is the winconform network probe. It runs inside the Linux and
// Windows test pods, either serving (HTTP, TCP echo, UDP echo), connecting
// to a list of targets and reporting one JSON line per target, or printing
// the pod's DNS configuration.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

const usageText = `usage:
  probe serve [--http-port 8080] [--tcp-port 8081] [--udp-port 8081] [--name NAME]
  probe connect [--timeout 5s] [--parallel 8] [--attempts 1] TARGET... | -
  probe dnsconfig     the pod's DNS servers and search list, as JSON
  probe env NAME      the value of an environment variable
  probe cat PATH      a file's content
  probe write PATH CONTENT   write a file (fails with the OS error, e.g. on a read-only mount)
  probe whoami        the user this process runs as, as JSON
  probe post URL      an empty HTTP POST (e.g. http://localhost:8080/exit restarts a served container)
  probe fill PATH MIB         write MIB MiB to a file (into a volume, to see where it is counted)
  probe alloc [--hold D] MIB  take MIB MiB of memory (a limit stops it: OOM kill, out of memory)
  probe burn [--threads N] [--for D]  keep N CPUs busy, print the CPU time it got
  probe apiuser [--sa-dir DIR] [--server URL]  who the API server says the pod's service account token is, as JSON
  probe hold [--for D]  keep running, outliving requests to terminate, until killed (or D elapses)
  probe version

targets: tcp://HOST:PORT  udp://HOST:PORT  http://HOST[:PORT]/PATH
         dns://NAME[?expect=IP]  icmp://HOST
`

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run dispatches to a subcommand and returns the process exit status.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "probe: missing subcommand (serve, connect, dnsconfig, env, cat, write, whoami, post, fill, alloc, burn, apiuser, hold or version)")
		return exitUsage
	}
	switch args[0] {
	case "serve":
		return runServe(ctx, args[1:], stdout, stderr)
	case "connect":
		return runConnect(ctx, args[1:], stdin, stdout, stderr)
	case "dnsconfig":
		return runDNSConfig(args[1:], stdout, stderr)
	case "env":
		return runEnv(args[1:], stdout, stderr)
	case "cat":
		return runCat(args[1:], stdout, stderr)
	case "write":
		return runWrite(args[1:], stderr)
	case "whoami":
		return runWhoami(args[1:], stdout, stderr)
	case "post":
		return runPost(ctx, args[1:], stdout, stderr)
	case "fill":
		return runFill(args[1:], stdout, stderr)
	case "alloc":
		return runAlloc(args[1:], stdout, stderr)
	case "burn":
		return runBurn(args[1:], stdout, stderr)
	case "apiuser":
		return runAPIUser(ctx, args[1:], stdout, stderr)
	case "hold":
		return runHold(ctx, args[1:], stdout, stderr)
	case "version":
		if len(args) > 1 {
			fmt.Fprintf(stderr, "probe version: unexpected argument %q\n", args[1])
			return exitUsage
		}
		fmt.Fprintln(stdout, version)
		return exitOK
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usageText)
		return exitOK
	default:
		fmt.Fprintf(stderr, "probe: unknown subcommand %q (want serve, connect, dnsconfig, env, cat, write, whoami, post, fill, alloc, burn, apiuser, hold or version)\n", args[0])
		return exitUsage
	}
}

// reportArgsError prints a one-line message for a command-line error (every
// error of the parse*Args functions is one) and returns exit status 2. A
// request for help is no error: it prints the usage text and returns 0.
func reportArgsError(cmd string, err error, stdout, stderr io.Writer) int {
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, usageText)
		return exitOK
	}
	fmt.Fprintf(stderr, "probe %s: %v\n", cmd, err)
	return exitUsage
}

// newFlagSet returns a flag set that reports errors to the caller instead of
// printing them, so that each problem yields exactly one line on stderr.
func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}
