// Package labcli is the seg6x-lab command (cmd/seg6x-lab): the namespace labs' commands (demo, up,
// down, hypervisor) and the helpers the labs run inside their namespaces. The labs are tools/lab's.
package labcli

// lab.go: the root command, `seg6x-lab demo|up|down` and the hidden helpers.

import (
	"encoding/hex"
	"fmt"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	pb "github.com/seg6x/seg6x/api/seg6xv1"
	"github.com/seg6x/seg6x/tools/lab"
	"github.com/seg6x/seg6x/tools/toolcli"
	"github.com/spf13/cobra"
	"google.golang.org/protobuf/encoding/protojson"
)

// labUSIDHelp explains --usid and --fabric (seg6x-lab, demo, up).
const labUSIDHelp = `With --usid, the same lab and tenants addressed with uSIDs (RFC 9800 NEXT-C-SID: block fcbb:0::/32,
16-bit uSIDs, the kernel's lblen 32 / nflen 16; pe1 is uSID 100, p 200, pe2 300). p serves its uN
locator fcbb:0:200::/48 (End, flavors next-csid) besides its classic End; each PE serves, on /64s of
its locator, uDT4 (function e004) and uDT6 (e006) for tenant A and uDT4 (e104, table 200) for tenant
B. Every policy is one uSID container: pe1 sends tenant A's IPv4 to fcbb:0:200:300:e004:: (p's uN,
then pe2's uDT4), H.Encaps with a one-segment SRH for tenant A, H.Encaps.Red (no SRH) for tenant B.
The demo runs the same traffic and checks, prints the policies with their containers and the
counters (p's uN counts every packet), and a trace at p: fcbb:0:200:300:e004:: -> fcbb:0:300:e004::.

With --fabric, a jumbo fabric with two parallel uplinks per hop: pe1 fab/fab2 to p w/w2 (fc00:a::/64,
fc00:a2::/64) and p e/e2 to pe2 fab/fab2 (fc00:b::/64, fc00:b2::/64), all of MTU 9000, every
locator routed over both links of a hop (ECMP: flows spread by the flow label seg6x writes, under
the kernel's fib_multipath_hash_policy 0); tenant A's access ports at MTU 9000, tenant B's at 1500.
Frames beyond a page cross seg6x's XDP programs as multi-buffer frames (docs/fabric.md).
`

// Main runs seg6x-lab and returns the process exit code.
func Main() int { return toolcli.Main(NewRoot()) }

// NewRoot builds the seg6x-lab command tree.
func NewRoot() *cobra.Command {
	return toolcli.NewRoot("seg6x-lab", "Namespace lab: two overlapping tenants, encap/decap PEs, a transit End node",
		`The lab builds network namespaces on this machine (hosts hA1 hB1 | pe1 | p | pe2 | hA2 hB2):
tenants A and B both use 198.18.1.0/24 on site 1 and 198.18.2.0/24 on site 2, behind 802.1Q access
ports (VLAN 100 and 200, tags written as real bytes by a tc program on each host). pe1 and pe2
encapsulate (A: H.Encaps, B: H.Encaps.Red over 2 SIDs), p does End, and the far PE decapsulates
with End.DT46 (tenant A, table 100) or End.DX4 (tenant B), pushing the tenant's VLAN.

`+labUSIDHelp+`
With --bgp, the BGP lab (default prefix s6bgp): pe1, pe2, pe3 around a kernel transit node p and a route
reflector rr (--rr frr: FRR's bgpd, or gobgpd), the same two tenants on three sites, no static routes:
each PE learns the other sites' prefixes and service SIDs over BGP (SRv6 L3VPN, RFC 9252). With --rtc
(--rr gobgpd only) every session also carries route target constraint (RFC 4684), and a third tenant C
on pe1 and pe2 only: the reflector sends pe3 none of its routes.

The lab runs the seg6x binary beside this one (bin/ after make build) unless --seg6x names another,
and this binary's hidden helpers on its hosts. Needs root.

Typical use:
  seg6x-lab demo                 # build, send traffic, print what happened, clean up (make demo)
  seg6x-lab demo --usid          # the same over uSID containers (make demo-usid)
  seg6x-lab demo --fabric        # a jumbo fabric with ECMP uplinks (make demo-fabric)
  seg6x-lab demo --bgp           # the BGP lab (make demo-bgp)
  seg6x-lab hypervisor           # two VMs across two hypervisors, seg6x on tc`,
		labCmds()...)
}

