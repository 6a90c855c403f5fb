package benchrig

// micro.go: `seg6x-bench micro`: ns per packet of each behavior from BPF_PROG_TEST_RUN on the packet
// fixtures' rig, next to a bare MAC-swap redirect, the FIB_MAIN_DIRECT variant and the next-hop cache.

import (
	"bytes"
	"fmt"
	"net"
	"sort"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/ringbuf"
	"github.com/seg6x/seg6x/internal/dataplane"
	"github.com/seg6x/seg6x/tools/benchrig/rigbpf"
	"github.com/seg6x/seg6x/tools/fixtures"
)

// microCases are the fixtures timed by `seg6x-bench micro`, one per behavior (see tools/fixtures).
var microCases = []string{
	"encap1_v4_udp", "encap2_v4_tcp_tos", "encap10", "encap16", "encap_red2", "encap_red1_icmp", "encap1_v6",
	"end", "end_x", "end_t", "end_dx4", "end_dx6", "end_dt4_vlan", "end_dt6_vlan", "end_dt46_v4",
	"usid_un_shift", "usid_udt4", "no_route", "drop_srh_bad_len",
}

// MicroResult is one row of `seg6x-bench micro --json`.
type MicroResult struct {
	Case        string  `json:"case"`
	Description string  `json:"description"`
	Action      string  `json:"action"`
	NsPerPkt    float64 `json:"ns_per_pkt"`
	VsBare      float64 `json:"ratio_to_bare_redirect"`
	// The FIB_MAIN_DIRECT build variant (main-table lookups skip the policy rules).
	DirectNsPerPkt float64 `json:"fib_direct_ns_per_pkt"`
	// With the headend's next-hop cache on (nexthop_cache_ms 1000; other behaviors unaffected).
	CachedNsPerPkt float64 `json:"nh_cache_ns_per_pkt"`
	// A trace armed (the product program tail-calls its traced build): with a filter no packet
	// matches, and with one every packet matches (records of 128-byte frames to the ring, drained).
	TraceArmedNsPerPkt float64 `json:"trace_armed_nomatch_ns_per_pkt"`
	TraceAllNsPerPkt   float64 `json:"trace_armed_all_ns_per_pkt"`
	// With --baseline: the other build's program on the same frames, in paired rounds (each round
	// runs both, in alternating order): its mean, and the median of the rounds' ratios this/baseline.
	BaselineNsPerPkt float64   `json:"baseline_ns_per_pkt,omitempty"`
	VsBaseline       float64   `json:"ratio_to_baseline,omitempty"`
	BaselineRatios   []float64 `json:"baseline_round_ratios,omitempty"`
}

// BaselineRounds is how many paired rounds --baseline splits a case's runs into.
const BaselineRounds = 10

// RunMicro times every micro case, the SID lookups and the headend at 10 and 1M routes; it must run inside a
// namespace made for it.
// With baseline (an object file of another build, dataplane.LoadProgramFile), each case also runs
// that build's program in paired rounds. fabricMTU > 0 sets the MTU of the rig's fabric link (fab0;
// the fixtures give it 3500) first.
func RunMicro(runs int, baseline string, fabricMTU int) (Micro, error) {
	rig, err := fixtures.NewRig()
	if err != nil {
		return Micro{}, err
	}
	defer rig.Close()
	var m Micro
	if fabricMTU > 0 {
		if err := fixtures.SetFabricMTU(rig, fabricMTU); err != nil {
			return m, err
		}
	}
	if m.FabricMTU, err = fixtures.MTU("fab0"); err != nil {
		return m, err
	}
	if m.Cases, err = MicroCases(rig, runs, baseline); err != nil {
		return m, err
	}
	if m.Plugins, err = PluginCases(rig, runs); err != nil {
		return m, err
	}
	var base *ebpf.Program
	if baseline != "" {
		if base, err = dataplane.LoadProgramFile(rig.Dir, dataplane.ProgramOptions{}, baseline); err != nil {
			return m, err
		}
		defer base.Close()
	}
	if m.Lookups, err = SIDLookups(rig, 200000, 7, base); err != nil {
		return m, err
	}
	m.Scale, err = RouteScale(rig, []int{10, 1000000}, runs)
	return m, err
}

// Micro is what `seg6x-bench micro` measures.
type Micro struct {
	// FabricMTU is the MTU of the fabric link the fabric cases arrive on: above 1500 the program reads
	// every frame's whole length there (multi-buffer frames are possible), at 1500 it does not.
	FabricMTU int           `json:"fabric_mtu"`
	Cases     []MicroResult `json:"cases"`
	Plugins   []PluginRow   `json:"plugins"`
	Lookups   []LookupRow   `json:"sid_lookup"`
	Scale     []ScaleRow    `json:"route_scale"`
}

