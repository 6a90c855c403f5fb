package benchrig

// tcp.go: `seg6x-bench tcp`: TCP (iperf3) between the two VMs of the hypervisor lab
// (tools/lab/hypervisor.go: TSO/GSO/GRO on every veth, as on a hypervisor), one flow and four, over
// plain IPv4 routing (no overlay), the kernel's seg6, seg6x on XDP and seg6x on tc. One lab per mode,
// all built first; then rounds, each running every mode once (the order rotating between rounds), so
// drift of the machine spreads over all modes and every ratio is taken within one round. CPU time is
// the whole machine's (all nodes share one kernel: the VMs' TCP stacks and every node's forwarding),
// in total and its softirq part (where the forwarding runs), per byte delivered.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/seg6x/seg6x/tools/lab"
)

// TCPRun is one iperf3 run of one (mode, flows) in one round.
type TCPRun struct {
	Gbps             float64 `json:"gbps"`
	Retransmits      int     `json:"retransmits"`
	CPUNsPerByte     float64 `json:"cpu_ns_per_byte"`
	SoftirqNsPerByte float64 `json:"softirq_ns_per_byte"`
	VsPlain          float64 `json:"ratio_to_plain"` // over plain routing's Gbps in the same round
}

// TCPResult is one (mode, flows) of `seg6x-bench tcp`: medians over the rounds, and every run.
type TCPResult struct {
	Mode             string   `json:"mode"` // plain | kernel_seg6 | seg6x_xdp | seg6x_tc
	Flows            int      `json:"flows"`
	Gbps             float64  `json:"gbps"`
	Retransmits      int      `json:"retransmits"`
	CPUNsPerByte     float64  `json:"cpu_ns_per_byte"`
	SoftirqNsPerByte float64  `json:"softirq_ns_per_byte"`
	VsPlain          float64  `json:"ratio_to_plain"` // median of the rounds' ratios
	GbpsMin          float64  `json:"gbps_min"`
	GbpsMax          float64  `json:"gbps_max"`
	Runs             []TCPRun `json:"runs"`
	// Seg6x modes, one flow: each node's seg6x program time per byte delivered, from one more run
	// after the rounds with kernel.bpf_stats_enabled=1 (which costs two clock reads per program run,
	// so the rounds run without it).
	ProgNsPerByte map[string]float64 `json:"prog_ns_per_byte,omitempty"`
}

// TCPFlows are the flow counts measured per mode.
var TCPFlows = []int{1, 4}

// cpuNs is the machine's busy and softirq CPU time so far (all CPUs, /proc/stat; busy is everything
// but idle and iowait).
func cpuNs() (busy, softirq uint64, err error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, err
	}
	f := strings.Fields(strings.SplitN(string(b), "\n", 2)[0])
	for i, v := range f[1:] {
		n, _ := strconv.ParseUint(v, 10, 64)
		if i != 3 && i != 4 && i < 8 { // user nice system [idle iowait] irq softirq steal
			busy += n
		}
		if i == 6 {
			softirq = n
		}
	}
	// USER_HZ is 100 on Linux: one tick is 10 ms.
	return busy * 10_000_000, softirq * 10_000_000, nil
}

