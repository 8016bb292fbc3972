package remote_test

import (
	"context"
	"net"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/winconform/winconform/infra/windows/remote"
	"github.com/winconform/winconform/testing/wsmantest"
)

// Short timeouts keep the whole run fast. testConnectTimeout is for the
// tests about connect timeouts; the others connect to the fake with a
// roomier one, as a TLS handshake that loads the system's roots under -race
// can take a few hundred milliseconds.
const (
	testConnectTimeout   = 300 * time.Millisecond
	fakeConnectTimeout   = 3 * time.Second
	testOperationTimeout = 1 * time.Second
)

// configFor is a Config that reaches srv.
func configFor(srv *wsmantest.Server) remote.Config {
	return remote.Config{
		Name:             "win-test",
		Address:          srv.Host(),
		Port:             srv.Port(),
		HTTPS:            srv.HTTPS(),
		CABundle:         srv.CACertPEM(),
		User:             srv.User(),
		Password:         srv.Password(),
		ConnectTimeout:   fakeConnectTimeout,
		OperationTimeout: testOperationTimeout,
		CleanupTimeout:   2 * time.Second,
	}
}

// newWinRM makes a WinRM from cfg and closes it when the test ends.
func newWinRM(t *testing.T, cfg remote.Config) *remote.WinRM {
	t.Helper()
	w, err := remote.NewWinRM(cfg)
	if err != nil {
		t.Fatalf("NewWinRM: %v", err)
	}
	t.Cleanup(func() { _ = w.Close() })
	return w
}

// execFor is a WinRM for srv, cfg adjusted by the mutators.
func execFor(t *testing.T, srv *wsmantest.Server, mutate ...func(*remote.Config)) *remote.WinRM {
	t.Helper()
	cfg := configFor(srv)
	for _, m := range mutate {
		m(&cfg)
	}
	return newWinRM(t, cfg)
}

// run runs a step with a generous deadline.
func run(t *testing.T, e remote.Exec, step, script string) (remote.Result, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return e.RunPS(ctx, step, script)
}

// reply is a handler that answers every command with r.
func reply(r wsmantest.Reply) wsmantest.Handler {
	return func(*wsmantest.Call) wsmantest.Reply { return r }
}

// assertShellsDeleted checks that every shell the fake created was deleted,
// and that each conversation ended with Delete.
func assertShellsDeleted(t *testing.T, srv *wsmantest.Server) {
	t.Helper()
	if open := srv.OpenShells(); len(open) != 0 {
		t.Errorf("shells left open: %v", open)
	}
	for _, id := range srv.ShellIDs() {
		conv := srv.Conversation(id)
		if len(conv) == 0 || conv[len(conv)-1] != wsmantest.ActionDelete {
			t.Errorf("shell %s: conversation %v does not end with Delete", id, conv)
		}
	}
}

// conversation is the only shell's conversation, runs of Receive compacted.
func conversation(t *testing.T, srv *wsmantest.Server) []wsmantest.Action {
	t.Helper()
	ids := srv.ShellIDs()
	if len(ids) != 1 {
		t.Fatalf("shells created: %v, want one", ids)
	}
	return slices.Compact(srv.Conversation(ids[0]))
}

// closedPort returns a loopback port nothing listens on.
func closedPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	ln.Close()
	n, _ := strconv.Atoi(port)
	return n
}

// silentServer accepts connections and reads from them, never answering.
func silentServer(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { close(done); ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 4096)
				for {
					if _, err := c.Read(buf); err != nil {
						return
					}
					select {
					case <-done:
						return
					default:
					}
				}
			}()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port
}