func labCmds() []*cobra.Command {
	var count int
	var prefix, rrKind string
	var bgpLab, rtc, usid, fabric bool
	demo := &cobra.Command{
		Use:   "demo",
		Short: "Build the lab, send traffic both ways for both tenants, print what happened, clean up",
		Long: `Builds the lab (see seg6x-lab --help), sends ping, UDP and TCP both ways for both tenants, IPv6 pings
for tenant A and a checked 20 MB bulk TCP transfer each way per tenant, checks every answer came from
the sender's own tenant, prints per-flow results, VLAN counters and every router's per-policy and
per-SID counters, and removes the lab (also on Ctrl-C).

` + labUSIDHelp,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			l, err := newLab(cmd, prefix, bgpLab, rrKind, rtc, lab.Options{USID: usid, Fabric: fabric})
			if err != nil {
				return err
			}
			stop := cleanupOnSignal(l)
			defer stop()
			defer l.Down()
			if bgpLab {
				return bgpDemo(l, count)
			}
			if err := l.Up(); err != nil {
				return err
			}
			rep, err := l.Traffic(count)
			if err != nil {
				return err
			}
			problems := rep.Problems()
			if usid {
				problems = append(problems, traceTransit(l)...)
			}
			// The reference: the same transfer with plain kernel routing, seg6x detached.
			if plain, err := l.PlainBulk(); err != nil {
				rep.Plain = &lab.BulkResult{Tenant: "A", Error: err.Error()}
			} else {
				rep.Plain = &plain
			}
			if toolcli.JSON {
				_ = toolcli.PrintJSON(rep)
			} else {
				printReport(rep)
			}
			if len(problems) > 0 {
				for _, s := range problems {
					fmt.Fprintln(os.Stderr, "PROBLEM:", s)
				}
				return fmt.Errorf("lab demo: %d problems", len(problems))
			}
			fmt.Println("\nall flows delivered within their own tenant; lab removed.")
			return nil
		},
	}
	demo.Flags().IntVar(&count, "count", 5, "pings, UDP and TCP messages per flow")
	up := &cobra.Command{
		Use:   "up",
		Short: "Build the lab and leave it running (inspect with ip netns exec <prefix>-pe1 ...)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			l, err := newLab(cmd, prefix, bgpLab, rrKind, rtc, lab.Options{USID: usid, Fabric: fabric})
			if err != nil {
				return err
			}
			if err := l.Up(); err != nil {
				l.Down()
				return err
			}
			if bgpLab {
				if _, err := l.WaitBGP(lab.BGPPEs, 60*time.Second); err != nil {
					l.Down()
					return err
				}
			}
			fmt.Printf("lab up: namespaces %s-{%s}; seg6x --dir %s/<node>\n", l.Prefix, strings.Join(l.Nodes(), ","), l.Dir)
			return nil
		},
	}
	down := &cobra.Command{
		Use:   "down",
		Short: "Remove the lab",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			l, err := newLab(cmd, prefix, bgpLab, rrKind, rtc, lab.Options{USID: usid, Fabric: fabric})
			if err != nil {
				return err
			}
			l.Down()
			return nil
		},
	}
	for _, x := range []*cobra.Command{demo, up, down} {
		x.Flags().StringVar(&prefix, "prefix", "s6x", "namespace name prefix (s6bgp with --bgp)")
		x.Flags().BoolVar(&bgpLab, "bgp", false, "the BGP lab: three PEs, a transit node and a route reflector")
		x.Flags().StringVar(&rrKind, "rr", "frr", "with --bgp: the route reflector, frr or gobgpd")
		x.Flags().BoolVar(&usid, "usid", false, "the same lab over uSID containers: uN at p, uDT4/uDT6 at the PEs")
		x.Flags().BoolVar(&fabric, "fabric", false, "a jumbo fabric: two parallel 9000-byte uplinks per hop (ECMP), tenant A's ports at 9000, tenant B's at 1500")
	}
	for _, x := range []*cobra.Command{demo, up} {
		x.Flags().BoolVar(&rtc, "rtc", false, "with --bgp --rr gobgpd: route target constraint on every session, tenant C on pe1 and pe2 only")
	}
	return append([]*cobra.Command{demo, up, down}, append(labHypervisorCmds(), labPortCmd(), labPortStatsCmd(), labEchoCmd(),
		labProbeCmd(), labBulkServerCmd(), labBulkCmd(), labInjectCmd(), labSniffCmd())...)
}

