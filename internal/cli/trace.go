package cli

// trace.go: `seg6x trace` (what the fast path did with each matching packet, live) and `seg6x
// explain` (what it would do with one frame), both through the API's Trace and Explain calls, and
// the filter words they and `seg6x capture` share.

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	pb "github.com/seg6x/seg6x/api/seg6xv1"
	"github.com/seg6x/seg6x/internal/frame"
	"github.com/seg6x/seg6x/internal/pcapng"
)

const filterHelp = `FILTER words (all must match; none: every packet):
  dev IFACE            ingress interface            vlan ID       outer VLAN (0: untagged)
  tenant NAME          the ingress port's tenant    class C       tenant, sid, boundary, malformed, not-ours
  src PREFIX|ADDR      outer or inner source        dst PREFIX    outer or inner destination
  tcp|udp|icmp|icmpv6  innermost protocol (or: proto N)
  sport N, dport N     innermost TCP/UDP ports      sid ADDR      the local SID processed
  policy N             the SR policy of the route   reason R      e.g. DROP_BOUNDARY_SID, PASS_FIB_NO_NEIGH
  drop|pass|redirect   the action (repeatable: any of them)`

// parseFilter reads filter words.
func parseFilter(words []string) (*pb.TraceFilter, error) {
	f := &pb.TraceFilter{}
	for i := 0; i < len(words); i++ {
		k := words[i]
		val := func() (string, error) {
			i++
			if i >= len(words) {
				return "", fmt.Errorf("filter %q: missing its value", k)
			}
			return words[i], nil
		}
		num := func(max uint64) (uint32, error) {
			v, err := val()
			if err != nil {
				return 0, err
			}
			n, err := strconv.ParseUint(v, 10, 32)
			if err != nil || n > max {
				return 0, fmt.Errorf("filter %s %q: want a number 0 to %d", k, v, max)
			}
			return uint32(n), nil
		}
		var err error
		switch k {
		case "dev":
			f.Dev, err = val()
		case "tenant":
			f.Tenant, err = val()
		case "src":
			f.Src, err = val()
		case "dst":
			f.Dst, err = val()
		case "sid":
			f.Sid, err = val()
		case "reason":
			f.Reason, err = val()
		case "class":
			f.Class, err = val()
		case "proto":
			f.Proto, err = val()
		case "tcp", "udp", "icmp", "icmpv6":
			f.Proto = k
		case "drop", "pass", "redirect":
			f.Actions = append(f.Actions, k)
		case "vlan":
			var n uint32
			n, err = num(4094)
			f.Vlan = &n
		case "sport":
			f.Sport, err = num(65535)
		case "dport":
			f.Dport, err = num(65535)
		case "policy":
			f.Policy, err = num(1 << 31)
		default:
			return nil, fmt.Errorf("filter word %q: see seg6x trace --help", k)
		}
		if err != nil {
			return nil, err
		}
	}
	return f, nil
}

type traceFlags struct {
	count    uint32
	duration time.Duration
	sample   uint32
	rate     uint32
}

func (t *traceFlags) add(c *cobra.Command) {
	c.Flags().Uint32VarP(&t.count, "count", "c", 0, "stop after N packets (0: no limit)")
	c.Flags().DurationVarP(&t.duration, "duration", "d", 0, "stop after this long, e.g. 10s (0: no limit; Ctrl-C also stops)")
	c.Flags().Uint32Var(&t.sample, "sample", 1, "record one in N matching packets (per CPU)")
	c.Flags().Uint32Var(&t.rate, "rate", 1000, "at most N records per second per CPU (the rest counted, not recorded)")
}

// runTrace streams a trace, calling each for every record; it returns the summary.
func runTrace(args []string, tf traceFlags, snaplen uint32, each func(*pb.TraceRecord) error) (*pb.TraceSummary, error) {
	f, err := parseFilter(args)
	if err != nil {
		return nil, err
	}
	c, done, err := connect()
	if err != nil {
		return nil, err
	}
	defer done()
	ctx, cancel := signalContext()
	defer cancel()
	stream, err := c.Trace(ctx, &pb.TraceRequest{Filter: f, Count: tf.count, DurationMs: uint32(tf.duration.Milliseconds()),
		Sample: tf.sample, Rate: tf.rate, Snaplen: snaplen})
	if err != nil {
		return nil, apiErr(err)
	}
	for {
		ev, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil, errors.New("the trace ended without its summary")
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, nil // interrupted: the server disarms as the stream ends (no summary)
			}
			return nil, apiErr(err)
		}
		if s := ev.GetSummary(); s != nil {
			return s, nil
		}
		if err := each(ev.GetRecord()); err != nil {
			return nil, err
		}
	}
}

