package benchrig

// rig.go: the namespaces of one benchmark rig (generator -> DUT -> sink over veth), the generator
// and sink programs, CPU placement (DUT receive work alone on one CPU), and making the DUT anew on
// a rig (Reset).

import (
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/seg6x/seg6x/tools/benchrig/rigbpf"
	"github.com/seg6x/seg6x/tools/testsupport"
	"golang.org/x/sys/unix"
)

// Interface names are global enough to find their NAPI threads (napi/<dev>-<id>).
const (
	devGen   = "s6bg0" // generator, in <prefix>-gen
	devDutIn = "s6bd0" // DUT ingress, in <prefix>-dut
	devDutEg = "s6bd1" // DUT egress
	devSink  = "s6bs0" // sink, in <prefix>-sink
)

var (
	macGen   = [6]byte{0x02, 0xb0, 0, 0, 0, 0x01}
	macDutIn = [6]byte{0x02, 0xb0, 0, 0, 0, 0x02}
	macDutEg = [6]byte{0x02, 0xb0, 0, 0, 0, 0x03}
	macSink  = [6]byte{0x02, 0xb0, 0, 0, 0, 0x04}
)

// CPUs: the DUT's receive NAPI thread runs alone on dutCPU at real-time priority; the generator,
// the sink's NAPI thread (real-time, so it preempts the generator between its batches) and every
// thread of this process share genCPU. SEG6X_BENCH_SINK_CPU moves the sink, for experiments.
const (
	genCPU = 0
	dutCPU = 1
	rtPrio = 50
)

var sinkCPU = func() int {
	if v := os.Getenv("SEG6X_BENCH_SINK_CPU"); v != "" {
		if n, err := strconv.Atoi(v); err == nil {
			return n
		}
	}
	return genCPU
}()

// keepOffDutCPU pins every thread of this process to genCPU, so only the DUT runs on dutCPU.
func keepOffDutCPU() error {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return err
	}
	var set unix.CPUSet
	set.Set(genCPU)
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		_ = unix.SchedSetaffinity(tid, &set)
	}
	return nil
}

type schedParam struct{ prio int32 }

// setFIFO gives a thread SCHED_FIFO priority prio (0: back to SCHED_OTHER).
func setFIFO(pid, prio int) error {
	p, policy := schedParam{prio: int32(prio)}, 1 // SCHED_FIFO
	if prio == 0 {
		policy = 0 // SCHED_OTHER
	}
	_, _, errno := unix.Syscall(unix.SYS_SCHED_SETSCHEDULER, uintptr(pid), uintptr(policy), uintptr(unsafe.Pointer(&p)))
	if errno != 0 {
		return errno
	}
	return nil
}

// Rig is one generator -> DUT -> sink set of namespaces.
type Rig struct {
	Prefix string
	Bin    string // seg6x binary, run in the DUT namespace for seg6x scenarios
	Dir    string
	objs   rigbpf.BenchObjects
	rev    rigbpf.BenchObjects // its sink counts, on the generator's interface, what comes back
	bidir  bool                // both directions loaded (LoadBoth)
	pairs  bool                // each frame leaves as two (Scenario.Fragments): count pairs
	// The templates of each direction by length, for closed loops (loop.go); nil: they cannot loop.
	loopClass []rigbpf.BenchLoopClasses
	base      rigbpf.BaselineObjects
	links     []link.Link
	genIdx    int
	dutNAPI   []int // thread ids of the DUT's receive NAPI threads (PinNAPI): ingress, egress if bidir
	// Thread ids of the sinks' NAPI threads (real-time, so they preempt the generator; a closed loop
	// makes them ordinary threads while it runs: loop.go).
	sinkNAPI []int
	// The DUT's seg6x daemon, in scenarios that run one (StartMirrorDaemon), and its output.
	daemon    *testsupport.Daemon
	daemonLog testsupport.LogBuffer
}

func macStr(m [6]byte) string { return net.HardwareAddr(m[:]).String() }

func (r *Rig) ns(role string) string { return r.Prefix + "-" + role }

// DutIP runs `ip -n <dut> args`.
func (r *Rig) DutIP(args ...string) error {
	_, err := testsupport.IP(r.ns("dut"), args...)
	return err
}

// DutExec runs a command in the DUT namespace.
func (r *Rig) DutExec(args ...string) error {
	_, err := testsupport.NetnsExec(r.ns("dut"), args...)
	return err
}