func newLab(cmd *cobra.Command, prefix string, bgp bool, rrKind string, rtc bool, o lab.Options) (*lab.Lab, error) {
	bin, tool, err := binaries()
	if err != nil {
		return nil, err
	}
	if !bgp {
		if rtc {
			return nil, fmt.Errorf("--rtc needs --bgp")
		}
		return lab.NewWith(prefix, bin, tool, o, os.Stdout), nil
	}
	if o.USID || o.Fabric {
		return nil, fmt.Errorf("--usid and --fabric are variants of the static lab, not of --bgp")
	}
	if rrKind != "frr" && rrKind != "gobgpd" {
		return nil, fmt.Errorf("--rr %q: want frr or gobgpd", rrKind)
	}
	if rtc && rrKind == "frr" {
		return nil, fmt.Errorf("--rtc needs --rr gobgpd: FRR 8.4 has no route target constraint (no rtc address family)")
	}
	if !cmd.Flags().Changed("prefix") {
		prefix = "s6bgp"
	}
	return lab.NewBGPWith(prefix, bin, tool, lab.BGPOptions{RR: rrKind, RTC: rtc}, os.Stdout)
}

// binaries are what a lab runs: the seg6x binary on its routers, this one's helpers on its hosts.
func binaries() (bin, tool string, err error) {
	if bin, err = toolcli.Seg6x(); err != nil {
		return "", "", err
	}
	tool, err = os.Executable()
	return bin, tool, err
}

// bgpDemo runs the BGP lab's demo on l (the caller removes the lab) and prints its report.
func bgpDemo(l *lab.Lab, count int) error {
	rep, err := l.BGPDemo(count)
	if toolcli.JSON {
		_ = toolcli.PrintJSON(rep)
	} else {
		if rep.Traffic != nil {
			printReport(rep.Traffic)
		}
		rep.WriteText(os.Stdout)
	}
	if err != nil {
		return err
	}
	for _, s := range rep.Problems {
		fmt.Fprintln(os.Stderr, "PROBLEM:", s)
	}
	if len(rep.Problems) > 0 {
		return fmt.Errorf("lab demo --bgp: %d problems", len(rep.Problems))
	}
	fmt.Println("\nevery route learned over BGP, every flow delivered within its own tenant, withdrawn and re-learned; lab removed.")
	return nil
}

// traceTransit prints a trace of two ICMP packets at p (the uSID lab: its uN shifting each container)
// and returns what is wrong with it.
func traceTransit(l *lab.Lab) []string {
	fmt.Println("\np: seg6x trace --frames --count 2 class sid icmp   (while hA1 pings hA2)")
	out, err := l.TraceTransit(2)
	fmt.Print(out)
	if err != nil {
		return []string{fmt.Sprintf("trace at p: %v", err)}
	}
	if !strings.Contains(out, "sid      fcbb:0:200::/48 (fcbb:0:200:300:e004::) End") ||
		!strings.Contains(out, "ipv6 fc00:1::1 > fcbb:0:300:e004:: hlim 63") {
		return []string{"trace at p: no echo request shifted by the uN fcbb:0:200::/48 to fcbb:0:300:e004::"}
	}
	return nil
}

// cleanupOnSignal removes the lab when the demo is interrupted.
func cleanupOnSignal(l *lab.Lab) func() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		if _, ok := <-ch; ok {
			fmt.Fprintln(os.Stderr, "\ninterrupted: removing the lab")
			l.Down()
			os.Exit(130)
		}
	}()
	return func() { signal.Stop(ch); close(ch) }
}

