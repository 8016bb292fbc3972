// Command localregistry serves an OCI distribution registry, in memory, on
// a local address, for the Windows runners of .github/workflows/windows.yml:
// there, `winconform images push` pushes the probe's image index to it and
// Docker pulls the runner's Windows variant from it, with no registry
// container (the registry images are Linux ones) and nothing outside the
// runner. It is go-containerregistry's registry, which the harness's own
// image tests use too.
//
//	localregistry [-addr 127.0.0.1:5000]
//
// It runs until interrupted. Docker treats registries on 127.0.0.0/8 as
// insecure, so plain HTTP is enough.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:5000", "the address to listen on")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "localregistry: unexpected argument %q\n", flag.Arg(0))
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatalf("localregistry: %v", err)
	}
	srv := &http.Server{
		Handler:           registry.New(registry.Logger(log.New(os.Stderr, "localregistry: ", log.LstdFlags))),
		ReadHeaderTimeout: 30 * time.Second,
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	log.Printf("localregistry: serving on http://%s", ln.Addr())
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatalf("localregistry: %v", err)
	}
}