// Seg6x runs the seg6x CLI on the DUT's instance.
func (r *Rig) Seg6x(args ...string) error {
	return r.DutExec(append([]string{r.Bin, "--dir", r.DutDir()}, args...)...)
}

// Up builds the rig: namespaces, links, DUT addressing, generator and sink programs, CPU placement.
func Up(prefix, bin string) (*Rig, error) {
	r := &Rig{Prefix: prefix, Bin: bin, Dir: filepath.Join("/run/seg6x-bench", prefix)}
	r.Down() // what an interrupted earlier run may have left
	if err := r.up(); err != nil {
		r.Down()
		return nil, err
	}
	return r, nil
}

func (r *Rig) up() error {
	if err := testsupport.AddNetns(r.ns("gen"), r.ns("sink")); err != nil {
		return err
	}
	// Neither end needs IPv6 (their frames are made and counted by XDP programs): without it the
	// generator sends no router solicitations that a bare redirect would carry to the sink as wrong
	// frames, and the sink none that would make the DUT solicit it, frames the sink counts as wrong.
	for _, end := range []string{"gen", "sink"} {
		if err := testsupport.Sysctl(r.ns(end), "net.ipv6.conf.default.disable_ipv6=1"); err != nil {
			return err
		}
	}
	if err := rigbpf.LoadBenchObjects(&r.objs, nil); err != nil {
		return err
	}
	if err := rigbpf.LoadBenchObjects(&r.rev, nil); err != nil {
		return err
	}
	if err := rigbpf.LoadBaselineObjects(&r.base, nil); err != nil {
		return err
	}
	return r.wire()
}

// wire makes the DUT: its namespace and instance directory, its links to the generator and the
// sink, its addressing and routes; and attaches the generator's and the sink's programs to their
// ends of the links.
func (r *Rig) wire() error {
	if err := testsupport.AddNetns(r.ns("dut")); err != nil {
		return err
	}
	if err := testsupport.MountInstance(r.DutDir()); err != nil {
		return err
	}
	steps := [][]string{
		{"link", "add", devGen, "address", macStr(macGen), "netns", r.ns("gen"), "type", "veth", "peer", "name", devDutIn, "address", macStr(macDutIn), "netns", r.ns("dut")},
		{"link", "add", devDutEg, "address", macStr(macDutEg), "mtu", "3000", "netns", r.ns("dut"), "type", "veth", "peer", "name", devSink, "address", macStr(macSink), "mtu", "3000", "netns", r.ns("sink")},
		{"-n", r.ns("gen"), "link", "set", devGen, "up"},
		{"-n", r.ns("sink"), "link", "set", devSink, "up"},
	}
	for _, s := range steps {
		if err := testsupport.Run("ip", s...); err != nil {
			return err
		}
	}
	if err := sysctls(r.ns("dut"), "net.ipv4.ip_forward=1", "net.ipv6.conf.all.forwarding=1", "net.ipv4.conf.all.forwarding=1",
		"net.ipv6.conf.all.seg6_enabled=1", "net.ipv6.conf.default.seg6_enabled=1"); err != nil {
		return err
	}
	if err := ipBatch(r.ns("dut"),
		"link set lo up", "link set "+devDutIn+" up", "link set "+devDutEg+" up",
		"addr add 198.18.0.1/24 dev "+devDutIn,
		"addr add 198.19.0.1/24 dev "+devDutEg,
		"addr add fc00:b0::1/64 dev "+devDutIn+" nodad",
		"addr add fc00:b1::1/64 dev "+devDutEg+" nodad",
		"neigh add 198.19.0.2 lladdr "+macStr(macSink)+" dev "+devDutEg+" nud permanent",
		"neigh add fc00:b1::2 lladdr "+macStr(macSink)+" dev "+devDutEg+" nud permanent",
		"route add 198.19.1.0/24 via 198.19.0.2 dev "+devDutEg,
		// End.DX4's next hop sits behind a gateway: the kernel's End.DX4 resolves the neighbor of the
		// route's gateway, or of the inner destination when the next hop is directly connected.
		"route add 198.19.0.3/32 via 198.19.0.2 dev "+devDutEg,
		"route add 198.19.1.0/24 via 198.19.0.2 dev "+devDutEg+" table 100",
		"route add fc00:e::/48 via fc00:b1::2 dev "+devDutEg,
		"route add fcbb:0:e00::/48 via fc00:b1::2 dev "+devDutEg, // the next uSID after the DUT's uN
	); err != nil {
		return err
	}
	var devs []string
	for _, dev := range []string{devDutIn, devDutEg} {
		devs = append(devs, "net.ipv4.conf."+dev+".forwarding=1", "net.ipv6.conf."+dev+".forwarding=1", "net.ipv6.conf."+dev+".seg6_enabled=1")
	}
	if err := sysctls(r.ns("dut"), devs...); err != nil {
		return err
	}
	// XDP_TX from live frames needs a program on the generator's device: the second sink, which
	// counts what bidirectional scenarios send back (nothing comes back in the others). The sink
	// counts; frames the generator redirects leave through the sink's interface (gen_tx).
	if err := r.attachIn("gen", devGen, r.rev.BenchSink, &r.genIdx); err != nil {
		return err
	}
	var sinkIdx int
	if err := r.attachIn("sink", devSink, r.objs.BenchSink, &sinkIdx); err != nil {
		return err
	}
	if err := testsupport.InNetns(r.ns("gen"), func() error {
		return r.objs.LoopTx.Update(uint32(0), uint32(r.genIdx), ebpf.UpdateAny)
	}); err != nil {
		return err
	}
	return testsupport.InNetns(r.ns("sink"), func() error {
		return r.objs.GenTx.Update(uint32(0), uint32(sinkIdx), ebpf.UpdateAny)
	})
}