// MicroCases times the bare redirect and every micro case on rig, runs runs each (and baseline's
// program in paired rounds, when given).
func MicroCases(rig *fixtures.Rig, runs int, baseline string) ([]MicroResult, error) {
	all, err := fixtures.Load()
	if err != nil {
		return nil, err
	}

	bare, err := loadBare("fab0", "02:00:00:00:01:02")
	if err != nil {
		return nil, err
	}
	defer bare.Close()
	ref := *fixtures.Find(all, "encap1_v4_udp")
	ref.Name, ref.Description = "bare_redirect", "MAC swap + redirect only (same input frame as encap1_v4_udp)"
	bareRes, err := rig.Run(bare.BareRedirect, &ref, runs)
	if err != nil {
		return nil, err
	}
	if bareRes.Action != uint32(dataplane.ActionIndex("XDP_REDIRECT")) {
		return nil, fmt.Errorf("bare redirect returned %s", dataplane.Actions[bareRes.Action])
	}
	bareNs := float64(bareRes.PerRun) / float64(time.Nanosecond)
	out := []MicroResult{{Case: ref.Name, Description: ref.Description, Action: "XDP_REDIRECT", NsPerPkt: bareNs, VsBare: 1,
		DirectNsPerPkt: bareNs, CachedNsPerPkt: bareNs}}
	cached, err := dataplane.LoadObjects(rig.Dir, dataplane.ProgramOptions{NextHopCache: time.Second})
	if err != nil {
		return nil, err
	}
	defer cached.Close()
	direct, err := rigbpf.LoadFibDirect(rig.Dir)
	if err != nil {
		return nil, err
	}
	defer direct.Close()
	armed, stop, err := armedForMicro(rig.Dir)
	if err != nil {
		return nil, err
	}
	defer stop()
	var base *ebpf.Program
	if baseline != "" {
		if base, err = dataplane.LoadProgramFile(rig.Dir, dataplane.ProgramOptions{}, baseline); err != nil {
			return nil, err
		}
		defer base.Close()
	}
	for _, name := range microCases {
		f := fixtures.Find(all, name)
		if f == nil {
			return nil, fmt.Errorf("micro case %s has no fixture", name)
		}
		r, err := rig.Run(nil, f, runs)
		if err != nil {
			return nil, err
		}
		if want := dataplane.ActionIndex(f.Action); int(r.Action) != want {
			return nil, fmt.Errorf("%s returned %s, fixture expects %s", name, dataplane.Actions[r.Action], f.Action)
		}
		rd, err := rig.Run(direct.Seg6xXdp, f, runs)
		if err != nil {
			return nil, err
		}
		if rd.Action != r.Action {
			return nil, fmt.Errorf("%s: FIB_MAIN_DIRECT variant returned %s", name, dataplane.Actions[rd.Action])
		}
		rc, err := rig.Run(cached.Seg6xXdp, f, runs)
		if err != nil {
			return nil, err
		}
		if rc.Action != r.Action || !bytes.Equal(rc.Output, r.Output) {
			return nil, fmt.Errorf("%s: with the next-hop cache the result differs", name)
		}
		var traced [2]float64
		for i, match := range []bool{false, true} {
			if err := armed.filter(match); err != nil {
				return nil, err
			}
			rt, err := rig.Run(armed.prog.Seg6xXdp, f, runs)
			if err != nil {
				return nil, err
			}
			if rt.Action != r.Action || !bytes.Equal(rt.Output, r.Output) {
				return nil, fmt.Errorf("%s: with a trace armed the result differs", name)
			}
			traced[i] = float64(rt.PerRun)
		}
		if err := armed.filter(false); err != nil {
			return nil, err
		}
		ns := float64(r.PerRun)
		res := MicroResult{Case: name, Description: f.Description, Action: f.Action, NsPerPkt: ns, VsBare: ns / bareNs,
			DirectNsPerPkt: float64(rd.PerRun), CachedNsPerPkt: float64(rc.PerRun), TraceArmedNsPerPkt: traced[0], TraceAllNsPerPkt: traced[1]}
		if base != nil {
			if err := pairedRounds(rig, rig.Objs.Seg6xXdp, base, f, runs, &res); err != nil {
				return nil, err
			}
		}
		out = append(out, res)
	}
	return out, nil
}