func printReport(rep *lab.Report) {
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "\nTENANT\tFROM\tTO\tPING\tUDP OK/SENT\tTCP OK/SENT\tWRONG TENANT")
	for _, f := range rep.Flows {
		fmt.Fprintf(w, "%s\t%s\t%s\t%d/%d\t%d/%d\t%d/%d\t%d\n", f.Tenant, f.From, f.To, f.PingRx, f.PingTx,
			f.UDP.OK, f.UDP.Sent, f.TCP.OK, f.TCP.Sent, f.UDP.WrongTenant+f.TCP.WrongTenant)
	}
	for _, pg := range rep.Ping6 {
		fmt.Fprintf(w, "%s (IPv6)\t%s\t%s\t%d/%d\t-\t-\t-\n", pg.Tenant, pg.From, pg.To, pg.Rx, pg.Sent)
	}
	w.Flush()
	if len(rep.Bulk) > 0 {
		fmt.Fprintln(w, "\nBULK TCP\tFROM\tTO\tMB EACH WAY\tUP Mbit/s\tDOWN Mbit/s\tEVERY BYTE CHECKED\tSEG6X CPU")
	}
	for _, b := range rep.Bulk {
		fmt.Fprintf(w, "tenant %s\t%s\t%s\t%d\t%.0f\t%.0f\t%v\t%.1f%%\n", b.Tenant, b.From, b.To, b.Bytes>>20, b.UpMbps, b.DownMbps,
			b.SentOK && b.RecvOK, 100*b.RouterCPU)
	}
	if b := rep.Plain; b != nil && b.Error == "" {
		fmt.Fprintf(w, "plain routing\t%s\t%s\t%d\t%.0f\t%.0f\t%v\t-\n", b.From, b.To, b.Bytes>>20, b.UpMbps, b.DownMbps, b.SentOK && b.RecvOK)
	}
	w.Flush()
	if len(rep.Bulk) > 0 {
		fmt.Fprintln(w, "(the whole lab shares this machine's CPUs: hosts' TCP, veths and three routers; SEG6X CPU is what\n"+
			" the three routers' seg6x programs ran during the transfer, in % of one CPU; plain routing: the same\n"+
			" namespaces and hosts, seg6x detached, the kernel routing tenant A as plain IPv4)")
	}
	if b := rep.Plain; b != nil && b.Error != "" {
		fmt.Fprintln(w, "plain routing reference not measured:", b.Error)
	}
	hosts := make([]string, 0, len(rep.Ports))
	for h := range rep.Ports {
		hosts = append(hosts, h)
	}
	sort.Strings(hosts)
	fmt.Fprintln(w, "\nACCESS PORT\tTAGGED SENT\tTAGGED RECEIVED\tUNTAGGED\tOTHER VLAN")
	for _, h := range hosts {
		pc := rep.Ports[h]
		fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%d\n", h, pc.TxTagged, pc.RxOK, pc.RxUntagged, pc.RxWrongVLAN)
	}
	w.Flush()
	for _, r := range rep.Routers {
		var s pb.StatsReply
		if err := protojson.Unmarshal(rep.Stats[r], &s); err != nil {
			continue
		}
		fmt.Fprintf(w, "\n%s\tPACKETS\tBYTES\n", r)
		for _, x := range s.Policies {
			fmt.Fprintf(w, "  policy %d segs %s (%d routes)\t%d\t%d\n", x.Id, strings.Join(x.Segs, ","), x.Routes, x.Count.GetPackets(), x.Count.GetBytes())
		}
		for _, x := range s.Sids {
			fmt.Fprintf(w, "  sid %s %s\t%d\t%d\n", x.Sid, x.Action, x.Count.GetPackets(), x.Count.GetBytes())
		}
		for _, a := range []string{"XDP_REDIRECT", "XDP_PASS", "XDP_DROP"} {
			fmt.Fprintf(w, "  %s\t%d\t%d\n", a, s.Actions[a].GetPackets(), s.Actions[a].GetBytes())
		}
		for name, c := range s.Reasons {
			fmt.Fprintf(w, "  reason %s\t%d\t%d\n", name, c.GetPackets(), c.GetBytes())
		}
		w.Flush()
	}
}

func labPortCmd() *cobra.Command {
	var dev, pin string
	var vlan uint16
	c := &cobra.Command{
		Use: "port --dev DEV --vlan VID --pin DIR", Hidden: true,
		Short: "make DEV an 802.1Q access port (lab helper)",
		RunE: func(cmd *cobra.Command, args []string) error {
			return lab.AttachAccessPort(dev, vlan, pin)
		},
	}
	c.Flags().StringVar(&dev, "dev", "", "interface")
	c.Flags().Uint16Var(&vlan, "vlan", 0, "VLAN ID")
	c.Flags().StringVar(&pin, "pin", "", "bpffs directory for the pins")
	return c
}

func labPortStatsCmd() *cobra.Command {
	var pin string
	c := &cobra.Command{
		Use: "port-stats --pin DIR", Hidden: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			pc, err := lab.ReadAccessPort(pin)
			if err != nil {
				return err
			}
			return toolcli.PrintJSON(pc)
		},
	}
	c.Flags().StringVar(&pin, "pin", "", "bpffs directory of the port")
	return c
}

func labEchoCmd() *cobra.Command {
	var tenant, foreign string
	var port int
	var dur time.Duration
	c := &cobra.Command{
		Use: "echo", Hidden: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return lab.EchoServer(tenant, port, dur, foreign)
		},
	}
	c.Flags().StringVar(&tenant, "tenant", "", "this host's tenant")
	c.Flags().IntVar(&port, "port", lab.EchoPort, "UDP and TCP port")
	c.Flags().DurationVar(&dur, "duration", time.Minute, "how long to serve")
	c.Flags().StringVar(&foreign, "foreign-log", "", "file collecting messages of other tenants")
	return c
}

