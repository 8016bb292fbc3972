package infra

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/onsi/ginkgo/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/winconform/winconform/config"
	"github.com/winconform/winconform/framework/claims"
	"github.com/winconform/winconform/framework/e2e"
	"github.com/winconform/winconform/framework/evidence"
	"github.com/winconform/winconform/framework/labels"
	"github.com/winconform/winconform/framework/skips"
	"github.com/winconform/winconform/framework/verdicts"
	"github.com/winconform/winconform/infra/vms/lifecycle"
	"github.com/winconform/winconform/infra/vms/static"
	"github.com/winconform/winconform/infra/windows"
)

// INF-11: the machines were made for this run. The inventory `winconform
// vms up` writes lies in the run's directory beside its state file, which
// names the run, the provider, and each machine's provider ID: the spec
// checks that the state and the inventory agree, that each machine's
// WinRM answers (the unauthenticated Identify), and asks each what it is
// (windows.Identify). Machines that say they are Windows must be joined
// (their node is theirs, Ready, of their build): the evidence is those
// Windows machines. Machines that answer WinRM without being Windows (VMs
// of the stand-in image: a Linux guest running the WS-Management
// stand-in) are simulated: they support the claim on Linux, partially
// (they join nothing), and are never evidence of a Windows machine.
//
// The deletion after the run is the CLI's (vms down, the teardown of an
// interrupted up): it fails the run, naming them, when any machine is
// left; this spec runs while the machines are up and checks that every
// one of them is in the state file that down deletes by.
var _ = ginkgo.Describe("provisioning VMs", labels.Suite("infra"), func() {
	f := e2e.NewFramework("infra-vms")
	f.SkipNamespaceCreation = true

	ginkgo.It("INF-11: the inventory's machines were made for this run from a golden image, answer WinRM and joined, each recorded for its deletion",
		labels.For("INF-11", corev1.Windows), func(ctx context.Context) {
			if e2e.Options.Inventory == "" {
				skips.Skip(skips.NoInventory)
			}
			dir := filepath.Dir(e2e.Options.Inventory)
			if _, err := os.Stat(filepath.Join(dir, lifecycle.StateFile)); errors.Is(err, fs.ErrNotExist) {
				skips.Skip(skips.NoVMs, "no "+lifecycle.StateFile+" beside "+e2e.Options.Inventory)
			}
			st, _, err := lifecycle.LoadState(dir)
			framework.ExpectNoError(err)
			if st.Provider == static.Name {
				skips.Skip(skips.NoVMs, "the run took the machines of an inventory (provider static): none was made")
			}
			inv, err := e2e.Inventory()
			framework.ExpectNoError(err)
			if st.Phase != lifecycle.PhaseReady || len(st.Machines) != len(inv.Machines) {
				framework.Failf("run %s is %s with %d machine(s), the inventory lists %d: not the inventory of a run that is up", st.RunID, st.Phase, len(st.Machines), len(inv.Machines))
			}
			conns, err := windows.Connect(inv)
			framework.ExpectNoError(err)
			var seen []verdicts.VMSeen
			for _, m := range inv.Machines {
				s := verdicts.VMSeen{Name: m.Name, State: stateOf(st, m)}
				id, err := conns[m.Name].Identify(ctx)
				s.Identify = err
				if err == nil {
					framework.Logf("machine %s: WinRM answers Identify (%s, %s)", m.Name, id.ProductVendor, id.ProductVersion)
					what, err := windows.Identify(ctx, conns[m.Name])
					s.What, s.Build = err, what.Build
					if err == nil {
						node, err := f.ClientSet.CoreV1().Nodes().Get(ctx, m.Name, metav1.GetOptions{})
						if err == nil {
							err = what.Joined(node)
						}
						s.Joined = err
					}
				}
				seen = append(seen, s)
			}
			real, simulated, err := verdicts.VMRun(seen)
			framework.ExpectNoError(err)
			made := fmt.Sprintf("made by %s for run %s", st.Provider, st.RunID)
			var on []evidence.On
			for _, s := range real {
				on = append(on, evidence.On{Name: s.Name, Build: s.Build, Machine: true})
			}
			if len(on) > 0 {
				evidence.AddOn(claims.WindowsMachine, "Windows machine(s) "+made+", answering WinRM and joined:", on...)
			}
			if len(simulated) > 0 {
				var names []string
				for _, s := range simulated {
					names = append(names, s.Name)
				}
				evidence.Partial(claims.Linux, fmt.Sprintf("simulated machines %s (%s): they answer WinRM but not as Windows, and join nothing; never evidence of a Windows machine",
					strings.Join(names, ", "), made))
			}
		})
})

// stateOf says what is wrong with the run's state about machine m: it must
// be there, made (a provider ID), ready, at the inventory's address.
func stateOf(st *lifecycle.State, m config.Machine) error {
	for _, sm := range st.Machines {
		if sm.Name != m.Name {
			continue
		}
		switch {
		case sm.ID == "":
			return fmt.Errorf("it has no provider ID: down could not delete it by ID")
		case !sm.Ready:
			return fmt.Errorf("it is not ready")
		case sm.Address != m.Address:
			return fmt.Errorf("it is at %s, the inventory says %s", sm.Address, m.Address)
		}
		return nil
	}
	return fmt.Errorf("run %s does not name it", st.RunID)
}