func traceCmd() *cobra.Command {
	var tf traceFlags
	var frames bool
	c := &cobra.Command{
		Use:   "trace [FILTER...]",
		Short: "Show what the fast path does with each matching packet: port, tenant, route, policy, SID, FIB, action, reason",
		Long: `While it runs, the attached programs run their traced build (otherwise they pay one branch per
packet for this): for every packet the filter takes it prints one block: where it came in (interface,
VLAN, hook), what it was taken for (tenant traffic, a local SID, refused at the boundary, malformed,
not ours), the route and SR policy hit, the SID, its behavior and segments left before and after, the
FIB lookup (table, address, result, egress interface, next hop, whether the next-hop cache answered),
and the action with its reason. --frames adds the headers of the frame as received and as it left.
It stops after --count packets, --duration, or Ctrl-C; --sample and --rate keep a busy node safe, and
the summary says how many packets matched and how many were not recorded.

` + filterHelp + `

Examples:
  seg6x trace tenant blue dst 198.18.2.0/24 --count 5
  seg6x trace drop --duration 30s                 # every packet the fast path drops, and why
  seg6x trace dev fab0 sid fc00:1::64 --json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			snap := uint32(0)
			if frames {
				snap = 256
			}
			n := 0
			sum, err := runTrace(args, tf, snap, func(r *pb.TraceRecord) error {
				n++
				if g.jsonOut {
					return printProto(r)
				}
				printRecord(os.Stdout, r, frames)
				return nil
			})
			if err != nil {
				return err
			}
			if sum == nil {
				fmt.Printf("%d packets shown (interrupted)\n", n)
				return nil
			}
			if g.jsonOut {
				return printProto(sum)
			}
			fmt.Printf("%d packets shown; %d matched, %d not recorded (sampling %d, rate limit %d, ring full %d); %d programs traced\n",
				n, sum.Matched, sum.SampledOut+sum.RateLimited+sum.RingFull, sum.SampledOut, sum.RateLimited, sum.RingFull, sum.Programs)
			return nil
		},
	}
	tf.add(c)
	c.Flags().BoolVar(&frames, "frames", false, "also print the headers of the frame as received and as it left")
	return c
}

// printRecord prints one record as a block.
func printRecord(w io.Writer, r *pb.TraceRecord, frames bool) {
	ts := time.Unix(0, r.TimeUnixNs).Format("15:04:05.000000")
	head := fmt.Sprintf("%s %s %s", ts, r.Hook, r.Dev)
	if r.Vlan != 0 {
		head += fmt.Sprintf(" vlan %d", r.Vlan)
	}
	verdict := r.Action
	if r.Reason != "" {
		verdict += " " + r.Reason
	}
	fmt.Fprintf(w, "%s: %s -> %s\n", head, r.Class, verdict)
	pkt := fmt.Sprintf("%s > %s %s", r.Outer.GetSrc(), r.Outer.GetDst(), frame.ProtoName(r.Outer.GetProto()))
	if r.Inner != nil {
		pkt += fmt.Sprintf(", inner %s > %s %s", r.Inner.Src, r.Inner.Dst, frame.ProtoName(r.Inner.Proto))
	}
	if r.Sport != 0 || r.Dport != 0 {
		pkt += fmt.Sprintf(" %d > %d", r.Sport, r.Dport)
	}
	fmt.Fprintf(w, "  packet   %s, %d bytes\n", pkt, r.FrameLen)
	port := "no port entry: access, no tenant"
	if len(r.PortRoles) > 0 {
		port = strings.Join(r.PortRoles, ", ")
		if r.Tenant != "" {
			port += fmt.Sprintf(" %s", r.Tenant)
		} else if r.Class == "not-ours" && slices.Contains(r.PortRoles, "access") {
			port += fmt.Sprintf(": no tenant on %s vlan %d", r.Dev, r.Vlan)
		}
	}
	fmt.Fprintf(w, "  port     %s\n", port)
	if r.Route != "" {
		fmt.Fprintf(w, "  route    %s, policy %d\n", r.Route, r.Policy)
	} else if r.Class == "tenant" {
		fmt.Fprintf(w, "  route    none of the tenant's routes covers the destination\n")
	}
	if r.Sid != "" {
		sl := "no SRH"
		if r.SlBefore == -2 {
			sl = "SRH not read (refused before)"
		} else if r.SlBefore >= 0 {
			sl = fmt.Sprintf("segments left %d -> %d", r.SlBefore, r.SlAfter)
		}
		if r.SrhPopped {
			sl += ", SRH popped"
		}
		chain := ""
		if r.Chain > 0 {
			chain = fmt.Sprintf(" (after %d other local SIDs)", r.Chain)
		}
		plugin := ""
		if r.PluginOutcome != "" {
			plugin = ", plugin: " + r.PluginOutcome
		}
		fmt.Fprintf(w, "  sid      %s %s%s, %s%s\n", r.Sid, r.Behavior, plugin, sl, chain)
	}
	if f := r.Fib; f != nil {
		table := "main"
		if f.Table != 0 {
			table = strconv.Itoa(int(f.Table))
		}
		line := fmt.Sprintf("table %s, %s: %s", table, f.Dst, f.Result)
		if f.Egress != "" {
			line += fmt.Sprintf(" via %s", f.Egress)
			if f.NextHop != "" && f.NextHop != f.Dst {
				line += " gateway " + f.NextHop
			}
			if f.Dmac != "" {
				line += " to " + f.Dmac
			}
		}
		if f.Mtu != 0 {
			line += fmt.Sprintf(" (MTU %d)", f.Mtu)
		}
		if f.Cached {
			line += " (next-hop cache)"
		}
		fmt.Fprintf(w, "  fib      %s\n", line)
	}
	fmt.Fprintf(w, "  result   %s, %d bytes\n", verdict, r.OutLen)
	if frames {
		for _, x := range []struct {
			name string
			b    []byte
		}{{"in ", r.Rx}, {"out", r.Tx}} {
			if len(x.b) == 0 {
				continue
			}
			for i, l := range frame.Describe(x.b) {
				label := "         "
				if i == 0 {
					label = "  " + x.name + "    "
				}
				fmt.Fprintf(w, "%s%s\n", label, l)
			}
		}
	}
}

func explainCmd() *cobra.Command {
	var dev string
	c := &cobra.Command{
		Use:   "explain --dev IFACE FRAME",
		Short: "Run one frame through the loaded fast path on the live state, without sending it: what would it do, and why",
		Long: `Runs the frame through the traced build of the program on the instance's live maps (routes, SIDs,
ports, the kernel's FIB and neighbors) with BPF_PROG_TEST_RUN. Nothing is sent, nothing is counted;
the slow path answers as it would (fragmenting, relaying ICMP) when a daemon runs. It prints the same
block as seg6x trace, and the headers of the frame given and of the frame that would leave.

FRAME is one of:
  hex bytes            020000000002 0200... (spaces and colons ignored)
  a pcap/pcapng file   its first packet
  a short spec         [vlan ID] ipv4|ipv6 SRC>DST [ttl N] [tcp|udp SPORT>DPORT [syn] | icmp | icmpv6] [len N]
                       addressed to IFACE's own MAC, e.g.: vlan 100 ipv4 198.18.1.2>198.18.2.2 udp 1000>2000

--json prints the API's ExplainReply (rx: the frame given, tx: the frame that would leave).`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if dev == "" {
				return errors.New("--dev: the interface the frame arrives on")
			}
			fr, err := readFrame(dev, args)
			if err != nil {
				return err
			}
			c, done, err := connect()
			if err != nil {
				return err
			}
			defer done()
			r, err := c.Explain(context.Background(), &pb.ExplainRequest{Dev: dev, Frame: fr})
			if err != nil {
				return apiErr(err)
			}
			if g.jsonOut {
				return printProto(r)
			}
			printRecord(os.Stdout, r.Record, true)
			return nil
		},
	}
	c.Flags().StringVar(&dev, "dev", "", "the interface the frame arrives on")
	return c
}

// readFrame reads FRAME (explain's argument): a file, hex, or a spec.
func readFrame(dev string, args []string) ([]byte, error) {
	joined := strings.Join(args, " ")
	if len(args) == 1 {
		if b, err := os.ReadFile(args[0]); err == nil {
			return pcapng.FirstPacket(b)
		}
	}
	hexs := strings.NewReplacer(" ", "", ":", "", "\n", "").Replace(joined)
	if b, err := hex.DecodeString(hexs); err == nil && len(b) > 0 {
		return b, nil
	}
	it, err := net.InterfaceByName(dev)
	if err != nil {
		return nil, fmt.Errorf("--dev %s: %v", dev, err)
	}
	src := net.HardwareAddr{0x02, 0x53, 0x36, 0x78, 0, 0x01}
	dst := it.HardwareAddr
	if len(dst) != 6 {
		dst = net.HardwareAddr{0x02, 0x53, 0x36, 0x78, 0, 0x02}
	}
	b, err := frame.Build(joined, src, dst)
	if err != nil {
		return nil, fmt.Errorf("FRAME is not a file, not hex, and not a spec: %v", err)
	}
	return b, nil
}

// signalContext ends on Ctrl-C or SIGTERM.
func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}
