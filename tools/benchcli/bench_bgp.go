package benchcli

// bench_bgp.go: `seg6x-bench bgp`: BGP convergence of one seg6x node (tools/benchrig/bgp.go), and
// the hidden `seg6x-bench bgp-injector` it runs the injecting speaker with.

import (
	"fmt"
	"os"

	"github.com/seg6x/seg6x/internal/memtune"
	"github.com/seg6x/seg6x/tools/benchrig"
	"github.com/seg6x/seg6x/tools/toolcli"
	"github.com/spf13/cobra"
)

func benchBGPCmd() *cobra.Command {
	var o benchrig.BGPOptions
	var out string
	c := &cobra.Command{
		Use:   "bgp [--routes N] [--samples N] [--mem-profile FILE] [--out FILE]",
		Short: "BGP convergence: N VPN routes injected into one seg6x node, time until they forward, memory, withdrawal time",
		Long: `A GoBGP speaker (standing for a route reflector) announces N VPNv4 routes (/32s, from --pes
advertising PEs: one service SID each) to one seg6x node: the packet rig's data plane with seg6x's BGP
speaker in this process, peering over the loopback of a namespace the benchmark makes and removes with
the injector in a second process. A tenant (VPN: route target, VLAN) takes at most 131,072 routes; more
routes are spread over --tenants (by default as many as needed: 8 for 1,000,000). Reported:

  forwarding_s   from the first announcement until every sampled prefix forwards: a UDP frame to it,
                 run through the seg6x XDP program on the live maps (BPF_PROG_TEST_RUN), leaves
                 encapsulated towards the route's SID (installed_s: until the state held them all)
  memory         the node's RSS and Go heap (after a GC) before and after, and their growth per
                 route (data plane loader and seg6x's speaker with its GoBGP; the injector's RSS is
                 reported apart); the RSS once the runtime returned its free pages; the BPF maps
                 (preallocated: the same for any route count, not in the RSS). --mem-profile FILE
                 writes the node's heap profile after convergence:
                 go tool pprof -top -sample_index=inuse_space FILE
  withdrawal     from withdrawing --withdraw sampled prefixes at once until none forwards, and for
                 single prefixes one at a time (median)

Needs root. Method and figures: docs/benchmarks.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if done, err := reexecInOwnNetns("seg6x-bgpbench"); done || err != nil {
				return err
			}
			self, err := os.Executable() // the injector: this binary's bgp-injector
			if err != nil {
				return err
			}
			meta := benchrig.NewMeta()
			r, err := benchrig.RunBGP(self, o, func(f string, a ...any) { fmt.Fprintf(os.Stderr, f+"\n", a...) })
			if err != nil {
				return err
			}
			res := benchrig.Results{Meta: meta, Results: r}
			if out != "" {
				if err := writeResults(out, res); err != nil {
					return err
				}
			}
			if toolcli.JSON {
				return toolcli.PrintJSON(res)
			}
			fmt.Printf("%d VPNv4 routes in %d tenants from %d PEs (%d sampled):\n", r.Routes, r.Tenants, r.PEs, r.Samples)
			fmt.Printf("  forwarding after   %.2f s (%.0f routes/s; in the state after %.2f s; %d commits; announced in %.2f s; node CPU %.1f s)\n",
				r.ForwardingSec, r.RoutesPerSecond, r.InstalledSecond, r.Commits, r.InjectSeconds, r.CPUSeconds)
			fmt.Printf("  memory             node RSS %.0f -> %.0f MB: %.0f B/route (peak %.0f MB; %.0f MB once free pages are returned)\n",
				r.RSSBeforeMB, r.RSSAfterMB, r.RSSPerRoute, r.RSSPeakMB, r.RSSReleasedMB)
			fmt.Printf("                     Go heap %.0f -> %.0f MB: %.0f B/route; BPF maps %.0f MB; injector RSS %.0f MB; %d UPDATEs\n",
				r.HeapBeforeMB, r.HeapAfterMB, r.HeapPerRoute, r.MapMemoryMB, r.InjectorRSSMB, r.Updates)
			if r.MemProfile != "" {
				fmt.Printf("  heap profile       %s (go tool pprof -top -sample_index=inuse_space %s)\n", r.MemProfile, r.MemProfile)
			}
			fmt.Printf("  withdrawal         %d prefixes at once: %.1f ms; one prefix: median %.1f ms of %d\n", r.WithdrawBatch,
				r.WithdrawBatchMs, r.WithdrawOneMed, len(r.WithdrawOneMs))
			fmt.Printf("method: %s\n", r.Method)
			return nil
		},
	}
	c.Flags().IntVar(&o.Routes, "routes", 100000, "VPN routes to inject (at most 131072 per tenant)")
	c.Flags().IntVar(&o.Tenants, "tenants", 0, "tenants (VPNs) the routes are spread over (0: as many as needed; at most 64)")
	c.Flags().IntVar(&o.Samples, "samples", 1000, "prefixes whose forwarding is checked")
	c.Flags().IntVar(&o.Withdraw, "withdraw", 500, "sampled prefixes withdrawn at once (then up to 20 more, one at a time)")
	c.Flags().IntVar(&o.PEs, "pes", 100, "advertising PEs (distinct service SIDs per tenant)")
	c.Flags().IntVar(&o.GCHeadroom, "gc-headroom", memtune.Default.Percent, "the node's collector headroom, as the daemon's --gc-headroom (0: Go's default)")
	c.Flags().StringVar(&o.MemProfile, "mem-profile", "", "write the node's heap profile after convergence to FILE")
	c.Flags().StringVar(&out, "out", "", "also write the JSON result to FILE")
	return c
}

func benchBGPInjectorCmd() *cobra.Command {
	var routes, pes, tenants, port, nodePort int
	c := &cobra.Command{
		Use:    "bgp-injector",
		Short:  "The injecting BGP speaker of seg6x-bench bgp (commands on stdin; not for direct use)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return benchrig.ServeBGPInjector(routes, pes, tenants, port, nodePort, os.Stdin, os.Stdout)
		},
	}
	c.Flags().IntVar(&routes, "routes", 100000, "routes it can announce")
	c.Flags().IntVar(&pes, "pes", 100, "advertising PEs (distinct service SIDs)")
	c.Flags().IntVar(&tenants, "tenants", 0, "tenants the routes are spread over (0: as many as needed)")
	c.Flags().IntVar(&port, "port", 0, "its BGP port on ::1")
	c.Flags().IntVar(&nodePort, "node-port", 0, "the seg6x node's BGP port on ::1")
	return c
}
