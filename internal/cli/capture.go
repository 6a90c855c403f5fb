package cli

// capture.go: `seg6x capture -w FILE.pcapng`: the frames of traced packets written as pcapng, one
// interface per point (as received, as sent, dropped, handed to the kernel), the decision in each
// packet's comment.

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	pb "github.com/seg6x/seg6x/api/seg6xv1"
	"github.com/seg6x/seg6x/internal/pcapng"
)

// capturePoints are the pcapng interfaces: where in the fast path a frame was seen.
var capturePoints = []pcapng.Interface{
	{Name: "received", Description: "seg6x: frames as the fast path received them"},
	{Name: "sent", Description: "seg6x: frames as the fast path sent them (after encap / decap / forwarding)"},
	{Name: "dropped", Description: "seg6x: frames the fast path dropped, as they were when dropped"},
	{Name: "to-kernel", Description: "seg6x: frames the fast path handed to the kernel, as handed"},
}

func captureCmd() *cobra.Command {
	var tf traceFlags
	var out, plugin, pluginSID string
	var snaplen uint32
	c := &cobra.Command{
		Use:   "capture -w FILE.pcapng [FILTER...]",
		Short: "Write the frames the fast path handles (as received, sent, dropped, handed to the kernel) to a pcapng file",
		Long: `Traces like seg6x trace (same filter, bounds, sampling and rate limit) and writes every traced packet
twice into a pcapng file that Wireshark and tshark open as is: on interface "received" as it came in,
and on "sent", "dropped" or "to-kernel" as it left the fast path, each with a comment saying what
seg6x did and why (tenant, route, policy, SID, behavior, FIB result, action, reason). Frames longer
than --snaplen are cut (their full length is kept).

` + filterHelp + `

With --plugin NAME it writes instead the frames a dump plugin (docs/plugins.md) copied at its SIDs,
one pcapng interface per SID (--sid: one SID's only); the plugin's settings say which and how much.

Examples:
  seg6x capture -w /tmp/blue.pcapng tenant blue --count 100
  seg6x capture --plugin dump --sid fc00:1::e -w /tmp/e.pcapng --duration 10s
  seg6x capture -w /tmp/drops.pcapng drop --duration 1m && tshark -r /tmp/drops.pcapng -V`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return errors.New("-w FILE: where to write the capture")
			}
			if plugin != "" {
				var sid netip.Addr
				if pluginSID != "" {
					a, err := netip.ParseAddr(pluginSID)
					if err != nil {
						return fmt.Errorf("--sid %q: not an IPv6 address", pluginSID)
					}
					sid = a
				}
				if len(args) > 0 {
					return errors.New("--plugin takes no filter: the plugin's settings say what it copies (and --sid which SID's)")
				}
				return capturePlugin(plugin, sid, out, tf)
			}
			if snaplen == 0 || snaplen > 2048 {
				return fmt.Errorf("--snaplen %d: 1 to 2048", snaplen)
			}
			f, err := os.Create(out)
			if err != nil {
				return err
			}
			defer f.Close()
			w, err := pcapng.NewWriter(f, "seg6x capture")
			if err != nil {
				return err
			}
			for _, p := range capturePoints {
				p.LinkType, p.SnapLen = pcapng.LinkTypeEthernet, snaplen
				if _, err := w.AddInterface(p); err != nil {
					return err
				}
			}
			n := 0
			sum, err := runTrace(args, tf, snaplen, func(r *pb.TraceRecord) error {
				n++
				return writeCaptured(w, r)
			})
			if ferr := w.Flush(); err == nil {
				err = ferr
			}
			if err != nil {
				return err
			}
			if err := f.Close(); err != nil {
				return err
			}
			if sum == nil {
				fmt.Fprintf(os.Stderr, "%d packets written to %s (%d frames; interrupted)\n", n, out, 2*n)
				return nil
			}
			fmt.Fprintf(os.Stderr, "%d packets written to %s (%d frames); %d matched, %d not recorded (sampling %d, rate limit %d, ring full %d)\n",
				n, out, 2*n, sum.Matched, sum.SampledOut+sum.RateLimited+sum.RingFull, sum.SampledOut, sum.RateLimited, sum.RingFull)
			return nil
		},
	}
	tf.add(c)
	c.Flags().StringVarP(&out, "write", "w", "", "the pcapng file to write")
	c.Flags().Uint32Var(&snaplen, "snaplen", 256, "bytes of each frame kept (at most 2048)")
	c.Flags().StringVar(&plugin, "plugin", "", "write what dump plugin NAME copies at its SIDs instead (plugins/dump.c; its snaplen and sampling are its settings')")
	c.Flags().StringVar(&pluginSID, "sid", "", "with --plugin: only the frames of this SID")
	return c
}

// writeCaptured writes a record's two frames.
func writeCaptured(w *pcapng.Writer, r *pb.TraceRecord) error {
	t := time.Unix(0, r.TimeUnixNs)
	comment := captureComment(r)
	if err := w.WritePacket(pcapng.Packet{Interface: 0, Time: t, Data: r.Rx, OrigLen: int(r.FrameLen),
		Comment: fmt.Sprintf("seg6x: received on %s: %s", r.Dev, comment)}); err != nil {
		return err
	}
	point := map[string]int{"redirect": 1, "drop": 2, "pass": 3}[r.Action]
	if point == 0 {
		return nil
	}
	return w.WritePacket(pcapng.Packet{Interface: point, Time: t, Data: r.Tx, OrigLen: int(r.OutLen),
		Comment: fmt.Sprintf("seg6x: %s: %s", capturePoints[point].Name, comment)})
}

// captureComment is the decision in one line.
func captureComment(r *pb.TraceRecord) string {
	parts := []string{r.Class}
	if r.Tenant != "" {
		parts = append(parts, "tenant "+r.Tenant)
	}
	if r.Route != "" {
		parts = append(parts, fmt.Sprintf("route %s policy %d", r.Route, r.Policy))
	}
	if r.Sid != "" {
		sid := fmt.Sprintf("sid %s %s", r.Sid, r.Behavior)
		if r.SlBefore >= 0 {
			sid += fmt.Sprintf(" sl %d->%d", r.SlBefore, r.SlAfter)
		}
		if r.SrhPopped {
			sid += " srh popped"
		}
		if r.PluginOutcome != "" {
			sid += " plugin " + r.PluginOutcome
		}
		parts = append(parts, sid)
	}
	if f := r.Fib; f != nil {
		fib := fmt.Sprintf("fib %s %s", f.Dst, f.Result)
		if f.Egress != "" {
			fib += " via " + f.Egress
		}
		parts = append(parts, fib)
	}
	v := r.Action
	if r.Reason != "" {
		v += " " + r.Reason
	}
	return strings.Join(append(parts, v), "; ")
}
