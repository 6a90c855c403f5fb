package benchcli

// bench_slowpath.go: `seg6x-bench slowpath`: how many packets per second the daemon's slow path
// fragments and runs back in (IPv4 without DF too big for its tunnel), next to the fast path's cost
// for one of the fragments (the measurement is tools/benchrig's RunSlowPath).

import (
	"fmt"

	"github.com/seg6x/seg6x/tools/benchrig"
	"github.com/seg6x/seg6x/tools/toolcli"
	"github.com/spf13/cobra"
)

func benchSlowPathCmd() *cobra.Command {
	var packets int
	c := &cobra.Command{
		Use:   "slowpath [--packets N]",
		Short: "Packets per second the daemon's slow path fragments (IPv4 without DF too big for its tunnel)",
		Long: `Builds the packet fixtures' rig in a namespace of its own, starts the daemon's slow path relay
(internal/slowpath) on it, and offers N copies of fixture slow_fragment_tf (a 1480-byte IPv4 packet
without DF for a tunnel of MTU 1436) to the XDP program as fast as BPF_PROG_TEST_RUN goes. The program
queues each on the perf ring (or counts DROP_SLOW_BUSY when the ring is full); the relay fragments it
in two and runs both fragments in with live frames, where the program encapsulates them and
redirects them out of tf0. The rate is the fragmented packets over the time from the first packet
offered to the last record handled: the slow path's capacity on one CPU while the ring never runs
empty (the producer shares the machine's CPUs with it). For scale: the fast path's program time for
one fragment, and the program's time to queue one packet. Needs root.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if done, err := reexecInOwnNetns("seg6x-bench"); done || err != nil {
				return err
			}
			meta := benchrig.NewMeta()
			r, err := benchrig.RunSlowPath(packets)
			if err != nil {
				return err
			}
			if toolcli.JSON {
				return toolcli.PrintJSON(benchrig.Results{Meta: meta, Results: r})
			}
			fmt.Printf("slow path: %d packets offered at %.0f/s (program: %.0f ns each to queue)\n", r.Offered, r.OfferedPerSec, r.ProgramNsPacket)
			fmt.Printf("  fragmented %d into %d fragments in %.2f s: %.0f packets/s (%.1f us per packet), %d ring full, %d failed\n",
				r.Fragmented, r.Fragments, r.Seconds, r.PacketsPerSec, r.UsPerPacket, r.Busy, r.Failed)
			fmt.Printf("  the relay's work per packet without the ring: %.1f us; fast path, one fragment: %.0f ns of program time\n",
				r.HandleUsPacket, r.FastNsFragment)
			return nil
		},
	}
	c.Flags().IntVar(&packets, "packets", 100000, "packets to offer")
	return c
}
