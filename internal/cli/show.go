package cli

// show.go: `seg6x show [interfaces|tenants|routes|sids]`.

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	pb "github.com/seg6x/seg6x/api/seg6xv1"
	"github.com/seg6x/seg6x/internal/api"

	"github.com/seg6x/seg6x/internal/state"
	"github.com/spf13/cobra"
)

func showCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "show [interfaces|domain|tenants|routes|sids|kernel]",
		Short: "Show the running state (everything, or one kind of object), or the kernel mirror",
		Long: `Show the running state. "show interfaces" also lists the SR domain boundary: the side (fabric:
local SIDs processed; access: tenant traffic only) of every (interface, VLAN) and why; "show domain"
the domain's locators and sources. Objects the kernel mirror made (seg6x daemon --mirror-kernel) are marked
"kernel". "show kernel" lists every seg6 / seg6local route of the kernel, whether the fast path runs
it (and as which seg6x object) or why not, and the notes that limit the mirror (policy rules,
ports owned by API tenants, conflicts); then the kernel's VXLAN devices and the forwarding entries of
them and of their bridges (bridge fdb), each followed into seg6x's state or not, and why.`,
		ValidArgs: []string{"interfaces", "domain", "tenants", "routes", "sids", "kernel"},
		Args:      cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			what := "all"
			if len(args) == 1 {
				what = args[0]
			}
			return show(what)
		},
	}
}

