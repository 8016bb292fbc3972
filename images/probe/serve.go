package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"
)

// serveConfig is the parsed command line of "probe serve".
type serveConfig struct {
	httpPort int
	tcpPort  int
	udpPort  int
	name     string
}

// shutdownGrace bounds how long in-flight HTTP requests may delay exit.
const shutdownGrace = 2 * time.Second

func parseServeArgs(args []string) (serveConfig, error) {
	var cfg serveConfig
	fs := newFlagSet("serve")
	fs.IntVar(&cfg.httpPort, "http-port", 8080, "HTTP port (0 disables)")
	fs.IntVar(&cfg.tcpPort, "tcp-port", 8081, "TCP echo port (0 disables)")
	fs.IntVar(&cfg.udpPort, "udp-port", 8081, "UDP echo port (0 disables)")
	fs.StringVar(&cfg.name, "name", "", "name reported by /json (default: the hostname)")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	for _, p := range []struct {
		flag string
		port int
	}{{"http-port", cfg.httpPort}, {"tcp-port", cfg.tcpPort}, {"udp-port", cfg.udpPort}} {
		if p.port < 0 || p.port > 65535 {
			return cfg, fmt.Errorf("--%s %d: want 0..65535", p.flag, p.port)
		}
	}
	if cfg.httpPort == 0 && cfg.tcpPort == 0 && cfg.udpPort == 0 {
		return cfg, errors.New("nothing to serve: every port is 0")
	}
	return cfg, nil
}

// listen opens the sockets cfg asks for on all addresses; a port of 0 leaves
// the matching member nil.
func listen(cfg serveConfig) (listeners, error) {
	var ls listeners
	var err error
	if cfg.httpPort != 0 {
		if ls.http, err = net.Listen("tcp", portAddr(cfg.httpPort)); err != nil {
			return ls, err
		}
	}
	if cfg.tcpPort != 0 {
		if ls.tcp, err = net.Listen("tcp", portAddr(cfg.tcpPort)); err != nil {
			ls.close()
			return listeners{}, err
		}
	}
	if cfg.udpPort != 0 {
		if ls.udp, err = net.ListenPacket("udp", portAddr(cfg.udpPort)); err != nil {
			ls.close()
			return listeners{}, err
		}
	}
	return ls, nil
}

func portAddr(port int) string { return ":" + strconv.Itoa(port) }

// runServe serves until ctx ends or SIGINT/SIGTERM arrives, then exits 0.
func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg, err := parseServeArgs(args)
	if err != nil {
		return reportArgsError("serve", err, stdout, stderr)
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	ls, err := listen(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "probe serve: %v\n", err)
		return exitFailure
	}

	srv := newServer(cfg.name, stdout)
	run := srv.start(ls)
	srv.logf("probe %s serving as %s (podIP %s): %s\n", version, srv.name, srv.podIP, ls)

	status := exitOK
	select {
	case <-ctx.Done():
	case err := <-run.failed:
		fmt.Fprintf(stderr, "probe serve: %v\n", err)
		status = exitFailure
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := run.stop(shutdownCtx); err != nil {
		fmt.Fprintf(stderr, "probe serve: shutdown: %v\n", err)
	}
	return status
}
