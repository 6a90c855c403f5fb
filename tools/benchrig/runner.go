package benchrig

// runner.go: runs scenarios over frame sizes and flow modes, repeats each point, and summarises.

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"
)

// Options says what to run.
type Options struct {
	Scenarios []string // names; empty = all
	Sizes     []int    // frame sizes in bytes including the 4-byte FCS (64 = 60 bytes sent)
	Flows     []string // "single" and/or "many"
	Trial     time.Duration
	Steps     int // binary search steps for NDR and PDR
	Repeat    int
	// ProfileOnly skips the rate searches: only the profile trial (profile.go), Repeat times per
	// point. Quick A/B comparisons of two builds of the data plane use it.
	ProfileOnly bool
	// Rounds runs the whole selection this many times over (each round every scenario once, Repeat
	// repetitions each) and reports all rounds' repetitions together, with each round's capacity
	// ratio to the kernel: a slow or fast phase of the host then weighs on the kernel's and seg6x's
	// points of one round alike (rounds.go).
	Rounds int
	Bin    string // seg6x binary for the DUT
	Prefix string
	Log    io.Writer
}

// IMIX is the frame size value that stands for the 7:4:1 mix of 64, 594 and 1518-byte frames.
const IMIX = 0

var imixSizes = []int{64, 64, 64, 64, 64, 64, 64, 594, 594, 594, 594, 1518}

