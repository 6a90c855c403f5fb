package labcli

// lab_hypervisor.go: `seg6x-lab hypervisor`: the hypervisor lab (tools/lab/hypervisor.go) with a
// checked bulk TCP transfer between its two VMs.

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/seg6x/seg6x/tools/lab"
	"github.com/seg6x/seg6x/tools/toolcli"
	"github.com/spf13/cobra"
)

func labHypervisorCmds() []*cobra.Command {
	var mode, prefix string
	var n int64
	var keep, wire bool
	var timeout time.Duration
	c := &cobra.Command{
		Use:   "hypervisor [--mode seg6x_tc] [--bytes N] [--keep]",
		Short: "Two VMs (TSO/GSO/GRO veths) across two hypervisors and a transit node: a checked TCP transfer both ways",
		Long: `Builds vm1 - hv1 - p - hv2 - vm2 in namespaces. The VMs' veths do TSO, GSO and GRO as a
hypervisor's VM ports; hv1 and hv2 encapsulate their VM's traffic (H.Encaps over p's End SID) and
decapsulate the other's (End.DT4 at hv1, End.DX4 at hv2); the fabric MTU is 1600. --mode picks the
data plane of hv1, p and hv2:
  seg6x_tc     seg6x on tc (tcx) on every port: aggregates stay whole (the default)
  seg6x_xdp    seg6x on XDP: the VMs must compute their checksums, so they send MTU-sized segments
  kernel_seg6  the kernel's seg6 / seg6local
  plain        IPv4 routing, no overlay
vm1 sends --bytes of a seeded stream to vm2, which checks every byte and sends as many back. With
--wire-segments (the default) p's egress ports have no segmentation offload: aggregates are cut into
packets there and the next hypervisor's GRO rebuilds them. Prints the rates, retransmits, packets
on the wire and each node's seg6x counters; removes the lab unless --keep.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			bin, tool, err := binaries()
			if err != nil {
				return err
			}
			h := lab.NewHypervisor(prefix, bin, tool, os.Stdout)
			h.WireSegments = wire
			if !keep {
				defer h.Down()
			}
			if err := h.Up(); err != nil {
				h.Down()
				return err
			}
			if err := h.Configure(mode); err != nil {
				return err
			}
			t0, _ := h.TCP("vm1")
			w0, _ := h.LinkPackets("p", "e", true)
			res, err := h.Transfer(n, timeout)
			if err != nil {
				return err
			}
			t1, _ := h.TCP("vm1")
			w1, _ := h.LinkPackets("p", "e", true)
			if toolcli.JSON {
				return toolcli.PrintJSON(map[string]any{"mode": mode, "transfer": res, "retransmits": t1.RetransSegs - t0.RetransSegs,
					"wire_packets": w1 - w0})
			}
			fmt.Printf("\n%s: %d MB each way vm1 <-> vm2: sent %s, received %s; %.0f Mbit/s up, %.0f down\n", mode, n>>20,
				okWord(res.SentOK), okWord(res.RecvOK), res.UpMbps, res.DownMbps)
			fmt.Printf("vm1 retransmitted %d of %d segments; p sent %d packets towards hv2\n", t1.RetransSegs-t0.RetransSegs,
				t1.OutSegs-t0.OutSegs, w1-w0)
			if strings.HasPrefix(mode, "seg6x") {
				for _, node := range lab.HVRouters {
					out, _ := h.Seg6x(node, "stats")
					fmt.Printf("\n%s:\n%s", node, out)
				}
			}
			if keep {
				fmt.Printf("\nlab kept: namespaces %s-{vm1,hv1,p,hv2,vm2}; seg6x --dir %s/<node>; remove with seg6x-lab hypervisor-down --prefix %s\n",
					prefix, h.Dir, prefix)
			}
			if !res.SentOK || !res.RecvOK {
				return fmt.Errorf("transfer failed: %s", res.Error)
			}
			return nil
		},
	}
	c.Flags().StringVar(&mode, "mode", lab.HVSeg6xTC, "data plane: "+strings.Join(lab.HVModes, ", "))
	c.Flags().StringVar(&prefix, "prefix", "s6hv", "namespace name prefix")
	c.Flags().Int64Var(&n, "bytes", 256<<20, "bytes each way")
	c.Flags().DurationVar(&timeout, "timeout", 2*time.Minute, "the whole transfer")
	c.Flags().BoolVar(&keep, "keep", false, "leave the lab running")
	c.Flags().BoolVar(&wire, "wire-segments", true, "no segmentation offload on p's egress (segments made at the wire)")
	down := &cobra.Command{
		Use:   "hypervisor-down",
		Short: "Remove a hypervisor lab left by --keep",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			lab.NewHypervisor(prefix, "", "", nil).Down()
			return nil
		},
	}
	down.Flags().StringVar(&prefix, "prefix", "s6hv", "namespace name prefix")
	return []*cobra.Command{c, down}
}

func okWord(ok bool) string {
	if ok {
		return "checked OK"
	}
	return "FAILED"
}