func labBulkServerCmd() *cobra.Command {
	var port int
	var dur time.Duration
	c := &cobra.Command{
		Use: "bulk-server", Hidden: true,
		RunE: func(cmd *cobra.Command, args []string) error { return lab.BulkServer(port, dur) },
	}
	c.Flags().IntVar(&port, "port", lab.BulkPort, "TCP port")
	c.Flags().DurationVar(&dur, "duration", time.Minute, "how long to serve")
	return c
}

func labBulkCmd() *cobra.Command {
	var dst string
	var n int64
	var seed uint64
	var timeout time.Duration
	c := &cobra.Command{
		Use: "bulk", Hidden: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return toolcli.PrintJSON(lab.Bulk(dst, n, seed, timeout))
		},
	}
	c.Flags().StringVar(&dst, "dst", "", "address:port of a bulk-server")
	c.Flags().Int64Var(&n, "bytes", lab.BulkBytes, "bytes each way")
	c.Flags().Uint64Var(&seed, "seed", 1, "stream seed")
	c.Flags().DurationVar(&timeout, "timeout", time.Minute, "whole transfer")
	return c
}

func labProbeCmd() *cobra.Command {
	var tenant, proto, dst string
	var count int
	var timeout time.Duration
	c := &cobra.Command{
		Use: "probe", Hidden: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := lab.Probe(tenant, proto, dst, count, timeout)
			if err != nil {
				return err
			}
			return toolcli.PrintJSON(r)
		},
	}
	c.Flags().StringVar(&tenant, "tenant", "", "this host's tenant")
	c.Flags().StringVar(&proto, "proto", "udp", "udp or tcp")
	c.Flags().StringVar(&dst, "dst", "", "address:port")
	c.Flags().IntVar(&count, "count", 5, "messages")
	c.Flags().DurationVar(&timeout, "timeout", 2*time.Second, "per-message timeout")
	return c
}

func labInjectCmd() *cobra.Command {
	var dev string
	var frames []string
	var count int
	var gap time.Duration
	c := &cobra.Command{
		Use: "inject --dev DEV --frame HEX [--frame HEX ...]", Hidden: true,
		Short: "send raw Ethernet frames on DEV (lab helper for the boundary test)",
		RunE: func(cmd *cobra.Command, args []string) error {
			var fs [][]byte
			for _, h := range frames {
				b, err := hex.DecodeString(h)
				if err != nil || len(b) < 14 {
					return fmt.Errorf("--frame %.20s...: not an Ethernet frame in hex", h)
				}
				fs = append(fs, b)
			}
			return lab.SendRaw(dev, fs, count, gap)
		},
	}
	c.Flags().StringVar(&dev, "dev", "", "interface")
	c.Flags().StringSliceVar(&frames, "frame", nil, "frame in hex (repeatable)")
	c.Flags().IntVar(&count, "count", 1, "times each frame is sent (1..100)")
	c.Flags().DurationVar(&gap, "gap", 2*time.Millisecond, "pause after each frame (up to 1s)")
	c.PreRunE = func(cmd *cobra.Command, args []string) error {
		if count < 1 || count > 100 {
			return fmt.Errorf("--count %d: 1..100", count)
		}
		if gap < 0 || gap > time.Second {
			return fmt.Errorf("--gap %s: 0..1s", gap)
		}
		return nil
	}
	return c
}

func labSniffCmd() *cobra.Command {
	var dev string
	var dur time.Duration
	c := &cobra.Command{
		Use: "sniff --dev DEV --duration D", Hidden: true,
		Short: "count frames arriving on DEV and those carrying the attack or canary marker, as JSON (lab helper)",
		Long: `Counts for the duration the frames arriving on DEV and those carrying the attack or canary
marker, then prints them as JSON. "ready" goes to stderr once the socket is bound; SIGINT or
SIGTERM ends the window early (the counts are still printed).`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if dur <= 0 || dur > 5*time.Minute {
				return fmt.Errorf("--duration %s: up to 5m", dur)
			}
			sig, stop := make(chan os.Signal, 1), make(chan struct{})
			signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
			defer signal.Stop(sig)
			go func() { <-sig; close(stop) }()
			s, err := lab.Sniff(dev, dur, func() { fmt.Fprintln(os.Stderr, "ready") }, stop)
			if err != nil {
				return err
			}
			return toolcli.PrintJSON(s)
		},
	}
	c.Flags().StringVar(&dev, "dev", "", "interface")
	c.Flags().DurationVar(&dur, "duration", 10*time.Second, "how long to watch")
	return c
}