// unwire takes down what wire made, and with it whatever a scenario set up on the DUT (its seg6x
// daemon, instance directory and programs, its devices and routes); safe after a partial wire.
func (r *Rig) unwire() {
	if r.daemon != nil {
		r.daemon.Signal(os.Kill)
		r.daemon = nil
	}
	// The links to the generator and the sink go now, both pairs in one deletion (one wait for the
	// kernel's grace periods, not one each), and the programs attached to them with them (closing
	// their links first would wait as long again); the DUT's namespace and what else is in it go
	// when the kernel gets to it.
	_ = ipBatch(r.ns("dut"), "link set "+devDutIn+" group 99", "link set "+devDutEg+" group 99", "link del group 99")
	for _, l := range r.links {
		l.Close()
	}
	r.links = nil
	testsupport.DelNetns(r.ns("dut"))
	testsupport.RemoveInstance(r.DutDir()) // its pins, its state, its daemon's socket
	r.bidir, r.pairs, r.loopClass, r.dutNAPI, r.sinkNAPI = false, false, nil, nil, nil
}

// Reset puts the rig back as Up left it, in a third of the time of Down and Up: the DUT is made
// afresh (unwire, wire); the generator's and the sink's namespaces and programs stay, and their
// counters run on (a trial counts differences). Down the rig if Reset fails.
func (r *Rig) Reset() error {
	r.unwire()
	return r.wire()
}

// sysctls sets each "key=value" inside namespace ns, with one command.
func sysctls(ns string, settings ...string) error {
	_, err := testsupport.NetnsExec(ns, append([]string{"sysctl", "-qw"}, settings...)...)
	return err
}