func show(what string) error {
	if what == "kernel" {
		return showKernel()
	}
	switch what {
	case "all", "interfaces", "domain", "tenants", "routes", "sids":
	default:
		return fmt.Errorf("show %q: want interfaces, domain, tenants, routes, sids or kernel", what)
	}
	cur, _, err := fetchState()
	if err != nil {
		return err
	}
	if g.jsonOut {
		// Lists are [] when empty, never null (scripts index them).
		cur.Interfaces, cur.Tenants, cur.Routes, cur.SIDs = orEmpty(cur.Interfaces), orEmpty(cur.Tenants), orEmpty(cur.Routes), orEmpty(cur.SIDs)
		switch what {
		case "interfaces":
			return printJSON(struct {
				Interfaces []state.Interface `json:"interfaces"`
				Ports      []state.PortClass `json:"ports"`
			}{cur.Interfaces, portClasses(cur)})
		case "domain":
			return printJSON(cur.Domain)
		case "tenants":
			return printJSON(cur.Tenants)
		case "routes":
			return printJSON(cur.Routes)
		case "sids":
			return printJSON(cur.SIDs)
		}
		return printJSON(cur)
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	defer w.Flush()
	if what == "all" || what == "interfaces" {
		fmt.Fprintln(w, "INTERFACE\tIFINDEX\tMODE\tROLE\tXDP FEATURES\tMULTI-BUFFER")
		for _, it := range cur.Interfaces {
			fmt.Fprintf(w, "%s\t%d\t%s\t%s\t%s\t%s\n", it.Name, it.Ifindex, it.Mode, it.Role, orDash(it.XDPFeatures), orDash(it.MultiBuffer))
		}
		fmt.Fprintln(w)
		printPorts(w, portClasses(cur))
		fmt.Fprintln(w)
	}
	if what == "all" || what == "domain" {
		fmt.Fprintf(w, "DOMAIN LOCATORS\t%s\n", listOr(cur.Domain.Locators, "none: only local SIDs are refused on access ports"))
		fmt.Fprintf(w, "DOMAIN SOURCES\t%s\n", listOr(cur.Domain.Sources, "any: fabric packets to local SIDs are not checked by source"))
		fmt.Fprintln(w)
	}
	if what == "all" || what == "tenants" {
		fmt.Fprintln(w, "TENANT\tTABLE\tPORTS\tGATEWAY\tMSS-CLAMP\tVPN (RD, SERVICE SID)\tORIGIN")
		for _, t := range cur.Tenants {
			var ports []string
			for _, p := range t.Ports {
				if p.VLAN == 0 {
					ports = append(ports, p.Dev+" untagged")
				} else {
					ports = append(ports, fmt.Sprintf("%s vlan %d", p.Dev, p.VLAN))
				}
			}
			gw := listOr(t.Gateway, "-")
			mss := t.MSSClamp
			if mss == "" {
				mss = state.MSSClampOff
			}
			vpn := "-"
			if v := t.VPN; v != nil {
				vpn = fmt.Sprintf("%s %s %s", v.RD, v.ServiceSID, v.Behavior)
			}
			fmt.Fprintf(w, "%s\t%d\t%s\t%s\t%s\t%s\t%s\n", t.Name, t.Table, strings.Join(ports, ", "), gw, mss, vpn, origin(t.Origin))
		}
		fmt.Fprintln(w)
	}
	if what == "all" || what == "routes" {
		fmt.Fprintln(w, "TENANT\tPREFIX\tMODE\tSEGS\tUSIDS\tSRC\tHOPLIMIT\tPOLICY\tEGRESS\tTUNNEL-MTU\tORIGIN")
		for _, r := range cur.Routes {
			usids := "-" // the segment list as written in uSIDs; SEGS gives its containers
			if r.USIDs != nil {
				usids = r.USIDs.String()
			}
			src := "-"
			if r.UsedSrc.IsValid() {
				src = r.UsedSrc.String()
			}
			egress, mtu := r.Egress, "-"
			if r.TunnelMTU > 0 {
				mtu = fmt.Sprint(r.TunnelMTU)
			}
			if egress == "" {
				egress = "-"
			}
			mode, segs, hop, policy := r.Mode, listOr(r.Segs, "-"), fmt.Sprint(r.HopLimit), fmt.Sprint(r.ID)
			if r.Policy != "" { // a named policy's: its lists (seg6x policy show), the smallest tunnel MTU of those up
				mode, segs, hop, policy = "-", "-", "-", r.Policy
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Tenant, r.Prefix, mode, segs, usids, src, hop,
				policy, egress, mtu, origin(r.Origin))
		}
		fmt.Fprintln(w)
	}
	if what == "all" || what == "sids" {
		fmt.Fprintln(w, "SID\tACTION\tPARAMETERS\tORIGIN")
		for _, s := range cur.SIDs {
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", s.Name(), s.Action, sidParams(&s), origin(s.Origin))
		}
	}
	return nil
}

// printPorts prints the SR domain boundary: the side of each (interface, VLAN).
func printPorts(w io.Writer, pcs []state.PortClass) {
	fmt.Fprintln(w, "PORT\tSIDE\tTENANT\tWHY")
	for _, pc := range pcs {
		tenant := pc.Tenant
		if tenant == "" {
			tenant = "-"
		}
		fmt.Fprintf(w, "%s %s\t%s\t%s\t%s\n", pc.Dev, vlanName(pc.VLAN), pc.Side, tenant, pc.Why)
	}
}

func vlanName(v int) string {
	switch v {
	case state.VLANAny:
		return "other VLANs"
	case 0:
		return "untagged"
	}
	return fmt.Sprintf("vlan %d", v)
}

// listOr joins the items with commas, or says none when there are none.
func listOr[T fmt.Stringer](ps []T, none string) string {
	if len(ps) == 0 {
		return none
	}
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.String()
	}
	return strings.Join(out, ",")
}

