package benchrig

// profile.go: where the DUT's CPU goes, per frame. Two extra trials, closed loops where the scenario
// allows (loop.go), else the generator at its full rate. The first, with nothing else changed, gives
// the DUT's CPU per frame: its receive NAPI threads run alone on their CPU and do all of the DUT's
// work for a frame (XDP program, redirect or kernel stack, transmit into the next veth), so their CPU
// time over the frames the DUT's veths took in (their link statistics) is the DUT's cost per frame,
// and their share of the trial's wall time says whether the DUT was saturated. The second, with the
// kernel's BPF run-time statistics on, gives the part spent in the DUT's XDP program. The statistics
// cost every program run on every CPU two clock reads (in a KVM guest a paravirtual clock read
// each), the rig's programs' too, which would both inflate the DUT's figure and slow the rig: hence
// two trials. Unlike a rate search this does not depend on when the rig happens to drop a frame.

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cilium/ebpf"
	"github.com/seg6x/seg6x/tools/testsupport"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// Profile is the DUT's cost per frame over one trial at full rate.
type Profile struct {
	Sent       uint64  // frames the generator sent
	Good       uint64  // frames the sink accepted
	First      uint64  // of which matched its first pattern
	Frames     uint64  // frames the DUT's veths took in (first trial)
	DUTNs      float64 // CPU time of the DUT's receive NAPI threads per frame (first trial)
	ProgNs     float64 // run time of the DUT's XDP programs per frame they ran on (second trial, bpf_stats)
	DUTBusy    float64 // share of the first trial the NAPI threads were on their CPU (near 1: saturated)
	OfferedPPS float64 // the rate frames went into the DUT in the first trial
	GoodPPS    float64 // the rate of correct frames out of it
	// Frames the DUT's receive rings refused in the first trial (full: the DUT fell behind).
	RingDrops uint64
	Loop      bool // the trials were closed loops (loop.go): OfferedPPS is the DUT's capacity
	// Steal is the share of the machine's CPU time (all CPUs) its host took away during the first
	// trial (/proc/stat): a VM's vCPUs not running when they had work.
	Steal float64
}

// userHZ is the unit of /proc/stat's times (USER_HZ: 100 on Linux).
const userHZ = 100

// stealTicks returns the time the host took from this VM's CPUs, all of them (/proc/stat, USER_HZ).
func stealTicks() (uint64, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line) // cpu user nice system idle iowait irq softirq steal ...
	if len(f) < 9 || f[0] != "cpu" {
		return 0, fmt.Errorf("/proc/stat: %q", line)
	}
	return strconv.ParseUint(f[8], 10, 64)
}

// threadCPU returns the time thread tid has run on a CPU (schedstat, ns).
func threadCPU(tid int) (uint64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/schedstat", tid))
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(b))
	if len(f) < 1 {
		return 0, fmt.Errorf("schedstat of %d: %q", tid, b)
	}
	return strconv.ParseUint(f[0], 10, 64)
}

