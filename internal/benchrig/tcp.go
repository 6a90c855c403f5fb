package benchrig

// tcp.go: `seg6x bench tcp`: TCP (iperf3) between the two VMs of the hypervisor lab
// (internal/lab/hypervisor.go: TSO/GSO/GRO on every veth, as on a hypervisor), one flow and four, over
// plain IPv4 routing (no overlay), the kernel's seg6, seg6x on XDP and seg6x on tc, each mode on a
// fresh lab in the same run. CPU time is the whole machine's busy time during the transfer (all nodes
// share one kernel: the VMs' TCP stacks and every node's forwarding), per byte delivered.

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/seg6x/seg6x/internal/lab"
)

// TCPResult is one (mode, flows) measurement of `seg6x bench tcp`.
type TCPResult struct {
	Mode         string  `json:"mode"` // plain | kernel_seg6 | seg6x_xdp | seg6x_tc
	Flows        int     `json:"flows"`
	Gbps         float64 `json:"gbps"`
	Retransmits  int     `json:"retransmits"`
	CPUNsPerByte float64 `json:"cpu_ns_per_byte"`
	VsPlain      float64 `json:"ratio_to_plain"` // Gbps over plain routing's with the same flows
}

// TCPFlows are the flow counts measured per mode.
var TCPFlows = []int{1, 4}

// busyNs is the machine's busy CPU time so far (all CPUs, /proc/stat: everything but idle and iowait).
func busyNs() (uint64, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	f := strings.Fields(strings.SplitN(string(b), "\n", 2)[0])
	var busy uint64
	for i, v := range f[1:] {
		n, _ := strconv.ParseUint(v, 10, 64)
		if i != 3 && i != 4 && i < 8 { // user nice system [idle iowait] irq softirq steal
			busy += n
		}
	}
	// USER_HZ is 100 on Linux: one tick is 10 ms.
	return busy * 10_000_000, nil
}

// iperf3 runs one TCP test of d with `flows` parallel flows from vm1 to vm2; it returns Gbps,
// retransmits and bytes received.
func iperf3(h *lab.Hypervisor, d time.Duration, flows int) (float64, int, float64, error) {
	srv := exec.Command("ip", "netns", "exec", h.NS("vm2"), "iperf3", "-s", "-1")
	if err := srv.Start(); err != nil {
		return 0, 0, 0, err
	}
	defer func() { _ = srv.Process.Kill(); _ = srv.Wait() }()
	time.Sleep(300 * time.Millisecond)
	out, err := exec.Command("ip", "netns", "exec", h.NS("vm1"), "timeout", strconv.Itoa(int(d.Seconds())+20), "iperf3",
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

// RunTCP measures every mode of lab.HVModes with each of TCPFlows, a fresh lab per mode.
func RunTCP(bin string, d time.Duration, log io.Writer) ([]TCPResult, error) {
	var out []TCPResult
	for _, mode := range lab.HVModes {
		h := lab.NewHypervisor("s6tcp", bin, nil)
		err := h.Up()
		if err == nil {
			err = h.Configure(mode)
		}
		for _, flows := range TCPFlows {
			if err != nil {
				break
			}
			var b0, b1 uint64
			var gbps, bytes float64
			var retr int
			b0, err = busyNs()
			if err == nil {
				gbps, retr, bytes, err = iperf3(h, d, flows)
			}
			if err == nil {
				b1, err = busyNs()
			}
			if err != nil {
				break
			}
			r := TCPResult{Mode: mode, Flows: flows, Gbps: gbps, Retransmits: retr}
			if bytes > 0 {
				r.CPUNsPerByte = float64(b1-b0) / bytes
			}
			fmt.Fprintf(log, "%-12s %d flow(s): %6.2f Gbps, %d retransmits, %.2f CPU ns/byte\n", mode, flows, gbps,
				retr, r.CPUNsPerByte)
			out = append(out, r)
		}
		h.Down()
		if err != nil {
			return out, fmt.Errorf("%s: %w", mode, err)
		}
	}
	for i := range out {
		for _, p := range out {
			if p.Mode == lab.HVPlain && p.Flows == out[i].Flows && p.Gbps > 0 {
				out[i].VsPlain = out[i].Gbps / p.Gbps
			}
		}
	}
	return out, nil
}