// iperf3 runs one TCP test of d with `flows` parallel flows from vm1 to vm2; it returns Gbps,
// retransmits and bytes received.
func iperf3(ctx context.Context, h *lab.Hypervisor, d time.Duration, flows int) (float64, int, float64, error) {
	srv := exec.CommandContext(ctx, "ip", "netns", "exec", h.NS("vm2"), "iperf3", "-s", "-1")
	if err := srv.Start(); err != nil {
		return 0, 0, 0, err
	}
	defer func() { _ = srv.Process.Kill(); _ = srv.Wait() }()
	time.Sleep(300 * time.Millisecond)
	out, err := exec.CommandContext(ctx, "ip", "netns", "exec", h.NS("vm1"), "timeout", strconv.Itoa(int(d.Seconds())+20), "iperf3",
		"-c", lab.HVVM2, "-t", strconv.Itoa(int(d.Seconds())), "-P", strconv.Itoa(flows), "-J").Output()
	if err != nil {
		return 0, 0, 0, fmt.Errorf("iperf3: %v: %s", err, out)
	}
	var res struct {
		End struct {
			SumSent struct {
				Retransmits int `json:"retransmits"`
			} `json:"sum_sent"`
			SumReceived struct {
				Bytes         float64 `json:"bytes"`
				BitsPerSecond float64 `json:"bits_per_second"`
			} `json:"sum_received"`
		} `json:"end"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		return 0, 0, 0, fmt.Errorf("iperf3 output: %w", err)
	}
	return res.End.SumReceived.BitsPerSecond / 1e9, res.End.SumSent.Retransmits, res.End.SumReceived.Bytes, nil
}

// measure runs iperf3 once and reads the CPU time around it.
func measure(ctx context.Context, h *lab.Hypervisor, d time.Duration, flows int) (TCPRun, error) {
	b0, s0, err := cpuNs()
	if err != nil {
		return TCPRun{}, err
	}
	gbps, retr, bytes, err := iperf3(ctx, h, d, flows)
	if err != nil {
		return TCPRun{}, err
	}
	b1, s1, err := cpuNs()
	if err != nil {
		return TCPRun{}, err
	}
	r := TCPRun{Gbps: gbps, Retransmits: retr}
	if bytes > 0 {
		r.CPUNsPerByte = float64(b1-b0) / bytes
		r.SoftirqNsPerByte = float64(s1-s0) / bytes
	}
	return r, nil
}

// tcpSummary turns the runs of one (mode, flows) into its record.
func tcpSummary(mode string, flows int, runs []TCPRun) TCPResult {
	r := TCPResult{Mode: mode, Flows: flows, Runs: runs}
	var g, c, s, v, rt []float64
	for i, x := range runs {
		g, c, s, v = append(g, x.Gbps), append(c, x.CPUNsPerByte), append(s, x.SoftirqNsPerByte), append(v, x.VsPlain)
		rt = append(rt, float64(x.Retransmits))
		if i == 0 || x.Gbps < r.GbpsMin {
			r.GbpsMin = x.Gbps
		}
		if x.Gbps > r.GbpsMax {
			r.GbpsMax = x.Gbps
		}
	}
	r.Gbps, r.CPUNsPerByte, r.SoftirqNsPerByte, r.VsPlain = median(g), median(c), median(s), median(v)
	r.Retransmits = int(median(rt))
	return r
}

// progTime is the run time so far of a node's seg6x program(s), from its `seg6x status`.
func progTime(h *lab.Hypervisor, node string) (uint64, error) {
	out, err := h.Seg6x(node, "status", "--json")
	if err != nil {
		return 0, fmt.Errorf("%s: seg6x status: %v: %s", node, err, out)
	}
	var st struct {
		ProgRunNs uint64 `json:"prog_run_ns,string"`
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		return 0, fmt.Errorf("%s: seg6x status: %w", node, err)
	}
	return st.ProgRunNs, nil
}

// nodeProgTime runs one flow for d with BPF run-time statistics on and returns each router's seg6x
// program time per byte delivered.
func nodeProgTime(ctx context.Context, h *lab.Hypervisor, d time.Duration) (map[string]float64, error) {
	stats, err := ebpf.EnableStats(uint32(unix.BPF_STATS_RUN_TIME))
	if err != nil {
		return nil, fmt.Errorf("enable BPF run-time statistics: %w", err)
	}
	defer stats.Close()
	before := map[string]uint64{}
	for _, n := range lab.HVRouters {
		if before[n], err = progTime(h, n); err != nil {
			return nil, err
		}
	}
	_, _, bytes, err := iperf3(ctx, h, d, 1)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, n := range lab.HVRouters {
		after, err := progTime(h, n)
		if err != nil {
			return nil, err
		}
		if bytes > 0 {
			out[n] = float64(after-before[n]) / bytes
		}
	}
	return out, nil
}

// RunTCP measures every mode of lab.HVModes with each of TCPFlows, `rounds` times. Cancelling ctx
// (the CLI does on SIGINT/SIGTERM) stops the running iperf3 and removes the labs before returning.
func RunTCP(ctx context.Context, bin, labTool string, d time.Duration, rounds int, log io.Writer) ([]TCPResult, error) {
	if rounds < 1 {
		return nil, fmt.Errorf("rounds %d: want at least 1", rounds)
	}
	labs := map[string]*lab.Hypervisor{}
	defer func() {
		for _, h := range labs {
			h.Down()
		}
	}()
	for i, mode := range lab.HVModes {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		h := lab.NewHypervisor(fmt.Sprintf("s6tcp%d", i), bin, labTool, nil)
		labs[mode] = h
		if err := h.Up(); err != nil {
			return nil, fmt.Errorf("%s: %w", mode, err)
		}
		if err := h.Configure(mode); err != nil {
			return nil, fmt.Errorf("%s: %w", mode, err)
		}
	}
	type key struct {
		mode  string
		flows int
	}
	runs := map[key][]TCPRun{}
	for round := 0; round < rounds; round++ {
		this := map[key]TCPRun{}
		for i := range lab.HVModes {
			mode := lab.HVModes[(i+round)%len(lab.HVModes)]
			for _, flows := range TCPFlows {
				r, err := measure(ctx, labs[mode], d, flows)
				if ctx.Err() != nil {
					return nil, fmt.Errorf("interrupted in round %d (%s); its labs are removed", round+1, mode)
				}
				if err != nil {
					return nil, fmt.Errorf("round %d, %s, %d flow(s): %w", round+1, mode, flows, err)
				}
				fmt.Fprintf(log, "round %d/%d %-12s %d flow(s): %6.2f Gbps, %d retransmits, %.2f CPU ns/byte (%.2f softirq)\n",
					round+1, rounds, mode, flows, r.Gbps, r.Retransmits, r.CPUNsPerByte, r.SoftirqNsPerByte)
				this[key{mode, flows}] = r
			}
		}
		for k, r := range this {
			if p := this[key{lab.HVPlain, k.flows}]; p.Gbps > 0 {
				r.VsPlain = r.Gbps / p.Gbps
			}
			runs[k] = append(runs[k], r)
		}
	}
	var out []TCPResult
	for _, mode := range lab.HVModes {
		for _, flows := range TCPFlows {
			r := tcpSummary(mode, flows, runs[key{mode, flows}])
			if flows == 1 && (mode == lab.HVSeg6xTC || mode == lab.HVSeg6xXDP) {
				var err error
				if r.ProgNsPerByte, err = nodeProgTime(ctx, labs[mode], d); err != nil {
					return nil, fmt.Errorf("%s, program time per node: %w", mode, err)
				}
				fmt.Fprintf(log, "%-12s 1 flow, seg6x program ns/byte (bpf stats on): hv1 %.4f, p %.4f, hv2 %.4f\n", mode,
					r.ProgNsPerByte["hv1"], r.ProgNsPerByte["p"], r.ProgNsPerByte["hv2"])
			}
			out = append(out, r)
		}
	}
	return out, nil
}
