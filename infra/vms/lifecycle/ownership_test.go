package lifecycle_test

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/winconform/winconform/config"
	"github.com/winconform/winconform/infra/vms"
	"github.com/winconform/winconform/infra/vms/lifecycle"
	"github.com/winconform/winconform/testing/lifecycletest"
	"github.com/winconform/winconform/testing/standin"
	"github.com/winconform/winconform/testing/vmstest"
)

// Runs never touch each other's machines, with the fake provider: the
// lifecycle's own rules, before any provider's (each provider's tests run
// the same check against its stand-in).
func TestOwnershipWithTheFake(t *testing.T) {
	fake := vmstest.New()
	hosts := []string{"127.0.0.2", "127.0.0.3"}
	port := guests(t, hosts)
	var first string
	fake.Plan = func(name string, _ time.Duration) []string {
		n, _ := strconv.Atoi(name[strings.LastIndex(name, "-")+1:])
		if strings.Contains(name, "-"+first+"-") && n >= 1 && n <= len(hosts) {
			return []string{hosts[n-1]}
		}
		return nil
	}
	lifecycletest.Ownership(t, lifecycletest.Rig{
		Provider: fake,
		File: func(t *testing.T, runID string, count int) *vms.File {
			if first == "" {
				first = runID
			}
			src := fmt.Sprintf("provider: fake\nconnection: {endpoint: fake://own}\nimage: golden\ncount: %d\nmachine:\n  user: %s\n  passwordFrom: {env: WIN_PW}\n  winrm: {port: %d}\n",
				count, standin.DefaultUser, port)
			f, err := config.Parse[config.Machines]("vms.yaml", []byte(src), func(k string) (string, bool) { return standin.DefaultPassword, k == "WIN_PW" })
			if err != nil {
				t.Fatal(err)
			}
			return f
		},
		Options: lifecycle.Options{Settle: 100 * time.Millisecond, Poll: 20 * time.Millisecond, ReadyTimeout: 10 * time.Second, CleanupTimeout: 10 * time.Second},
	})
}

// guests starts a stand-in on each host, all on one port.
func guests(t *testing.T, hosts []string) int {
	t.Helper()
	for attempt := 0; attempt < 20; attempt++ {
		first, err := standin.Start(standin.WithAddr(hosts[0] + ":0"))
		if err != nil {
			t.Fatal(err)
		}
		servers := []*standin.Server{first}
		for _, h := range hosts[1:] {
			s, err := standin.Start(standin.WithAddr(net.JoinHostPort(h, strconv.Itoa(first.Port()))))
			if err != nil {
				break
			}
			servers = append(servers, s)
		}
		if len(servers) == len(hosts) {
			for _, s := range servers {
				t.Cleanup(s.Close)
			}
			return first.Port()
		}
		for _, s := range servers {
			s.Close()
		}
	}
	t.Fatal("no port free on every host")
	return 0
}
