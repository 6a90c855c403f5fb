package cli

// stats.go: `seg6x stats`: per-policy, per-SID, per-action and per-reason counters, and `seg6x status`.

import (
	"context"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	pb "github.com/seg6x/seg6x/api/seg6xv1"
	"github.com/seg6x/seg6x/internal/dataplane"
	"github.com/spf13/cobra"
	"google.golang.org/protobuf/proto"
)

func statsCmd() *cobra.Command {
	return queryCmd("stats", "Show packet and byte counters per SR policy, SID, XDP action and drop/pass reason",
		`Counters are per CPU in the data plane and summed here. Routes with the same segment list, source,
mode and hop limit share one SR policy and its counter ("routes" says how many); SID counters count
packets the behavior processed; reasons say why a packet was dropped (DROP_*), handed to the
daemon's slow path (SLOW_*: fragmented, or an ICMP error relayed; the daemon's own counters follow),
answered with an ICMP error (ICMP_*) or handed to the kernel (PASS_*). Bytes are frame bytes as
received. --json prints the API's StatsReply.`,
		func(c pb.ControlClient) (*pb.StatsReply, error) {
			return c.Stats(context.Background(), &pb.StatsRequest{})
		},
		printStats)
}

func statusCmd() *cobra.Command {
	return queryCmd("status", "Summarise the instance: daemon, attached interfaces and program ids, object counts, last error", "",
		func(c pb.ControlClient) (*pb.StatusReply, error) {
			return c.Status(context.Background(), &pb.StatusRequest{})
		},
		printStatus)
}

// queryCmd is a command that makes one API call and prints its reply (as a table, or --json).
func queryCmd[T proto.Message](use, short, long string, call func(pb.ControlClient) (T, error), print func(T)) *cobra.Command {
	return &cobra.Command{
		Use: use, Short: short, Long: long, Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, done, err := connect()
			if err != nil {
				return err
			}
			defer done()
			r, err := call(c)
			if err != nil {
				return apiErr(err)
			}
			if g.jsonOut {
				return printProto(r)
			}
			print(r)
			return nil
		},
	}
}

func stringsOrNone(ss []string) string {
	if len(ss) == 0 {
		return "none"
	}
	return strings.Join(ss, ",")
}

func count(c *pb.Counter) (uint64, uint64) { return c.GetPackets(), c.GetBytes() }

func printStats(s *pb.StatsReply) {
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	defer w.Flush()
	fmt.Fprintln(w, "ACTION\tPACKETS\tBYTES\t")
	for _, a := range dataplane.Actions {
		p, b := count(s.Actions[a])
		fmt.Fprintf(w, "%s\t%d\t%d\t\n", a, p, b)
	}
	fmt.Fprintln(w, "\t\t\t")
	fmt.Fprintln(w, "REASON\tPACKETS\tBYTES\t")
	for _, r := range dataplane.ReasonTable {
		if c, ok := s.Reasons[r.Name]; ok {
			p, b := count(c)
			fmt.Fprintf(w, "%s\t%d\t%d\t\n", r.Name, p, b)
		}
	}
	fmt.Fprintln(w, "\t\t\t")
	fmt.Fprintln(w, "POLICY (ID MODE SEGS, ROUTES)\tPACKETS\tBYTES\t")
	for _, p := range s.Policies {
		pk, b := count(p.Count)
		users := fmt.Sprintf("%d routes", p.Routes)
		if p.Sids > 0 {
			users += fmt.Sprintf(", %d binding SIDs", p.Sids)
		}
		if len(p.Lists) > 0 {
			users += ", " + strings.Join(p.Lists, ", ") // named policies' lists (seg6x policy show)
		}
		fmt.Fprintf(w, "%d %s %s, %s\t%d\t%d\t\n", p.Id, p.Mode, strings.Join(p.Segs, ","), users, pk, b)
	}
	fmt.Fprintln(w, "\t\t\t")
	fmt.Fprintln(w, "SID (ACTION)\tPACKETS\tBYTES\t")
	for _, x := range s.Sids {
		pk, b := count(x.Count)
		action := x.Action
		if len(x.Flavors) > 0 {
			action += " " + strings.Join(x.Flavors, ",")
		}
		fmt.Fprintf(w, "%s %s\t%d\t%d\t\n", x.Sid, action, pk, b)
	}
	w.Flush()
	if sp := s.SlowPath; sp != nil {
		state := "running"
		if !sp.Running {
			state = "NOT RUNNING (IPv4 without DF too big for its tunnel goes to the kernel)"
		}
		fmt.Printf("\nslow path: %s; %d records: %d packets fragmented into %d fragments, %d VXLAN packets into %d outer fragments, %d answers relayed, %d multi-buffer frames sent; %d failed, %d lost (ring full)\n",
			state, sp.Records, sp.Fragmented, sp.Fragments, sp.VxlanFragmented, sp.VxlanFragments, sp.Injected, sp.Sent, sp.Failed, sp.Lost)
		if sp.LastError != "" {
			fmt.Printf("slow path last error: %s\n", sp.LastError)
		}
	}
}