// pairedRounds runs f through prog and base in BaselineRounds rounds of runs/BaselineRounds runs each,
// base first in every other round (a drift of the machine weighs on both alike), and fills res's
// baseline fields. The two must take the same action.
func pairedRounds(rig *fixtures.Rig, prog, base *ebpf.Program, f *fixtures.Fixture, runs int, res *MicroResult) error {
	per := max(runs/BaselineRounds, 1)
	var sum float64
	for i := 0; i < BaselineRounds; i++ {
		order := []*ebpf.Program{prog, base}
		if i%2 == 1 {
			order[0], order[1] = base, prog
		}
		var got [2]fixtures.Result
		for j, p := range order {
			r, err := rig.Run(p, f, per)
			if err != nil {
				return err
			}
			got[j] = r
		}
		this, other := got[0], got[1]
		if i%2 == 1 {
			this, other = got[1], got[0]
		}
		if this.Action != other.Action {
			return fmt.Errorf("%s: the baseline returned %s, this build %s", f.Name, dataplane.Actions[other.Action], dataplane.Actions[this.Action])
		}
		sum += float64(other.PerRun)
		res.BaselineRatios = append(res.BaselineRatios, float64(this.PerRun)/float64(other.PerRun))
	}
	res.BaselineNsPerPkt = sum / BaselineRounds
	sorted := append([]float64(nil), res.BaselineRatios...)
	sort.Float64s(sorted)
	res.VsBaseline = (sorted[(len(sorted)-1)/2] + sorted[len(sorted)/2]) / 2
	return nil
}

// loadBare loads the baseline redirect program towards dev with destination MAC dmac.
func loadBare(dev, dmac string) (*rigbpf.BaselineObjects, error) {
	var o rigbpf.BaselineObjects
	if err := rigbpf.LoadBaselineObjects(&o, nil); err != nil {
		return nil, err
	}
	it, err := net.InterfaceByName(dev)
	if err != nil {
		o.Close()
		return nil, err
	}
	mac, _ := net.ParseMAC(dmac)
	r := rigbpf.BaselineBareRoute{Ifindex: uint32(it.Index)}
	copy(r.Dmac[:], mac)
	copy(r.Smac[:], it.HardwareAddr)
	if err := o.BareCfg.Update(uint32(0), r, ebpf.UpdateAny); err != nil {
		o.Close()
		return nil, err
	}
	idx := uint32(it.Index)
	if err := o.BareTx.Update(idx, idx, ebpf.UpdateAny); err != nil {
		o.Close()
		return nil, err
	}
	return &o, nil
}

// microTrace is a product program with a trace armed, for `seg6x-bench micro`.
type microTrace struct {
	prog   *dataplane.Seg6xObjects
	traced *dataplane.Seg6xTraceObjects
}

// filter sets the trace filter: every packet, or none (an interface index no port has).
func (m *microTrace) filter(all bool) error {
	c := dataplane.Seg6xTraceCfg{Snaplen: 128}
	if !all {
		c.Filter, c.Ifindex = uint32(dataplane.Seg6xTraceFilterFlagsTF_IFINDEX), 0xFFFFFFFF
	}
	return m.traced.TraceConfig.Put(uint32(0), &c)
}

func armedForMicro(dir string) (*microTrace, func(), error) {
	m := &microTrace{}
	var err error
	if m.prog, err = dataplane.LoadObjects(dir, dataplane.ProgramOptions{}); err != nil {
		return nil, nil, err
	}
	if m.traced, err = dataplane.LoadTraceObjects(dir, dataplane.ProgramOptions{}); err != nil {
		m.prog.Close()
		return nil, nil, err
	}
	ring, err := ringbuf.NewReader(m.traced.TraceRing)
	done := make(chan struct{})
	stop := func() {
		m.traced.TraceConfig.Put(uint32(0), &dataplane.Seg6xTraceCfg{})
		if ring != nil {
			ring.Close()
			<-done
		}
		m.traced.Close()
		m.prog.Close()
	}
	if err != nil {
		close(done)
		ring = nil
		stop()
		return nil, nil, err
	}
	go func() { // drain the ring, as a trace reader would
		defer close(done)
		for {
			if _, err := ring.Read(); err != nil {
				return
			}
		}
	}()
	if err := m.prog.TraceProg.Put(uint32(0), uint32(m.traced.Seg6xXdpTrace.FD())); err != nil {
		stop()
		return nil, nil, err
	}
	if err := m.prog.TraceArmed.Set(uint32(1)); err != nil {
		stop()
		return nil, nil, err
	}
	return m, stop, nil
}