// Point is one scenario x frame size x flow mode, over Repeat repetitions.
type Point struct {
	Scenario    string `json:"scenario"`
	Description string `json:"description"`
	FrameSize   int    `json:"frame_size"` // 0 = IMIX
	// The frame sizes are the carried tenant frames' (VXLAN scenarios), not the DUT's input frames'.
	CarriedFrame bool    `json:"frame_size_is_carried_frame,omitempty"`
	AvgFrame     float64 `json:"avg_frame_bytes"`
	Flows        string  `json:"flows"`
	NDRMpps      float64 `json:"ndr_mpps"`        // median of the repetitions
	NDRSpread    float64 `json:"ndr_spread_mpps"` // max - min over the repetitions
	PDRMpps      float64 `json:"pdr_mpps"`        // loss <= 0.5%
	OverloadMpps float64 `json:"overload_mpps"`   // correct frames delivered at the generator's full rate
	OverloadLoss float64 `json:"overload_loss"`
	// The DUT lost (almost) nothing at the generator's full rate: every rate of this point is the
	// generator's limit, a lower bound of the DUT's.
	GeneratorLimited bool    `json:"generator_limited"`
	OfferedMpps      float64 `json:"overload_offered_mpps"`
	NDRGbps          float64 `json:"ndr_gbps"`
	BadFrames        uint64  `json:"bad_frames"` // frames that reached the sink but were wrong (all trials)
	// Kernel scenarios: packets the DUT's kernel stack received at overload over frames the generator
	// sent (frames meant for the kernel must reach it; below 1 only when the receive ring overflowed).
	KernelInRatio float64   `json:"kernel_received_ratio,omitempty"`
	NDRRuns       []float64 `json:"ndr_runs_mpps"`
	PDRRuns       []float64 `json:"pdr_runs_mpps"`
	PDRSpread     float64   `json:"pdr_spread_mpps"` // max - min over the repetitions
	VsBare        float64   `json:"ratio_to_bare_redirect"`
	VsKernel      float64   `json:"ratio_to_kernel"`
	KernelRef     string    `json:"kernel_reference"`
	VsTenRoutes   float64   `json:"ratio_to_10_routes,omitempty"` // seg6x_encap_1m_routes only (target >= 0.8)
	// Two more trials at full rate (profile.go), closed loops where the scenario allows (loop.go):
	// the DUT's CPU time per frame (its receive NAPI threads), the part of it in the DUT's XDP
	// program (the second trial, BPF run-time statistics on), and how busy the threads were (below
	// ~0.9 the DUT was not saturated and the figure includes its wake-ups).
	DUTNsPerFrame  float64   `json:"dut_cpu_ns_per_frame"` // medians over the repetitions
	ProgNsPerFrame float64   `json:"dut_xdp_ns_per_frame"`
	DUTBusy        float64   `json:"dut_busy"`
	DUTNsRuns      []float64 `json:"dut_cpu_ns_runs"`
	ProgNsRuns     []float64 `json:"dut_xdp_ns_runs"`
	// The closed loop's rate (the first profile trial; loop.go): correct frames per second with the
	// rig keeping the DUT busy, the DUT's forwarding capacity (its dut_busy says whether it was the
	// slowest stage). Absent for scenarios that cannot loop (fragments).
	CapacityMpps     float64   `json:"capacity_mpps,omitempty"` // median
	CapacityRuns     []float64 `json:"capacity_runs_mpps,omitempty"`
	CapacityVsBare   float64   `json:"capacity_ratio_to_bare,omitempty"`
	CapacityVsKernel float64   `json:"capacity_ratio_to_kernel,omitempty"`
	// With --rounds: each round's capacity ratio to the kernel (its own points' medians), and their
	// median, the figure that a host's phases shift least (rounds.go).
	CapacityVsKernelRounds []float64 `json:"capacity_ratio_to_kernel_rounds,omitempty"`
	CapacityVsKernelPaired float64   `json:"capacity_ratio_to_kernel_paired,omitempty"`
	// The share of the machine's CPU time its host took away during the capacity trials (median):
	// above a few percent the DUT or the rig lost time it did not spend, and the point is suspect.
	StealShare float64 `json:"steal_share"`
	// The kernel reference's DUT CPU per frame over this scenario's, and this scenario's over bare
	// redirect's: speed-ups by CPU cost, which loss-based searches on this rig blur.
	CPUSpeedupVsKernel float64 `json:"cpu_speedup_vs_kernel"`
	CPUCostVsBare      float64 `json:"cpu_cost_vs_bare"`
	// Scenarios with two correct outputs (Scenario.Alt): the share of the good frames of the first
	// profile trial that were the first output (the weight-2 list of 2/1/1: about 0.5 over many flows).
	FirstShare    float64 `json:"first_output_share,omitempty"`
	TrialSeconds  float64 `json:"trial_seconds"`
	SearchSteps   int     `json:"search_steps"`
	MeasuredAtUTC string  `json:"measured_at"`
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func spread(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	lo, hi := xs[0], xs[0]
	for _, x := range xs {
		lo, hi = min(lo, x), max(hi, x)
	}
	return hi - lo
}

// Run runs every selected point (o.Rounds times over) and returns the results, ratios filled in.
func Run(o Options) ([]Point, error) {
	rounds := max(o.Rounds, 1)
	var all [][]Point
	for i := 0; i < rounds; i++ {
		if rounds > 1 {
			fmt.Fprintf(o.Log, "=== round %d of %d\n", i+1, rounds)
		}
		ps, err := runRound(o)
		if err != nil {
			return ps, err
		}
		all = append(all, ps)
	}
	if rounds == 1 {
		return all[0], nil
	}
	return mergeRounds(all), nil
}

// runRound runs every selected point once (Repeat repetitions each), ratios filled in.
func runRound(o Options) ([]Point, error) {
	want := map[string]bool{}
	for _, s := range o.Scenarios {
		want[s] = true
	}
	var points []Point
	for _, sc := range Scenarios() {
		if len(want) > 0 && !want[sc.Name] {
			continue
		}
		ps, err := runScenario(sc, o)
		if err != nil {
			return points, fmt.Errorf("%s: %w", sc.Name, err)
		}
		points = append(points, ps...)
	}
	fillRatios(points)
	return points, nil
}

func runScenario(sc *Scenario, o Options) ([]Point, error) {
	fmt.Fprintf(o.Log, "== %s: %s\n", sc.Name, sc.Desc)
	r, err := Up(o.Prefix, o.Bin)
	if err != nil {
		return nil, err
	}
	defer r.Down()
	if err := sc.Setup(r); err != nil {
		return nil, err
	}
	if err := r.PinNAPI(); err != nil {
		return nil, err
	}
	var out []Point
	for _, size := range o.Sizes {
		if len(sc.Sizes) > 0 && !slices.Contains(sc.Sizes, size) {
			fmt.Fprintf(o.Log, "   %s: not run at frame size %d (runs at %v)\n", sc.Name, size, sc.Sizes)
			continue
		}
		var sizes []int // frame sizes (with FCS) of the templates, cycled over
		if size == IMIX {
			sizes = imixSizes
		} else {
			if sc.Carried {
				sizes = []int{size}
			} else {
				sizes = []int{len(sc.Frame(size-4, 0)) + 4} // the scenario's smallest frame when size is below it
				size = sizes[0]
			}
		}
		for _, fm := range o.Flows {
			flows := 1
			if fm == "many" {
				flows = tplFlows / len(sizes)
				if sc.RevFrame != nil {
					flows /= 2
				}
			}
			var frames, rev [][]byte
			total := 0
			for f := 0; f < flows; f++ {
				for _, sz := range sizes {
					fr := sc.Frame(sz-4, f)
					frames = append(frames, fr)
					total += len(fr) + 4
					if sc.RevFrame != nil {
						rf := sc.RevFrame(sz-4, f)
						rev = append(rev, rf)
						total += len(rf) + 4
					}
				}
			}
			n := len(frames[0]) // the pattern checks lengths only when every frame has the same one
			if sc.Carried {
				n = size - 4
			}
			if size == IMIX {
				n = 0
			}
			var longest int
			var err error
			if sc.RevFrame != nil {
				longest, err = r.LoadBoth(frames, rev, sc.Expect(n), sc.RevExpect(n))
				if err == nil {
					err = r.PinNAPI() // the way back's threads
				}
			} else {
				longest, err = r.Load(frames, sc.Expect(n))
			}
			if err != nil {
				return nil, err
			}
			if sc.Alt != nil {
				if err := r.Accept(sc.Expect(n), sc.Alt(n)); err != nil {
					return nil, err
				}
			}
			r.CountFragmentPairs(sc.Fragments)
			avg := float64(total) / float64(len(frames)+len(rev))
			p := Point{Scenario: sc.Name, Description: sc.Desc, FrameSize: size, CarriedFrame: sc.Carried, Flows: fm, TrialSeconds: o.Trial.Seconds(),
				SearchSteps: o.Steps, MeasuredAtUTC: time.Now().UTC().Format(time.RFC3339)}
			var over, pdrs, busy, steal []float64
			for rep := 0; rep < o.Repeat; rep++ {
				prof, err := r.Profile(longest, o.Trial)
				if err != nil {
					return nil, fmt.Errorf("profile: %w", err)
				}
				if sc.Alt != nil && rep == 0 && prof.Good > 0 {
					p.FirstShare = float64(prof.First) / float64(prof.Good)
				}
				p.DUTNsRuns = append(p.DUTNsRuns, prof.DUTNs)
				p.ProgNsRuns = append(p.ProgNsRuns, prof.ProgNs)
				busy = append(busy, prof.DUTBusy)
				steal = append(steal, prof.Steal)
				if prof.Loop {
					p.CapacityRuns = append(p.CapacityRuns, prof.GoodPPS/1e6)
				}
				if o.ProfileOnly {
					continue
				}
				ov, err := r.Run(longest, 0, o.Trial)
				if err != nil {
					return nil, err
				}
				p.BadFrames += ov.Bad
				over = append(over, ov.GoodPPS/1e6)
				p.OverloadLoss, p.OfferedMpps = ov.Loss, ov.OfferedPPS/1e6
				if strings.HasPrefix(sc.Name, "kernel") && ov.Sent > 0 {
					p.KernelInRatio = float64(ov.KernelIn) / float64(ov.Sent)
				}
				hi := ov.OfferedPPS * 1.05
				ndr, err := r.Search(longest, hi, 0, o.Steps, o.Trial)
				if err != nil {
					return nil, err
				}
				pdr, err := r.Search(longest, hi, 0.005, o.Steps, o.Trial)
				if err != nil {
					return nil, err
				}
				p.BadFrames += ndr.Bad + pdr.Bad
				p.NDRRuns = append(p.NDRRuns, ndr.OfferedPPS/1e6)
				pdrs = append(pdrs, pdr.OfferedPPS/1e6)
				p.PDRRuns = append(p.PDRRuns, pdr.OfferedPPS/1e6)
			}
			p.DUTNsPerFrame, p.ProgNsPerFrame, p.DUTBusy = median(p.DUTNsRuns), median(p.ProgNsRuns), median(busy)
			p.CapacityMpps = median(p.CapacityRuns)
			p.StealShare = median(steal)
			p.NDRMpps, p.NDRSpread = median(p.NDRRuns), spread(p.NDRRuns)
			p.GeneratorLimited = !o.ProfileOnly && p.OverloadLoss < 0.005
			p.PDRMpps, p.OverloadMpps = median(pdrs), median(over)
			p.PDRSpread = spread(pdrs)
			p.AvgFrame = avg
			p.NDRGbps = p.NDRMpps * 1e6 * avg * 8 / 1e9
			if p.BadFrames > 0 {
				fmt.Fprintf(o.Log, "   last wrong frame at the sink: %x\n", r.LastBad())
			}
			if sc.Alt != nil {
				fmt.Fprintf(o.Log, "   %.1f%% of the good frames were the first output (%s)\n", 100*p.FirstShare, sc.Name)
			}
			if p.KernelInRatio > 0 {
				fmt.Fprintf(o.Log, "   kernel stack received %.1f%% of the frames sent at overload\n", 100*p.KernelInRatio)
			}
			if !o.ProfileOnly {
				fmt.Fprintf(o.Log, "   %4dB(avg %.0f) %-6s NDR %.3f Mpps (spread %.3f)  PDR %.3f  overload %.3f of %.3f offered  bad %d\n",
					size, avg, fm, p.NDRMpps, p.NDRSpread, p.PDRMpps, p.OverloadMpps, p.OfferedMpps, p.BadFrames)
			}
			fmt.Fprintf(o.Log, "   DUT CPU %.0f ns/frame (XDP program %.0f ns), busy %.0f%% at full rate; runs %.0f / %.0f\n",
				p.DUTNsPerFrame, p.ProgNsPerFrame, 100*p.DUTBusy, p.DUTNsRuns, p.ProgNsRuns)
			if p.StealShare > 0.02 {
				fmt.Fprintf(o.Log, "   the host took %.0f%% of this VM's CPU time during the profile trials: the figures are suspect\n", 100*p.StealShare)
			}
			if len(p.CapacityRuns) > 0 {
				fmt.Fprintf(o.Log, "   closed loop: %.3f Mpps; runs %.3f\n", p.CapacityMpps, p.CapacityRuns)
			}
			if len(pdrs) > 1 {
				fmt.Fprintf(o.Log, "   PDR runs %v (spread %.3f)\n", pdrs, p.PDRSpread)
			}
			out = append(out, p)
		}
	}
	return out, nil
}

// kernelRef names the kernel scenario each scenario is compared with.
func kernelRef(s string) string {
	switch {
	case len(s) > 11 && s[:11] == "seg6x_encap":
		return "kernel_encap_1sid"
	case strings.HasPrefix(s, "seg6x_end_dx4_vlan") || strings.HasPrefix(s, "seg6x_end_dt4_vlan"): // with or without _nhcache
		return "kernel_end_dx4"
	case s == "seg6x_end_then_dx4":
		return "kernel_end_then_dx4"
	case s == "seg6x_un":
		return "kernel_un"
	case s == "seg6x_wecmp3":
		return "kernel_wecmp3"
	case s == "seg6x_vxlan_encap_frag":
		return "" // the kernel's VXLAN carries none of these frames (docs/vxlan.md)
	case strings.HasPrefix(s, "seg6x_vxlan_"):
		return "kernel_vxlan_" + strings.TrimPrefix(s, "seg6x_vxlan_")
	case s == "seg6x_udt4_vlan":
		return "kernel_udx4" // the kernel's End.DT4 needs a VRF device (scenarios.go)
	}
	// seg6x_end has no kernel scenario doing exactly its work; kernel IPv4 forwarding is the floor.
	return "kernel_ipv4"
}

// fillRatios compares each point with bare redirect and its kernel reference at the same frame size
// and flow mode, from the same run. Ratios use PDR: on veth, zero-loss NDR is dominated by sporadic
// scheduling drops of the rig itself (see docs/benchmarks.md).
func fillRatios(ps []Point) {
	rate := func(p Point) float64 { return p.PDRMpps }
	// ratio is a / b, or 0 (not applicable) when either is missing.
	ratio := func(a, b float64) float64 {
		if a <= 0 || b <= 0 {
			return 0
		}
		return a / b
	}
	find := func(name string, size int, flows string) *Point {
		for i := range ps {
			if ps[i].Scenario == name && ps[i].FrameSize == size && ps[i].Flows == flows {
				return &ps[i]
			}
		}
		return nil
	}
	for i := range ps {
		p := &ps[i]
		if b := find("bare_redirect", p.FrameSize, p.Flows); b != nil {
			if rate(*b) > 0 {
				p.VsBare = rate(*p) / rate(*b)
			}
			if b.DUTNsPerFrame > 0 {
				p.CPUCostVsBare = p.DUTNsPerFrame / b.DUTNsPerFrame
			}
			p.CapacityVsBare = ratio(p.CapacityMpps, b.CapacityMpps)
		}
		p.KernelRef = kernelRef(p.Scenario)
		if k := find(p.KernelRef, p.FrameSize, p.Flows); k != nil {
			if rate(*k) > 0 {
				p.VsKernel = rate(*p) / rate(*k)
			}
			if p.DUTNsPerFrame > 0 {
				p.CPUSpeedupVsKernel = k.DUTNsPerFrame / p.DUTNsPerFrame
			}
			p.CapacityVsKernel = ratio(p.CapacityMpps, k.CapacityMpps)
		}
		if p.Scenario == "seg6x_encap_1m_routes" {
			if t := find("seg6x_encap_10routes", p.FrameSize, p.Flows); t != nil && rate(*t) > 0 {
				p.VsTenRoutes = rate(*p) / rate(*t)
			}
		}
	}
}