func printStatus(s *pb.StatusReply) {
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	defer w.Flush()
	if s.Daemon {
		fmt.Fprintf(w, "daemon:\tseg6x %s, up since %s\n", s.Version, time.Unix(s.StartedUnix, 0).UTC().Format(time.RFC3339))
	} else {
		fmt.Fprintf(w, "daemon:\tnot running (answered by this command, seg6x %s)\n", s.Version)
	}
	fmt.Fprintf(w, "generation:\t%d commits\n", s.Generation)
	fmt.Fprintf(w, "objects:\t%d tenants, %d IPv4 + %d IPv6 routes over %d policies, %d SIDs\n",
		s.Tenants, s.Routes4, s.Routes6, s.Policies, s.Sids)
	for _, it := range s.Interfaces {
		prog := "NOT ATTACHED"
		if it.ProgId != 0 {
			prog = fmt.Sprintf("program id %d", it.ProgId)
		}
		fmt.Fprintf(w, "interface:\t%s (ifindex %d, %s, role %s): %s\n", it.Name, it.Ifindex, it.Mode, it.Role, prog)
	}
	for _, pc := range s.Ports {
		t := ""
		if pc.Tenant != "" {
			t = ", tenant " + pc.Tenant
		}
		fmt.Fprintf(w, "boundary:\t%s %s: %s%s (%s)\n", pc.Dev, vlanName(int(pc.Vlan)), pc.Side, t, pc.Why)
	}
	fmt.Fprintf(w, "domain:\tlocators %s; sources %s\n", stringsOrNone(s.GetDomain().GetLocators()),
		stringsOrNone(s.GetDomain().GetSources()))
	if s.NexthopCacheMs == 0 {
		fmt.Fprintf(w, "next-hop cache:\toff (every packet asks the kernel's FIB)\n")
	} else if s.Daemon {
		fmt.Fprintf(w, "next-hop cache:\t%d ms, invalidated by this daemon on every netlink change\n", s.NexthopCacheMs)
	} else {
		fmt.Fprintf(w, "next-hop cache:\t%d ms; no daemon invalidates it: changes reach the fast path up to that late\n", s.NexthopCacheMs)
	}
	if s.BpfStats && s.ProgRunCount > 0 {
		fmt.Fprintf(w, "run time:\t%d runs, %.1f ns per run (kernel.bpf_stats_enabled)\n", s.ProgRunCount,
			float64(s.ProgRunNs)/float64(s.ProgRunCount))
	}
	last := s.LastError
	if last == "" {
		last = "none"
	}
	fmt.Fprintf(w, "api errors:\t%d (last: %s)\n", s.ApiErrors, last)
}