func sidParams(s *state.SID) string {
	var p []string
	if s.NH4.IsValid() {
		p = append(p, "nh4 "+s.NH4.String())
	}
	if s.NH6.IsValid() {
		p = append(p, "nh6 "+s.NH6.String())
	}
	if s.Table != 0 {
		p = append(p, fmt.Sprintf("table %d", s.Table))
	}
	if s.Tenant != "" {
		p = append(p, "tenant "+s.Tenant)
	}
	if s.VLAN != 0 {
		p = append(p, fmt.Sprintf("vlan %d", s.VLAN))
	}
	if len(s.Flavors) > 0 {
		p = append(p, "flavors "+strings.Join(s.Flavors, ","))
	}
	if s.HasFlavor(state.FlavorNextCSID) {
		p = append(p, fmt.Sprintf("lblen %d nflen %d", s.LBLen, s.NFLen))
	}
	return strings.Join(p, " ")
}

func origin(o state.Origin) string { return o.String() }

func showKernel() error {
	c, done, err := connect()
	if err != nil {
		return err
	}
	defer done()
	k, err := c.Kernel(context.Background(), &pb.KernelRequest{})
	if err != nil {
		return apiErr(err)
	}
	if g.jsonOut {
		return printProto(k)
	}
	if !k.Mirroring {
		fmt.Println("the kernel mirror is off (run the daemon with --mirror-kernel)")
		return nil
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "KERNEL ROUTE\tACCELERATED\tAS / WHY NOT")
	for _, r := range k.Routes {
		yes, what := "yes", r.Object
		if !r.Accelerated {
			yes, what = "no", r.Reason
		}
		fmt.Fprintf(w, "%s\t%s\t%s\n", r.Route, yes, what)
	}
	w.Flush()
	showKernelVXLAN(k)
	for _, n := range k.Notes {
		fmt.Println("note:", n)
	}
	fmt.Printf("%d netlink messages, %d resyncs, %d commits (%d refused)", k.Events, k.Resyncs, k.Commits, k.FailedCommits)
	if k.LastError != "" {
		fmt.Printf("; last error: %s", k.LastError)
	}
	fmt.Println()
	return nil
}

// showKernelVXLAN prints the kernel's VXLAN devices and their forwarding entries (when there are any).
func showKernelVXLAN(k *pb.KernelReply) {
	if len(k.Vxlans) == 0 {
		return
	}
	yes := func(b bool) string {
		if b {
			return "yes"
		}
		return "no"
	}
	fmt.Println()
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "VXLAN DEVICE\tVNI\tLOCAL\tPORT\tBRIDGE\tFOLLOWED\tACCELERATED\tWHY NOT")
	for _, v := range k.Vxlans {
		fmt.Fprintf(w, "%s\t%d\t%s\t%d\t%s\t%s\t%s\t%s\n", v.Dev, v.Vni, v.Local, v.Port, v.Bridge, yes(v.Followed),
			yes(v.Accelerated), v.Reason)
	}
	w.Flush()
	if len(k.Fdb) == 0 {
		return
	}
	fmt.Println()
	w = tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "FDB ENTRY\tDEV\tBRIDGE\tTO\tFOLLOWED\tACCELERATED\tWHY NOT")
	for _, e := range k.Fdb {
		mac, to := e.Mac, e.Remote
		if e.Vlan != 0 {
			mac = fmt.Sprintf("%s vlan %d", e.Mac, e.Vlan)
		}
		if to == "" {
			to = "port " + e.Dev
		} else {
			to = "remote " + to
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", mac, e.Dev, e.Bridge, to, yes(e.Followed), yes(e.Accelerated), e.Reason)
	}
	w.Flush()
}

// portClasses are the daemon's port classes (its status: they depend on the VXLAN devices it
// follows, which the state shown does not carry), or the state's own when the status cannot be had.
func portClasses(cur state.State) []state.PortClass {
	c, done, err := connect()
	if err == nil {
		defer done()
		if r, err := c.Status(context.Background(), &pb.StatusRequest{}); err == nil {
			return api.PortClassesFromPB(r.GetPorts())
		}
	}
	return state.Classify(cur.Interfaces, cur.Tenants, nil)
}

// orDash is s, or "-" when it is empty.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// orEmpty is s, or an empty slice for a nil one (JSON [] instead of null).
func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
