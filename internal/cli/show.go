package cli

// show.go: `seg6x show [interfaces|tenants|routes|sids]`.

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/netip"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	pb "github.com/seg6x/seg6x/api/seg6xv1"
	"github.com/seg6x/seg6x/internal/api"
	"github.com/seg6x/seg6x/internal/model"

	"github.com/spf13/cobra"
)

func showCmd() *cobra.Command {
	var o showOptions
	c := &cobra.Command{
		Use:   "show [interfaces|domain|tenants|routes|sids|plugins|kernel] [--tenant T] [--prefix P] [--policy P] [--origin O] [-d]",
		Short: "Show the running state (everything, or one kind of object), or the kernel mirror",
		Long: `Show the running state. "show interfaces" also lists the SR domain boundary: the side (fabric:
local SIDs processed; access: tenant traffic only) of every (interface, VLAN) and why; "show domain"
the domain's locators and sources; "show plugins" the loaded plugins and their counters (seg6x plugin
show). Objects the kernel mirror made (seg6x daemon --mirror-kernel) are marked
"kernel". "show kernel" lists every seg6 / seg6local route of the kernel, whether the fast path runs
it (and as which seg6x object) or why not, and the notes that limit the mirror (policy rules,
ports owned by API tenants, conflicts); then the kernel's VXLAN devices and the forwarding entries of
them and of their bridges (bridge fdb), each followed into seg6x's state or not, and why.

Tables are compact; -d (--detail) gives every column. Filters (they apply to tables and --json):
  --tenant NAME     tenants, routes and SIDs of that tenant
  --prefix P        routes inside prefix P (an address: the routes that hold it), SIDs inside P
  --policy P        routes of named policy P, or of policy id P
  --origin O        objects of origin O: api (CLI, API, config files), bgp, kernel, vpn
e.g. seg6x show routes --tenant blue --prefix 198.18.0.0/16`,
		ValidArgs: []string{"interfaces", "domain", "tenants", "routes", "sids", "plugins", "kernel"},
		Args:      cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			what := "all"
			if len(args) == 1 {
				what = args[0]
			}
			return show(what, o)
		},
	}
	o.flags(c)
	return c
}

// showOptions are show's filters and detail flag.
type showOptions struct {
	tenant, prefix, policy, origin string
	detail                         bool
}

func (o *showOptions) flags(c *cobra.Command) {
	c.Flags().StringVar(&o.tenant, "tenant", "", "only this tenant's tenants, routes and SIDs")
	c.Flags().StringVar(&o.prefix, "prefix", "", "only routes (and SIDs) inside this prefix; an address: the routes that hold it")
	c.Flags().StringVar(&o.policy, "policy", "", "only routes of this named policy or policy id")
	c.Flags().StringVar(&o.origin, "origin", "", "only objects of this origin: api, bgp, kernel, vpn")
	c.Flags().BoolVarP(&o.detail, "detail", "d", false, "every column")
}

// filter keeps the tenants, routes and SIDs of st that o asks for.
func (o *showOptions) filter(st *model.State) error {
	var pfx netip.Prefix
	addr := false
	if o.prefix != "" {
		var err error
		if pfx, err = netip.ParsePrefix(o.prefix); err != nil {
			a, aerr := netip.ParseAddr(o.prefix)
			if aerr != nil {
				return fmt.Errorf("--prefix %q: not a prefix or an address", o.prefix)
			}
			pfx, addr = netip.PrefixFrom(a, a.BitLen()), true
		}
		pfx = pfx.Masked()
	}
	orig := func(have model.Origin) bool { return o.origin == "" || have.String() == o.origin }
	if o.origin != "" && !slices.Contains([]string{"api", "bgp", "kernel", "vpn"}, o.origin) {
		return fmt.Errorf("--origin %q: want api, bgp, kernel or vpn", o.origin)
	}
	inside := func(p netip.Prefix) bool {
		switch {
		case o.prefix == "":
			return true
		case addr:
			return p.Contains(pfx.Addr())
		}
		return pfx.Contains(p.Addr()) && p.Bits() >= pfx.Bits()
	}
	st.Tenants = slices.DeleteFunc(st.Tenants, func(t model.Tenant) bool {
		return o.tenant != "" && t.Name != o.tenant || !orig(t.Origin)
	})
	st.Routes = slices.DeleteFunc(st.Routes, func(r model.Route) bool {
		return o.tenant != "" && r.Tenant != o.tenant || !orig(r.Origin) || !inside(r.Prefix) ||
			o.policy != "" && r.Policy != o.policy && fmt.Sprint(r.ID) != o.policy
	})
	st.SIDs = slices.DeleteFunc(st.SIDs, func(s model.SID) bool {
		return o.tenant != "" && s.Tenant != o.tenant || !orig(s.Origin) || o.prefix != "" && !inside(s.Prefix()) || o.policy != ""
	})
	return nil
}

