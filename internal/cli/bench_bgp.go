package cli

// bench_bgp.go: `seg6x bench bgp`: BGP convergence of one seg6x node (internal/benchrig/bgp.go), and
// the hidden `seg6x bench bgp-injector` it runs the injecting speaker with.

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/seg6x/seg6x/internal/benchrig"
)

func benchBGPCmd() *cobra.Command {
	var routes, samples, withdraw, pes int
	var out string
	c := &cobra.Command{
		Use:   "bgp [--routes N] [--samples N] [--out FILE]",
		Short: "BGP convergence: N VPN routes injected into one seg6x node, time until they forward, memory, withdrawal time",
		Long: `A GoBGP speaker (standing for a route reflector) announces N VPNv4 routes (/32s, from --pes
advertising PEs: one service SID each) to one seg6x node: the packet rig's data plane with seg6x's BGP
speaker in this process, peering over the loopback of a namespace the benchmark makes and removes with
the injector in a second process. Reported:

  forwarding_s   from the first announcement until every sampled prefix forwards: a UDP frame to it,
                 run through the seg6x XDP program on the live maps (BPF_PROG_TEST_RUN), leaves
                 encapsulated towards the route's SID (installed_s: until the state held them all)
  memory         the node's RSS before and after (data plane loader and seg6x's speaker; the
                 injector's is reported apart), its Go heap after, the BPF maps (preallocated: the
                 same for any route count)
  withdrawal     from withdrawing --withdraw sampled prefixes at once until none forwards, and for
                 single prefixes one at a time (median)

Needs root. Method and figures: docs/benchmarks.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if done, err := reexecInOwnNetns("seg6x-bgpbench"); done || err != nil {
				return err
			}
			bin, err := os.Executable()
			if err != nil {
				return err
			}
			meta := benchrig.NewMeta()
			r, err := benchrig.RunBGP(bin, routes, samples, withdraw, pes, func(f string, a ...any) { fmt.Fprintf(os.Stderr, f+"\n", a...) })
			if err != nil {
				return err
			}
			res := benchrig.Results{Meta: meta, Results: r}
			if out != "" {
				if err := writeResults(out, res); err != nil {
					return err
				}
			}
			if g.jsonOut {
				return printJSON(res)
			}
			fmt.Printf("%d VPNv4 routes from %d PEs (%d sampled):\n", r.Routes, r.PEs, r.Samples)
			fmt.Printf("  forwarding after   %.2f s (%.0f routes/s; in the state after %.2f s; %d commits; announced in %.2f s)\n",
				r.ForwardingSec, r.RoutesPerSecond, r.InstalledSecond, r.Commits, r.InjectSeconds)
			fmt.Printf("  memory             node RSS %.0f -> %.0f MB, Go heap %.0f MB, BPF maps %.0f MB (injector RSS %.0f MB)\n",
				r.RSSBeforeMB, r.RSSAfterMB, r.HeapAfterMB, r.MapMemoryMB, r.InjectorRSSMB)
			fmt.Printf("  withdrawal         %d prefixes at once: %.1f ms; one prefix: median %.1f ms of %d\n", r.WithdrawBatch,
				r.WithdrawBatchMs, r.WithdrawOneMed, len(r.WithdrawOneMs))
			fmt.Printf("method: %s\n", r.Method)
			return nil
		},
	}
	c.Flags().IntVar(&routes, "routes", 100000, "VPN routes to inject (at most 131072)")
	c.Flags().IntVar(&samples, "samples", 1000, "prefixes whose forwarding is checked")
	c.Flags().IntVar(&withdraw, "withdraw", 500, "sampled prefixes withdrawn at once (then up to 20 more, one at a time)")
	c.Flags().IntVar(&pes, "pes", 100, "advertising PEs (distinct service SIDs)")
	c.Flags().StringVar(&out, "out", "", "also write the JSON result to FILE")
	return c
}

func benchBGPInjectorCmd() *cobra.Command {
	var routes, pes, port, nodePort int
	c := &cobra.Command{
		Use:    "bgp-injector",
		Short:  "The injecting BGP speaker of seg6x bench bgp (commands on stdin; not for direct use)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return benchrig.ServeBGPInjector(routes, pes, port, nodePort, os.Stdin, os.Stdout)
		},
	}
	c.Flags().IntVar(&routes, "routes", 100000, "routes it can announce")
	c.Flags().IntVar(&pes, "pes", 100, "advertising PEs (distinct service SIDs)")
	c.Flags().IntVar(&port, "port", 0, "its BGP port on ::1")
	c.Flags().IntVar(&nodePort, "node-port", 0, "the seg6x node's BGP port on ::1")
	return c
}