// ipBatch runs each line (`ip` arguments, with no options: the addresses say the family) in
// namespace ns, with one command (ip -batch); it stops at the first that fails.
func ipBatch(ns string, lines ...string) error {
	cmd := exec.Command("ip", "-n", ns, "-batch", "-")
	cmd.Stdin = strings.NewReader(strings.Join(lines, "\n") + "\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("ip -n %s -batch: %v: %s", ns, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// attachIn attaches prog to dev in namespace role; the link lives as long as the rig.
func (r *Rig) attachIn(role, dev string, prog *ebpf.Program, ifindex *int) error {
	return testsupport.InNetns(r.ns(role), func() error {
		it, err := net.InterfaceByName(dev)
		if err != nil {
			return err
		}
		l, err := link.AttachXDP(link.XDPOptions{Program: prog, Interface: it.Index, Flags: link.XDPDriverMode})
		if err != nil {
			return fmt.Errorf("attach %s to %s: %w", prog, dev, err)
		}
		r.links = append(r.links, l)
		if ifindex != nil {
			*ifindex = it.Index
		}
		return nil
	})
}

// AttachDutBare attaches the bare redirect program to the DUT's ingress (the rig's forwarding limit).
func (r *Rig) AttachDutBare() error {
	var eg int
	if err := testsupport.InNetns(r.ns("dut"), func() error {
		it, err := net.InterfaceByName(devDutEg)
		if err != nil {
			return err
		}
		eg = it.Index
		return nil
	}); err != nil {
		return err
	}
	route := rigbpf.BaselineBareRoute{Ifindex: uint32(eg), Dmac: macSink, Smac: macDutEg}
	if err := r.base.BareCfg.Update(uint32(0), route, ebpf.UpdateAny); err != nil {
		return err
	}
	// A devmap resolves the ifindex in the writer's namespace: write it from the DUT's.
	if err := testsupport.InNetns(r.ns("dut"), func() error { return r.base.BareTx.Update(uint32(eg), uint32(eg), ebpf.UpdateAny) }); err != nil {
		return err
	}
	if err := r.attachIn("dut", devDutIn, r.base.BareRedirect, nil); err != nil {
		return err
	}
	return r.attachIn("dut", devDutEg, r.base.XdpPass, nil)
}

// AttachDutPass gives the DUT's devices a plain XDP_PASS program (kernel scenarios: frames sent with
// XDP_TX into a veth need a program on the receiving end; everything then goes to the kernel).
func (r *Rig) AttachDutPass() error {
	if err := r.attachIn("dut", devDutIn, r.base.XdpPass, nil); err != nil {
		return err
	}
	return r.attachIn("dut", devDutEg, r.base.XdpPass, nil)
}

// PinNAPI makes the DUT's and the sink's veth NAPI threaded and pins the threads; call it once the
// scenario attached the DUT (veth has NAPI only while an XDP program is attached).
func (r *Rig) PinNAPI() error {
	threads := []struct{ role, dev string }{{"dut", devDutIn}, {"sink", devSink}}
	cpus := map[string]int{devDutIn: dutCPU, devSink: sinkCPU}
	if r.bidir { // the DUT's egress receives too (on the DUT's CPU), the generator's side counts
		threads = append(threads, struct{ role, dev string }{"dut", devDutEg}, struct{ role, dev string }{"gen", devGen})
		cpus[devDutEg], cpus[devGen] = dutCPU, sinkCPU
	}
	r.dutNAPI, r.sinkNAPI = nil, nil
	for _, x := range threads {
		if _, err := testsupport.NetnsExec(r.ns(x.role), "sh", "-c", "echo 1 > /sys/class/net/"+x.dev+"/threaded"); err != nil {
			return err
		}
	}
	// Each write starts its device's thread (napi/<dev>-<id>); wait until every device shows one.
	var found map[string][]int
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		found = napiThreads(cpus)
		if len(found) == len(cpus) || time.Now().After(deadline) {
			break
		}
	}
	for dev, pids := range found {
		for _, pid := range pids {
			var set unix.CPUSet
			set.Set(cpus[dev])
			if err := unix.SchedSetaffinity(pid, &set); err != nil {
				return fmt.Errorf("pin napi/%s: %w", dev, err)
			}
			if err := setFIFO(pid, rtPrio); err != nil {
				return fmt.Errorf("real-time priority for napi/%s: %w", dev, err)
			}
			if dev == devSink || dev == devGen {
				r.sinkNAPI = append(r.sinkNAPI, pid)
			} else {
				r.dutNAPI = append(r.dutNAPI, pid)
			}
		}
	}
	if len(found) != len(cpus) {
		return fmt.Errorf("threaded NAPI kthreads not found (found those of %v)", slices.Sorted(maps.Keys(found)))
	}
	return keepOffDutCPU()
}

// napiThreads returns the thread ids of the NAPI threads (napi/<dev>-<id>) of each device (a key of
// devs) that has any.
func napiThreads(devs map[string]int) map[string][]int {
	found := map[string][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		comm, err := os.ReadFile(filepath.Join("/proc", e.Name(), "comm"))
		if err != nil {
			continue
		}
		name := strings.TrimSpace(string(comm))
		for dev := range devs {
			if strings.HasPrefix(name, "napi/"+dev+"-") {
				found[dev] = append(found[dev], pid)
			}
		}
	}
	return found
}

// Down removes the rig; safe after a partial Up.
func (r *Rig) Down() {
	r.unwire()
	r.objs.Close()
	r.rev.Close()
	r.base.Close()
	testsupport.DelNetns(r.ns("gen"), r.ns("sink"))
	_ = os.RemoveAll(r.Dir)
}