func show(what string, o showOptions) error {
	if what == "kernel" {
		return showKernel()
	}
	if what == "plugins" {
		return showPlugins("")
	}
	switch what {
	case "all", "interfaces", "domain", "tenants", "routes", "sids":
	default:
		return fmt.Errorf("show %q: want interfaces, domain, tenants, routes, sids, plugins or kernel", what)
	}
	cur, _, err := fetchState()
	if err != nil {
		return err
	}
	if err := o.filter(&cur); err != nil {
		return err
	}
	if g.jsonOut {
		// Lists are [] when empty, never null (scripts index them).
		cur.Interfaces, cur.Tenants, cur.Routes, cur.SIDs = orEmpty(cur.Interfaces), orEmpty(cur.Tenants), orEmpty(cur.Routes), orEmpty(cur.SIDs)
		switch what {
		case "interfaces":
			return printJSON(struct {
				Interfaces []model.Interface `json:"interfaces"`
				Ports      []model.PortClass `json:"ports"`
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
		printInterfaces(w, cur, o.detail)
	}
	if what == "all" || what == "domain" {
		fmt.Fprintf(w, "DOMAIN LOCATORS\t%s\n", listOr(cur.Domain.Locators, "none: only local SIDs are refused on access ports"))
		fmt.Fprintf(w, "DOMAIN SOURCES\t%s\n", listOr(cur.Domain.Sources, "any: fabric packets to local SIDs are not checked by source"))
		fmt.Fprintln(w)
	}
	if what == "all" || what == "tenants" {
		printTenants(w, cur.Tenants, o.detail)
	}
	if what == "all" || what == "routes" {
		printRoutes(w, cur.Routes, o.detail)
	}
	if what == "all" || what == "sids" {
		fmt.Fprintln(w, "SID\tACTION\tPARAMETERS\tORIGIN")
		for _, s := range cur.SIDs {
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", s.Name(), s.Action, sidParams(&s), origin(s.Origin))
		}
	}
	return nil
}

// printInterfaces prints the attached interfaces (-d: their XDP features and multi-buffer
// handling) and the ports' sides of the domain boundary.
func printInterfaces(w io.Writer, cur model.State, detail bool) {
	if detail {
		fmt.Fprintln(w, "INTERFACE\tIFINDEX\tMODE\tROLE\tXDP FEATURES\tMULTI-BUFFER")
	} else {
		fmt.Fprintln(w, "INTERFACE\tIFINDEX\tMODE\tROLE\tMULTI-BUFFER")
	}
	for _, it := range cur.Interfaces {
		if detail {
			fmt.Fprintf(w, "%s\t%d\t%s\t%s\t%s\t%s\n", it.Name, it.Ifindex, it.Mode, it.Role, orDash(it.XDPFeatures), orDash(it.MultiBuffer))
		} else {
			fmt.Fprintf(w, "%s\t%d\t%s\t%s\t%s\n", it.Name, it.Ifindex, it.Mode, it.Role, orDash(it.MultiBuffer))
		}
	}
	fmt.Fprintln(w)
	printPorts(w, portClasses(cur))
	fmt.Fprintln(w)
}

// printTenants prints the tenants (-d: also gateways, MSS clamping and VPN).
func printTenants(w io.Writer, tenants []model.Tenant, detail bool) {
	if detail {
		fmt.Fprintln(w, "TENANT\tTABLE\tPORTS\tGATEWAY\tMSS-CLAMP\tVPN (RD, SERVICE SID)\tORIGIN")
	} else {
		fmt.Fprintln(w, "TENANT\tTABLE\tPORTS\tORIGIN")
	}
	for _, t := range tenants {
		var ports []string
		for _, p := range t.Ports {
			if p.VLAN == 0 {
				ports = append(ports, p.Dev+" untagged")
			} else {
				ports = append(ports, fmt.Sprintf("%s vlan %d", p.Dev, p.VLAN))
			}
		}
		if !detail {
			fmt.Fprintf(w, "%s\t%d\t%s\t%s\n", t.Name, t.Table, orDash(strings.Join(ports, ", ")), origin(t.Origin))
			continue
		}
		gw := listOr(t.Gateway, "-")
		mss := t.MSSClamp
		if mss == "" {
			mss = model.MSSClampOff
		}
		vpn := "-"
		if v := t.VPN; v != nil {
			vpn = fmt.Sprintf("%s %s %s", v.RD, v.ServiceSID, v.Behavior)
		}
		fmt.Fprintf(w, "%s\t%d\t%s\t%s\t%s\t%s\t%s\n", t.Name, t.Table, strings.Join(ports, ", "), gw, mss, vpn, origin(t.Origin))
	}
	fmt.Fprintln(w)
}

// printRoutes prints the routes: compact (the segment list as written: uSIDs or SIDs, or the named
// policy), -d every column.
func printRoutes(w io.Writer, routes []model.Route, detail bool) {
	if detail {
		fmt.Fprintln(w, "TENANT\tPREFIX\tMODE\tSEGS\tUSIDS\tSRC\tHOPLIMIT\tPOLICY\tEGRESS\tTUNNEL-MTU\tORIGIN")
	} else {
		fmt.Fprintln(w, "TENANT\tPREFIX\tPOLICY\tSEGS\tEGRESS\tTUNNEL-MTU\tORIGIN")
	}
	for _, r := range routes {
		usids := "-" // the segment list as written in uSIDs; SEGS gives its containers
		if r.USIDs != nil {
			usids = r.USIDs.String()
		}
		src := "-"
		if r.UsedSrc.IsValid() {
			src = r.UsedSrc.String()
		}
		egress, mtu := orDash(r.Egress), "-"
		if r.TunnelMTU > 0 {
			mtu = fmt.Sprint(r.TunnelMTU)
		}
		mode, segs, hop, policy := r.Mode, listOr(r.Segs, "-"), fmt.Sprint(r.HopLimit), fmt.Sprint(r.ID)
		if r.Policy != "" { // a named policy's: its lists (seg6x policy show), the smallest tunnel MTU of those up
			mode, segs, hop, policy = "-", "-", "-", r.Policy
		}
		if !detail {
			if r.USIDs != nil {
				segs = usids
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Tenant, r.Prefix, policy, segs, egress, mtu, origin(r.Origin))
			continue
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Tenant, r.Prefix, mode, segs, usids, src, hop,
			policy, egress, mtu, origin(r.Origin))
	}
	fmt.Fprintln(w)
}

// printPorts prints the SR domain boundary: the side of each (interface, VLAN).
func printPorts(w io.Writer, pcs []model.PortClass) {
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
	case model.VLANAny:
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

func sidParams(s *model.SID) string {
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
	if s.HasFlavor(model.FlavorNextCSID) {
		p = append(p, fmt.Sprintf("lblen %d nflen %d", s.LBLen, s.NFLen))
	}
	if s.Plugin != "" {
		p = append(p, "plugin "+s.Plugin)
		for _, k := range slices.Sorted(maps.Keys(s.Config)) {
			p = append(p, k+"="+s.Config[k])
		}
	}
	return strings.Join(p, " ")
}

func origin(o model.Origin) string { return o.String() }

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
func portClasses(cur model.State) []model.PortClass {
	c, done, err := connect()
	if err == nil {
		defer done()
		if r, err := c.Status(context.Background(), &pb.StatusRequest{}); err == nil {
			return api.PortClassesFromPB(r.GetPorts())
		}
	}
	return model.Classify(cur.Interfaces, cur.Tenants, nil)
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
