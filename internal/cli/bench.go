package cli

// bench.go: `seg6x bench micro`: ns per packet of each behavior from BPF_PROG_TEST_RUN, next to a
// bare MAC-swap redirect, in a namespace of its own.

import (
	"fmt"
	"net"
	"os"
	"text/tabwriter"
	"time"

	"github.com/cilium/ebpf"
	"github.com/seg6x/seg6x/internal/dataplane"
	"github.com/seg6x/seg6x/internal/fixtures"
	"github.com/spf13/cobra"
)

// microCases are the fixtures timed by `bench micro`, one per behavior (see internal/fixtures).
var microCases = []string{
	"encap1_v4_udp", "encap2_v4_tcp_tos", "encap10", "encap16", "encap_red2", "encap_red1_icmp", "encap1_v6",
	"end", "end_x", "end_t", "end_dx4", "end_dx6", "end_dt4_vlan", "end_dt6_vlan", "end_dt46_v4",
	"no_route", "drop_srh_bad_len",
}

// MicroResult is one row of `seg6x bench micro --json`.
type MicroResult struct {
	Case        string  `json:"case"`
	Description string  `json:"description"`
	Action      string  `json:"action"`
	NsPerPkt    float64 `json:"ns_per_pkt"`
	VsBare      float64 `json:"ratio_to_bare_redirect"`
}

func benchCmd() *cobra.Command {
	c := &cobra.Command{Use: "bench", Short: "Benchmarks (micro: per-behavior ns/packet)"}
	var runs int
	micro := &cobra.Command{
		Use:   "micro [--runs N]",
		Short: "ns per packet of each behavior through BPF_PROG_TEST_RUN, next to a bare redirect",
		Long: `Runs each behavior's fixture (internal/fixtures) through the real program N times, every run on a
fresh copy of the input frame (one BPF_PROG_TEST_RUN with repeat 1 each: a repeated run on an
already encapsulated frame would measure the wrong thing), and reports the mean of the kernel-
measured run times. "bare" is a program that only swaps MACs and redirects: the floor any XDP
forwarder pays. The kernel's timer is read around each run, so every figure includes the same
~tens of ns of timer overhead; compare ratios, not absolute values. Needs root; builds its own
network namespace and removes it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			code, done, err := fixtures.ReexecInNetns("seg6x-bench")
			if err != nil {
				return err
			}
			if done {
				if code != 0 {
					os.Exit(code)
				}
				return nil
			}
			res, err := RunMicro(runs)
			if err != nil {
				return err
			}
			if g.jsonOut {
				return printJSON(res)
			}
			w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintf(w, "CASE\tACTION\tNS/PKT\tVS BARE\tWHAT\n")
			for _, r := range res {
				fmt.Fprintf(w, "%s\t%s\t%.1f\t%.2fx\t%s\n", r.Case, r.Action, r.NsPerPkt, r.VsBare, r.Description)
			}
			w.Flush()
			fmt.Printf("\n%d runs per case, each on a fresh frame; kernel-measured run time per packet.\n", runs)
			return nil
		},
	}
	micro.Flags().IntVar(&runs, "runs", 20000, "test runs per case")
	c.AddCommand(micro)
	return c
}

// RunMicro times every micro case; it must run inside a namespace made for it.
func RunMicro(runs int) ([]MicroResult, error) {
	rig, err := fixtures.NewRig()
	if err != nil {
		return nil, err
	}
	defer rig.Close()
	all, err := fixtures.Load()
	if err != nil {
		return nil, err
	}
	byName := map[string]*fixtures.Fixture{}
	for i := range all {
		byName[all[i].Name] = &all[i]
	}

	bare, err := loadBare("fab0", "02:00:00:00:01:02")
	if err != nil {
		return nil, err
	}
	defer bare.Close()
	ref := *byName["encap1_v4_udp"]
	ref.Name, ref.Description = "bare_redirect", "MAC swap + redirect only (same input frame as encap1_v4_udp)"
	bareRes, err := rig.Run(bare.BareRedirect, &ref, runs)
	if err != nil {
		return nil, err
	}
	if bareRes.Action != uint32(dataplane.ActionIndex("XDP_REDIRECT")) {
		return nil, fmt.Errorf("bare redirect returned %s", dataplane.Actions[bareRes.Action])
	}
	bareNs := float64(bareRes.PerRun) / float64(time.Nanosecond)
	out := []MicroResult{{Case: ref.Name, Description: ref.Description, Action: "XDP_REDIRECT", NsPerPkt: bareNs, VsBare: 1}}
	for _, name := range microCases {
		f := byName[name]
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
		ns := float64(r.PerRun)
		out = append(out, MicroResult{Case: name, Description: f.Description, Action: f.Action, NsPerPkt: ns, VsBare: ns / bareNs})
	}
	return out, nil
}

// loadBare loads the baseline redirect program towards dev with destination MAC dmac.
func loadBare(dev, dmac string) (*dataplane.BaselineObjects, error) {
	var o dataplane.BaselineObjects
	if err := dataplane.LoadBaselineObjects(&o, nil); err != nil {
		return nil, err
	}
	it, err := net.InterfaceByName(dev)
	if err != nil {
		o.Close()
		return nil, err
	}
	mac, _ := net.ParseMAC(dmac)
	r := dataplane.BaselineBareRoute{Ifindex: uint32(it.Index)}
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
