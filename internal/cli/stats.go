package cli

// stats.go: `seg6x stats`: per-route, per-SID, per-action and per-reason counters.

import (
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/cilium/ebpf"
	"github.com/seg6x/seg6x/internal/dataplane"
	"github.com/seg6x/seg6x/internal/state"
	"github.com/spf13/cobra"
)

// Count is a summed per-CPU counter.
type Count struct {
	Packets uint64 `json:"packets"`
	Bytes   uint64 `json:"bytes"`
}

// Stats is the JSON shape of `seg6x stats --json`.
type Stats struct {
	Actions map[string]Count `json:"actions"`
	Reasons map[string]Count `json:"reasons"`
	Routes  []RouteStats     `json:"routes"`
	SIDs    []SIDStats       `json:"sids"`
}

type RouteStats struct {
	Tenant string `json:"tenant"`
	Prefix string `json:"prefix"`
	Count
}

type SIDStats struct {
	SID    string `json:"sid"`
	Action string `json:"action"`
	Count
}

func statsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "stats",
		Short: "Show packet and byte counters per route, SID, XDP action and drop/pass reason",
		Long: `Counters are per CPU in the data plane and summed here. Route counters count tenant packets that
matched the route; SID counters count packets the behavior processed; reasons say why a packet was
dropped (DROP_*) or handed to the kernel (PASS_*). Bytes are frame bytes as received.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := ReadStats(g.dir)
			if err != nil {
				return err
			}
			if g.jsonOut {
				return printJSON(s)
			}
			printStats(s)
			return nil
		},
	}
}

func sum(m *ebpf.Map, idx uint32) (Count, error) {
	var per []dataplane.Seg6xCounter
	if err := m.Lookup(idx, &per); err != nil {
		return Count{}, err
	}
	var c Count
	for _, p := range per {
		c.Packets += p.Packets
		c.Bytes += p.Bytes
	}
	return c, nil
}

// ReadStats reads every counter of instance dir.
func ReadStats(dir string) (*Stats, error) {
	st, err := state.Open(dir, state.HostEnv{})
	if err != nil {
		return nil, err
	}
	defer st.Close()
	cur := st.Current()
	out := &Stats{Actions: map[string]Count{}, Reasons: map[string]Count{}, Routes: []RouteStats{}, SIDs: []SIDStats{}}
	for i, name := range dataplane.Actions {
		c, err := sum(st.Maps.ActionStats, uint32(i))
		if err != nil {
			return nil, err
		}
		out.Actions[name] = c
	}
	for i, name := range dataplane.Reasons {
		if i == 0 {
			continue
		}
		c, err := sum(st.Maps.ReasonStats, uint32(i))
		if err != nil {
			return nil, err
		}
		if c.Packets > 0 {
			out.Reasons[name] = c
		}
	}
	for _, r := range cur.Routes {
		c, err := sum(st.Maps.PolicyStats, r.ID)
		if err != nil {
			return nil, err
		}
		out.Routes = append(out.Routes, RouteStats{Tenant: r.Tenant, Prefix: r.Prefix.String(), Count: c})
	}
	for _, s := range cur.SIDs {
		c, err := sum(st.Maps.SidStats, s.ID)
		if err != nil {
			return nil, err
		}
		out.SIDs = append(out.SIDs, SIDStats{SID: s.SID.String(), Action: s.Action, Count: c})
	}
	return out, nil
}

func printStats(s *Stats) {
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	defer w.Flush()
	fmt.Fprintln(w, "ACTION\tPACKETS\tBYTES\t")
	for _, a := range dataplane.Actions {
		fmt.Fprintf(w, "%s\t%d\t%d\t\n", a, s.Actions[a].Packets, s.Actions[a].Bytes)
	}
	fmt.Fprintln(w, "\t\t\t")
	fmt.Fprintln(w, "REASON\tPACKETS\tBYTES\t")
	for _, r := range dataplane.Reasons {
		if c, ok := s.Reasons[r]; ok {
			fmt.Fprintf(w, "%s\t%d\t%d\t\n", r, c.Packets, c.Bytes)
		}
	}
	fmt.Fprintln(w, "\t\t\t")
	fmt.Fprintln(w, "ROUTE (TENANT PREFIX)\tPACKETS\tBYTES\t")
	for _, r := range s.Routes {
		fmt.Fprintf(w, "%s %s\t%d\t%d\t\n", r.Tenant, r.Prefix, r.Packets, r.Bytes)
	}
	fmt.Fprintln(w, "\t\t\t")
	fmt.Fprintln(w, "SID (ACTION)\tPACKETS\tBYTES\t")
	for _, x := range s.SIDs {
		fmt.Fprintf(w, "%s %s\t%d\t%d\t\n", x.SID, x.Action, x.Packets, x.Bytes)
	}
}