// dutPrograms returns the XDP programs attached to the DUT's ingress veth and, when both directions
// are loaded, its egress (once if they are the same program).
func (r *Rig) dutPrograms() ([]*ebpf.Program, error) {
	devs := r.dutDevs()
	var ids []uint32
	err := testsupport.InNetns(r.ns("dut"), func() error {
		for _, dev := range devs {
			l, err := netlink.LinkByName(dev)
			if err != nil {
				return err
			}
			x := l.Attrs().Xdp
			if x == nil || x.ProgId == 0 {
				return fmt.Errorf("no XDP program on the DUT's %s", dev)
			}
			if !slices.Contains(ids, x.ProgId) {
				ids = append(ids, x.ProgId)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var progs []*ebpf.Program
	for _, id := range ids {
		p, err := ebpf.NewProgramFromID(ebpf.ProgramID(id))
		if err != nil {
			closeAll(progs)
			return nil, err
		}
		progs = append(progs, p)
	}
	return progs, nil
}

func closeAll(ps []*ebpf.Program) {
	for _, p := range ps {
		p.Close()
	}
}

// progStats sums the run count and run time of progs.
func progStats(progs []*ebpf.Program) (runs uint64, ns time.Duration, err error) {
	for _, p := range progs {
		st, err := p.Stats()
		if err != nil {
			return 0, 0, err
		}
		runs += st.RunCount
		ns += st.Runtime
	}
	return runs, ns, nil
}

// napiCPU sums the CPU time of the DUT's receive threads.
func (r *Rig) napiCPU() (uint64, error) {
	var total uint64
	for _, tid := range r.dutNAPI {
		c, err := threadCPU(tid)
		if err != nil {
			return 0, err
		}
		total += c
	}
	return total, nil
}

// Profile runs the two profile trials of d each at the generator's full rate.
func (r *Rig) Profile(frameLen int, d time.Duration) (Profile, error) {
	return r.ProfileAt(frameLen, 0, d)
}

// dutDevs returns the DUT's receiving veths: the ingress, and the egress when both directions are
// loaded.
func (r *Rig) dutDevs() []string {
	if r.bidir {
		return []string{devDutIn, devDutEg}
	}
	return []string{devDutIn}
}

// dutTaken returns the frames the DUT's veths took in (their NAPI consumed, XDP or not) and the ones
// their senders could not queue (the receive ring was full): a veth counts both in its link
// statistics (rx_packets, rx_dropped). One netlink request per device, no process started: this
// runs while the rig's CPU is saturated.
func (r *Rig) dutTaken() (taken, refused uint64, err error) {
	err = testsupport.InNetns(r.ns("dut"), func() error {
		for _, dev := range r.dutDevs() {
			l, err := netlink.LinkByName(dev)
			if err != nil {
				return err
			}
			st := l.Attrs().Statistics
			if st == nil {
				return fmt.Errorf("no statistics for %s", dev)
			}
			taken, refused = taken+st.RxPackets, refused+st.RxDropped
		}
		return nil
	})
	return taken, refused, err
}

// ProfileAt is Profile at rate frames/s (0: the generator's full rate).
func (r *Rig) ProfileAt(frameLen int, rate float64, d time.Duration) (Profile, error) {
	if len(r.dutNAPI) == 0 {
		return Profile{}, fmt.Errorf("the DUT's NAPI thread is not known (PinNAPI first)")
	}
	p, err := r.cpuTrial(frameLen, rate, d)
	if err != nil {
		return p, err
	}
	p.ProgNs, err = r.progTrial(frameLen, rate, d)
	return p, err
}

// closedLoop reports whether a profile trial at rate runs as a closed loop.
func (r *Rig) closedLoop(rate float64) bool { return rate == 0 && r.Loops() }

// traffic runs one trial of about d: closed-loop where the scenario allows and rate is 0 (the DUT is
// then saturated even when it is a bare redirect), else the generator at rate (0: its full rate).
// begin and end run right before and after the measured span.
func (r *Rig) traffic(frameLen int, rate float64, d time.Duration, begin, end func() error) (Trial, error) {
	if r.closedLoop(rate) {
		t, _, err := r.RunLoop(frameLen, d, begin, end)
		return t, err
	}
	if err := begin(); err != nil {
		return Trial{}, err
	}
	t, err := r.Run(frameLen, rate, d)
	if err != nil {
		return t, err
	}
	return t, end()
}

// cpuTrial is the first profile trial: the DUT's CPU per frame and how busy it was.
func (r *Rig) cpuTrial(frameLen int, rate float64, d time.Duration) (Profile, error) {
	var c0, c1, v0, v1, e0, e1, s0, s1 uint64
	var t0 time.Time
	var wall time.Duration
	begin := func() (err error) {
		if v0, e0, err = r.dutTaken(); err != nil {
			return err
		}
		if s0, err = stealTicks(); err != nil {
			return err
		}
		c0, err = r.napiCPU()
		t0 = time.Now()
		return err
	}
	end := func() (err error) {
		if c1, err = r.napiCPU(); err != nil {
			return err
		}
		wall = time.Since(t0)
		if s1, err = stealTicks(); err != nil {
			return err
		}
		v1, e1, err = r.dutTaken()
		return err
	}
	t, err := r.traffic(frameLen, rate, d, begin, end)
	if err != nil {
		return Profile{}, err
	}
	p := Profile{Sent: t.Sent, Good: t.Good, First: t.First, Frames: v1 - v0, OfferedPPS: t.OfferedPPS, GoodPPS: t.GoodPPS, RingDrops: e1 - e0,
		Loop: r.closedLoop(rate)}
	if p.Frames == 0 {
		return p, fmt.Errorf("the DUT took in no frames")
	}
	p.DUTNs = float64(c1-c0) / float64(p.Frames)
	p.Steal = float64(s1-s0) * float64(time.Second/userHZ) / float64(wall) / float64(runtime.NumCPU())
	// Busy: the share of one CPU (both directions' threads share the DUT's CPU).
	p.DUTBusy = float64(c1-c0) / float64(wall)
	return p, nil
}

// progTrial is the second profile trial: the DUT's XDP programs' run time per run.
func (r *Rig) progTrial(frameLen int, rate float64, d time.Duration) (float64, error) {
	progs, err := r.dutPrograms()
	if err != nil {
		return 0, err
	}
	defer closeAll(progs)
	stats, err := ebpf.EnableStats(uint32(unix.BPF_STATS_RUN_TIME))
	if err != nil {
		return 0, fmt.Errorf("enable BPF run-time statistics: %w", err)
	}
	defer stats.Close()
	var n0, n1 uint64
	var t0, t1 time.Duration
	begin := func() (err error) { n0, t0, err = progStats(progs); return err }
	end := func() (err error) { n1, t1, err = progStats(progs); return err }
	if _, err := r.traffic(frameLen, rate, d, begin, end); err != nil {
		return 0, err
	}
	if n1 == n0 {
		return 0, fmt.Errorf("the DUT's XDP program did not run")
	}
	return float64(t1-t0) / float64(n1-n0), nil
}
