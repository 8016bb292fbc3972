package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/winconform/winconform/config"
	"github.com/winconform/winconform/infra/docker"
	"github.com/winconform/winconform/infra/nodeimage"
	"github.com/winconform/winconform/infra/vms/libvirt"
	"github.com/winconform/winconform/infra/vms/lifecycle"
	"github.com/winconform/winconform/infra/windows/remote"
	"github.com/winconform/winconform/internal/flagvalue"
	"github.com/winconform/winconform/testing/libvirtguest"
	wsman "github.com/winconform/winconform/testing/standin"
)

func vmsCmd() *cobra.Command {
	var (
		runs          int
		counts        []int
		endpoint      string
		dockerNetwork string
		accel         string
		settle, poll  time.Duration
		memory        int
	)
	cmd := &cobra.Command{
		Use:   "vms",
		Short: "Time to ready of 1, 2 and 3 stand-in VMs under libvirt, against a bare QEMU boot of the same image",
		Long: `Both sides boot the libvirt provider's stand-in guest (a Debian kernel and a
busybox initramfs running the WS-Management stand-in; built once into the cache)
from a qcow2 overlay of its disk, N machines at once, and end when every
machine has answered WinRM's unauthenticated Identify and one authenticated
command (hostname, NTLM, sealed). "harness" is winconform's lifecycle up
with the libvirt provider (the pool's overlay, a transient domain on a Docker
network's bridge, its static address, the readiness ladder). The baseline is
what a person would type: qemu-img create of the overlay and
qemu-system-x86_64 with the kernel, a user-mode network forwarding a local
port to 5985, and the same two WinRM requests in a loop. Runs alternate
between the two; the medians and their ratio are printed per N.

The ladder's settle time (how long an address must stay the same; 20s by
default, for Windows' DHCP during sysprep) is a wait the harness chooses, not
work: --settle sets it, 1s by default here, since the provider gives the
address itself.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			for _, n := range counts {
				if n < 1 || n > 8 {
					return fmt.Errorf("--counts: %d is not 1 to 8", n)
				}
			}
			b := &vmBench{log: cmd.ErrOrStderr(), accel: accel, settle: settle, poll: poll, memory: memory, endpoint: endpoint}
			ctx := cmd.Context()
			if err := b.prepare(ctx, dockerNetwork); err != nil {
				return err
			}
			defer b.cleanup()
			fmt.Fprintf(b.log, "bench: stand-in image %s (%s), domain type %s, %d MiB and 1 vCPU a machine\n",
				b.img.Key, strings.Join(b.img.Packages, ", "), b.p.Accel(), memory)
			for _, n := range counts {
				var harness, bare []time.Duration
				for i := 0; i < runs; i++ {
					h, err := b.harness(ctx, n, i)
					if err != nil {
						return err
					}
					q, err := b.bare(ctx, n)
					if err != nil {
						return err
					}
					harness, bare = append(harness, h), append(bare, q)
					fmt.Fprintf(b.log, "bench: %d machine(s), run %d: harness %s, bare qemu %s\n", n, i+1, h.Round(100*time.Millisecond), q.Round(100*time.Millisecond))
				}
				h, q := median(harness), median(bare)
				ratio := h.Seconds() / q.Seconds()
				fmt.Fprintf(cmd.OutOrStdout(), "BenchmarkVMs/%d: time to ready %s (harness: libvirt, lifecycle up, settle %v), bare qemu %s, ratio %.2f (%s the 1.2 target), median of %d runs\n",
					n, h.Round(100*time.Millisecond), settle, q.Round(100*time.Millisecond), ratio, within(ratio <= 1.2), runs)
			}
			return nil
		},
	}
	cmd.Flags().Var(flagvalue.Int(&runs, 3, 1, maxRuns, "how many runs of each side per machine count"), "runs", "runs of each side per machine count")
	cmd.Flags().IntSliceVar(&counts, "counts", []int{1, 2, 3}, "machine counts to time")
	cmd.Flags().StringVar(&endpoint, "endpoint", libvirt.DefaultEndpoint, "the libvirt URI (a local host: the baseline runs QEMU here)")
	cmd.Flags().StringVar(&dockerNetwork, "docker-network", "winconform-vmbench", "the Docker network whose bridge the VMs attach to (made with an ip-range when absent, removed after)")
	cmd.Flags().StringVar(&accel, "accel", "qemu", "the domain type, kvm or qemu (TCG), for both sides")
	cmd.Flags().DurationVar(&settle, "settle", time.Second, "how long an address must stay the same (the ladder's settle)")
	cmd.Flags().DurationVar(&poll, "poll", 250*time.Millisecond, "the time between two attempts of a rung, for both sides")
	cmd.Flags().IntVar(&memory, "memory", 256, "memory of each machine, MiB")
	return cmd
}

// vmBench holds what both sides share.
type vmBench struct {
	log            io.Writer
	endpoint       string
	accel          string
	settle, poll   time.Duration
	memory         int
	img            libvirtguest.Image
	p              *libvirt.Provider
	vmFile         string
	dir            string
	removeNetwork  func()
	disk, kern, rd string // the pool's volumes
}

func (b *vmBench) prepare(ctx context.Context, network string) error {
	fmt.Fprintln(b.log, "bench: the stand-in image (built once into the cache)")
	img, err := libvirtguest.Ensure(ctx, libvirtguest.Spec{CacheDir: nodeimage.DefaultCacheDir()})
	if err != nil {
		return err
	}
	b.img = img
	d, err := docker.New()
	if err != nil {
		return err
	}
	_, absent := d.Output(ctx, nil, "network", "inspect", network)
	if _, err := d.EnsureReservedNetwork(ctx, network); err != nil {
		return err
	}
	b.removeNetwork = func() {}
	if absent != nil { // made here: removed after
		b.removeNetwork = func() { _ = d.Run(context.Background(), "network", "rm", network) }
	}
	s := libvirt.Settings{DockerNetwork: network, Pool: "winconform-bench", PoolPath: libvirt.DefaultPoolPath + "-bench", Accel: b.accel}
	p, err := libvirt.Open(ctx, b.endpoint, s)
	if err != nil {
		return err
	}
	b.p = p
	b.disk, b.kern, b.rd = "standin-"+img.Key+".qcow2", "standin-"+img.Key+".vmlinuz", "standin-"+img.Key+".initrd"
	for local, vol := range map[string]string{img.Disk: b.disk, img.Kernel: b.kern, img.Initrd: b.rd} {
		if _, err := p.Import(ctx, local, vol); err != nil {
			return err
		}
	}
	// The provider of the runs boots the imported kernel and initrd.
	p.Close()
	s.Kernel, s.Initrd, s.Cmdline = b.kern, b.rd, libvirtguest.Cmdline
	if b.p, err = libvirt.Open(ctx, b.endpoint, s); err != nil {
		return err
	}
	b.dir, err = os.MkdirTemp("", "winconform-bench-vms-")
	if err != nil {
		return err
	}
	b.vmFile = filepath.Join(b.dir, "vms.yaml")
	text := fmt.Sprintf(`provider: libvirt
connection: {endpoint: %q}
image: %s
count: 1
cpus: 1
memory: %dMi
machine:
  user: %s
  passwordFrom: {env: WINCONFORM_BENCH_PASSWORD}
libvirt: {dockerNetwork: %s, pool: %s, poolPath: %s, accel: %s, kernel: %s, initrd: %s, cmdline: %q}
`, b.endpoint, b.disk, b.memory, standinUser, network, s.Pool, s.PoolPath, b.accel, b.kern, b.rd, libvirtguest.Cmdline)
	return os.WriteFile(b.vmFile, []byte(text), 0o600)
}

func (b *vmBench) cleanup() {
	if b.p != nil {
		b.p.Close()
	}
	if b.removeNetwork != nil {
		b.removeNetwork()
	}
	if b.dir != "" {
		os.RemoveAll(b.dir)
	}
}

// The stand-in's account: the WS-Management stand-in's defaults.
const (
	standinUser     = wsman.DefaultUser
	standinPassword = wsman.DefaultPassword
)

// harness times lifecycle.Up of n machines to ready, then takes them down
// (outside the timing).
func (b *vmBench) harness(ctx context.Context, n, i int) (time.Duration, error) {
	f, err := config.Load[config.Machines](b.vmFile, func(k string) (string, bool) {
		if k == "WINCONFORM_BENCH_PASSWORD" {
			return standinPassword, true
		}
		return os.LookupEnv(k)
	})
	if err != nil {
		return 0, err
	}
	f.Count = n
	run := fmt.Sprintf("bench-%d-%d-%x", n, i, time.Now().UnixNano()&0xffff)
	start := time.Now()
	_, err = lifecycle.Up(ctx, f, b.p, lifecycle.Options{RunID: run, Dir: filepath.Join(b.dir, run), ReadyTimeout: 5 * time.Minute,
		Settle: b.settle, Poll: b.poll})
	took := time.Since(start)
	if derr := lifecycle.Down(context.WithoutCancel(ctx), b.p, run, lifecycle.DownOptions{}); derr != nil && err == nil {
		err = derr
	}
	return took, err
}

// bare times n QEMUs started by hand, each on an overlay of the same disk
// with the same kernel, to their WinRM answering Identify and hostname.
func (b *vmBench) bare(ctx context.Context, n int) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	type vm struct {
		cmd  *exec.Cmd
		port int
	}
	var machines []vm
	defer func() {
		for _, m := range machines {
			_ = m.cmd.Process.Kill()
			_ = m.cmd.Wait()
		}
	}()
	start := time.Now()
	for i := 0; i < n; i++ {
		port, err := freePort()
		if err != nil {
			return 0, err
		}
		overlay := filepath.Join(b.dir, fmt.Sprintf("bare-%d.qcow2", i))
		os.Remove(overlay)
		if out, err := exec.CommandContext(ctx, "qemu-img", "create", "-q", "-f", "qcow2", "-F", "qcow2", "-b", b.img.Disk, overlay).CombinedOutput(); err != nil {
			return 0, fmt.Errorf("qemu-img: %v: %s", err, out)
		}
		accel := "tcg"
		if b.accel == "kvm" {
			accel = "kvm"
		}
		cmd := exec.Command("qemu-system-x86_64", "-machine", "accel="+accel, "-m", strconv.Itoa(b.memory), "-smp", "1", "-display", "none",
			"-kernel", b.img.Kernel, "-initrd", b.img.Initrd, "-append", libvirtguest.Cmdline+" winconform.name=bare-"+strconv.Itoa(i),
			"-drive", "file="+overlay+",if=virtio,format=qcow2",
			"-netdev", fmt.Sprintf("user,id=n0,hostfwd=tcp:127.0.0.1:%d-:5985", port), "-device", "virtio-net-pci,netdev=n0",
			"-serial", "null", "-monitor", "none")
		if err := cmd.Start(); err != nil {
			return 0, err
		}
		machines = append(machines, vm{cmd, port})
	}
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i, m := range machines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = b.ready(ctx, "127.0.0.1", m.port)
		}()
	}
	wg.Wait()
	took := time.Since(start)
	return took, errors.Join(errs...)
}

// ready polls Identify, then runs hostname, as the ladder's last two rungs.
func (b *vmBench) ready(ctx context.Context, addr string, port int) error {
	w, err := remote.NewWinRM(remote.Config{Address: addr, Port: port, User: standinUser, Password: standinPassword})
	if err != nil {
		return err
	}
	defer w.Close()
	for {
		actx, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, err = w.Identify(actx)
		cancel()
		if err == nil {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("bare qemu on port %d: no Identify: %w", port, err)
		case <-time.After(b.poll):
		}
	}
	res, err := w.RunPS(ctx, "ready", "hostname")
	if err == nil {
		err = res.Err()
	}
	return err
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
