package cli

// bgp.go: `seg6x bgp show`: the daemon's BGP speaker (sessions, learned and advertised VPN routes).
// BGP is configured in the bgp: section of the config file (or the API's bgp object), see docs/bgp.md.

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	pb "github.com/seg6x/seg6x/api/seg6xv1"
)

func bgpCmd() *cobra.Command {
	c := &cobra.Command{Use: "bgp", Short: "The daemon's BGP speaker (SRv6 L3VPN, RFC 9252): show sessions and routes"}
	c.AddCommand(&cobra.Command{
		Use:   "show [neighbors|routes|learned|advertised]",
		Short: "Show BGP sessions, and the VPN routes learned (and the tenant each went into) and advertised",
		Long: `Show the BGP speaker of the running daemon. BGP runs inside "seg6x daemon" when the state has a
bgp: section (set it in the config file, see docs/bgp.md); without a daemon nothing runs.

  neighbors   each session: state, uptime, negotiated families (rtc: the peer sends only the VPN routes of
              route targets this node imports), routes received / accepted / refused (in no tenant) /
              advertised, graceful restart, flaps (times the session went down); under the table, the
              families not sent to a neighbor and why (vpnv4 needs extended next hop, RFC 8950) and its
              last error (a NOTIFICATION decoded) with when
  routes      learned and advertised VPN routes
  learned     every best path learned: RD, prefix, route targets, next hop, service SID and behavior,
              the neighbor, and the tenant it was installed into (or why none)
  advertised  what this node sends: each vpn tenant's prefixes with its service SID

With --json the whole report is printed as the API returns it.`,
		ValidArgs: []string{"neighbors", "routes", "learned", "advertised"},
		Args:      cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			what := "neighbors"
			if len(args) == 1 {
				what = args[0]
			}
			switch what {
			case "neighbors", "routes", "learned", "advertised":
			default:
				return fmt.Errorf("bgp show %q: want neighbors, routes, learned or advertised", what)
			}
			return bgpShow(what)
		},
	})
	return c
}

func bgpShow(what string) error {
	c, done, err := connect()
	if err != nil {
		return err
	}
	defer done()
	r, err := c.Bgp(context.Background(), &pb.BgpRequest{Routes: what != "neighbors"})
	if err != nil {
		return apiErr(err)
	}
	if g.jsonOut {
		return printProto(r)
	}
	if !r.Running {
		fmt.Println("BGP is not running (it runs in seg6x daemon when the state has a bgp: section)")
		if r.Imported > 0 {
			fmt.Printf("%d learned routes are still installed\n", r.Imported)
		}
		return nil
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	defer w.Flush()
	switch what {
	case "neighbors":
		fmt.Fprintf(w, "AS %d, router id %s: %d routes imported into tenants, %d commits (%d refused)\n\n", r.Asn, r.RouterId,
			r.Imported, r.Commits, r.FailedCommits)
		if s := refusedSummary(r.RefusedRoutes); s != "" {
			fmt.Fprintf(w, "routes refused since the daemon started: %s\n\n", s)
		}
		fmt.Fprintln(w, "NEIGHBOR\tAS\tSTATE\tUP\tFAMILIES\tRECEIVED\tACCEPTED\tREFUSED\tADVERTISED\tGR\tFLAPS\tDESCRIPTION")
		var notes []string
		now := time.Now()
		for _, n := range r.Neighbors {
			up := "-"
			if n.EstablishedUnixMs > 0 {
				up = now.Sub(time.UnixMilli(n.EstablishedUnixMs)).Round(time.Second).String()
			}
			gr := yesNo(n.GracefulRestart)
			if n.PeerRestarting {
				gr = "restarting" // down, its routes kept (stale)
			}
			fmt.Fprintf(w, "%s\t%d\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%s\t%d\t%s\n", n.Address, n.Asn, n.State, up,
				dash(strings.Join(n.Families, ",")), n.Received, n.Accepted, n.Refused, n.Advertised, gr, n.Flaps, n.Description)
			notes = append(notes, neighborNotes(n, now)...)
		}
		if len(notes) > 0 {
			fmt.Fprintln(w)
			for _, l := range notes {
				fmt.Fprintln(w, l)
			}
		}
	case "routes", "learned", "advertised":
		if what != "advertised" {
			fmt.Fprintln(w, "LEARNED RD\tPREFIX\tRTS\tNEXT HOP\tSID\tBEHAVIOR\tFROM\tTENANT\tNOTE")
			for _, l := range r.Learned {
				note := l.Reason
				if l.Stale {
					note = strings.TrimSpace("stale (peer restarting) " + note)
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", l.Rd, l.Prefix, strings.Join(l.Rts, ","), l.NextHop, l.Sid,
					l.Behavior, l.Peer, dash(l.Tenant), note)
			}
		}
		if what == "routes" {
			fmt.Fprintln(w)
		}
		if what != "learned" {
			fmt.Fprintln(w, "ADVERTISED RD\tPREFIX\tRTS\tNEXT HOP\tSID\tBEHAVIOR\tTENANT")
			for _, a := range r.Advertised {
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", a.Rd, a.Prefix, strings.Join(a.Rts, ","), a.NextHop, a.Sid, a.Behavior, a.Tenant)
			}
		}
	}
	if r.LastError != "" {
		fmt.Fprintf(w, "\nlast error: %s\n", r.LastError)
	}
	return nil
}

// neighborNotes are the lines under the neighbors table for n: each family not sent to it and why,
// and its last error with when.
func neighborNotes(n *pb.BgpNeighbor, now time.Time) []string {
	var out []string
	for _, f := range slices.Sorted(maps.Keys(n.NotSent)) {
		out = append(out, fmt.Sprintf("%s: %s: %s", n.Address, f, n.NotSent[f]))
	}
	if n.LastError != "" {
		when := "last error"
		if n.LastErrorUnixMs > 0 {
			at := time.UnixMilli(n.LastErrorUnixMs)
			when = fmt.Sprintf("last error %s ago (%s)", now.Sub(at).Round(time.Second), at.UTC().Format(time.RFC3339))
		}
		out = append(out, fmt.Sprintf("%s: %s: %s", n.Address, when, n.LastError))
	}
	return out
}

// refusedSummary is "rt_not_imported 5, local_prefix 1": the reasons with a count, most first.
func refusedSummary(m map[string]uint64) string {
	keys := slices.Collect(maps.Keys(m))
	slices.SortFunc(keys, func(a, b string) int {
		if m[a] != m[b] {
			return cmp.Compare(m[b], m[a])
		}
		return strings.Compare(a, b)
	})
	var parts []string
	for _, k := range keys {
		if m[k] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
		}
	}
	return strings.Join(parts, ", ")
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
