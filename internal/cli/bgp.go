package cli

// bgp.go: `seg6x bgp show`: the daemon's BGP speaker (sessions, learned and advertised VPN routes).
// BGP is configured in the bgp: section of the config file (or the API's bgp object), see docs/bgp.md.

import (
	"context"
	"fmt"
	"os"
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

  neighbors   each session: state, negotiated families (rtc: the peer sends only the VPN routes of route
              targets this node imports), routes received / imported / advertised, graceful restart
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
		fmt.Fprintln(w, "NEIGHBOR\tAS\tSTATE\tUP\tFAMILIES\tRECEIVED\tACCEPTED\tADVERTISED\tGR\tDESCRIPTION")
		for _, n := range r.Neighbors {
			up := "-"
			if n.EstablishedUnixMs > 0 {
				up = time.Since(time.UnixMilli(n.EstablishedUnixMs)).Round(time.Second).String()
			}
			gr := yesNo(n.GracefulRestart)
			if n.PeerRestarting {
				gr = "restarting" // down, its routes kept (stale)
			}
			fmt.Fprintf(w, "%s\t%d\t%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\n", n.Address, n.Asn, n.State, up, dash(strings.Join(n.Families, ",")),
				n.Received, n.Accepted, n.Advertised, gr, n.Description)
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
