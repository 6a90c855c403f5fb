package benchrig

// profile.go: where the DUT's CPU goes, per frame. One extra trial at the generator's full rate
// with the kernel's BPF run-time statistics on: the DUT's receive NAPI thread runs alone on its CPU
// and does all of the DUT's work for a frame (XDP program, redirect or kernel stack, transmit into
// the next veth), so its CPU time over the frames its XDP program saw is the DUT's cost per frame,
// and the program's own run time is the part spent in the XDP program. Unlike a rate search this
// does not depend on when the rig happens to drop a frame.

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cilium/ebpf"
	"github.com/seg6x/seg6x/internal/testsupport"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// Profile is the DUT's cost per frame over one trial at full rate.
type Profile struct {
	Sent       uint64  // frames the generator sent
	Good       uint64  // frames the sink accepted
	First      uint64  // of which matched its first pattern
	Frames     uint64  // frames the DUT's ingress XDP program ran on
	DUTNs      float64 // CPU time of the DUT's receive NAPI thread per frame
	ProgNs     float64 // run time of the DUT's ingress XDP program per frame (bpf_stats)
	DUTBusy    float64 // share of the trial the NAPI thread was on its CPU (near 1: saturated)
	OfferedPPS float64
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
	devs := []string{devDutIn}
	if r.bidir {
		devs = append(devs, devDutEg)
	}
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

// Profile runs one trial of d at the generator's full rate with BPF run-time statistics on.
// The statistics cost every XDP program run two clock reads (on every CPU, while this runs), which
// is why the rate searches run without them.
func (r *Rig) Profile(frameLen int, d time.Duration) (Profile, error) {
	return r.ProfileAt(frameLen, 0, d)
}

// ProfileAt is Profile at rate frames/s (0: the generator's full rate).
func (r *Rig) ProfileAt(frameLen int, rate float64, d time.Duration) (Profile, error) {
	if len(r.dutNAPI) == 0 {
		return Profile{}, fmt.Errorf("the DUT's NAPI thread is not known (PinNAPI first)")
	}
	progs, err := r.dutPrograms()
	if err != nil {
		return Profile{}, err
	}
	defer closeAll(progs)
	stats, err := ebpf.EnableStats(uint32(unix.BPF_STATS_RUN_TIME))
	if err != nil {
		return Profile{}, fmt.Errorf("enable BPF run-time statistics: %w", err)
	}
	defer stats.Close()
	n0, t0ns, err := progStats(progs)
	if err != nil {
		return Profile{}, err
	}
	c0, err := r.napiCPU()
	if err != nil {
		return Profile{}, err
	}
	t0 := time.Now()
	t, err := r.Run(frameLen, rate, d)
	if err != nil {
		return Profile{}, err
	}
	c1, err := r.napiCPU()
	if err != nil {
		return Profile{}, err
	}
	wall := time.Since(t0)
	n1, t1ns, err := progStats(progs)
	if err != nil {
		return Profile{}, err
	}
	p := Profile{Sent: t.Sent, Good: t.Good, First: t.First, Frames: n1 - n0, OfferedPPS: t.OfferedPPS}
	if p.Frames == 0 {
		return p, fmt.Errorf("the DUT's XDP program did not run")
	}
	p.DUTNs = float64(c1-c0) / float64(p.Frames)
	p.ProgNs = float64(t1ns-t0ns) / float64(p.Frames)
	// Busy: the share of one CPU (both directions' threads share the DUT's CPU).
	p.DUTBusy = float64(c1-c0) / float64(wall)
	return p, nil
}
