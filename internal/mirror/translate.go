package mirror

// translate.go: what the kernel's configuration means as seg6x objects, and why a kernel route is
// not accelerated when it is not.
//
//   - Headend: a kernel table with `encap seg6` routes becomes a tenant "kernel-<table>" whose ports
//     are the attached interfaces (untagged) whose traffic the kernel's policy rules send to that
//     table. Its routes are the seg6 routes (modes encap, encap.red) plus a pass route for every
//     other route of the table and of the local table, so that a more specific plain route, a local
//     address or a blackhole is left to the kernel exactly as the kernel would treat it.
//   - Endpoints: a `seg6local` /128 route becomes a local SID, when the IPv6 traffic of every
//     interface that accepts SIDs (the fabric side of the boundary) is routed by the table the route
//     is in. Like every SID, it is processed only for frames from fabric ports; access ports refuse it.
//   - Roles: an interface of role fabric gets no tenant port (the kernel runs its seg6 routes); on
//     role access the kernel's tenant port is access; on role auto it accepts SIDs as well, as the
//     kernel does (state.Classify).

import (
	"fmt"
	"net/netip"
	"slices"
	"sort"
	"strings"

	"github.com/seg6x/seg6x/internal/model"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// RouteStatus says whether one kernel seg6/seg6local route is accelerated, and if not why.
type RouteStatus struct {
	Route       string `json:"route"`
	Family      int    `json:"family"`
	Table       uint32 `json:"table"`
	Prefix      string `json:"prefix"`
	Accelerated bool   `json:"accelerated"`
	Reason      string `json:"reason,omitempty"`
	Object      string `json:"object,omitempty"` // the seg6x object it became
}

type input struct {
	routes    map[string]*kernelRoute
	rules     map[int][]netlink.Rule // by family
	ifaces    []model.Interface
	userPorts map[model.Port]string // (dev, vlan) -> API tenant
	userSIDs  map[netip.Addr]bool
	tunsrc    netip.Addr
	addrs     *hostAddrs // read when tunsrc is unset and a route encapsulates: the kernel's source (saddr.go)
}

type desired struct {
	tenants map[string]model.Tenant
	routes  map[string]map[netip.Prefix]model.Route
	sids    map[netip.Addr]model.SID
	status  []RouteStatus
	notes   []string
	// The kernel's VXLAN devices and what became of them and of their forwarding entries (vxlan_translate.go).
	vxlans    map[string]model.VXLAN
	vxStatus  []VXLANStatus
	fdbStatus []FDBStatus
}

// tableFor decides, from the policy rules, which table routes an interface's traffic of family fam;
// 0 with a reason when a rule seg6x cannot evaluate decides it.
func tableFor(rules []netlink.Rule, dev string) (uint32, string) {
	rs := slices.Clone(rules)
	sort.SliceStable(rs, func(i, j int) bool { return rs[i].Priority < rs[j].Priority })
	for _, r := range rs {
		if r.Table == unix.RT_TABLE_LOCAL && r.IifName == "" {
			continue // local addresses: handled with pass routes
		}
		if r.IifName != "" && r.IifName != dev {
			continue
		}
		var sel []string
		if r.Src != nil && r.Src.IP != nil {
			sel = append(sel, "from "+r.Src.String())
		}
		if r.Dst != nil && r.Dst.IP != nil {
			sel = append(sel, "to "+r.Dst.String())
		}
		if r.Mark != 0 {
			sel = append(sel, "fwmark")
		}
		if r.Tos != 0 {
			sel = append(sel, "tos")
		}
		if r.OifName != "" {
			sel = append(sel, "oif")
		}
		if r.Invert {
			sel = append(sel, "not")
		}
		if r.IPProto != 0 || r.Dport != nil || r.Sport != nil {
			sel = append(sel, "ipproto/ports")
		}
		if r.UIDRange != nil {
			sel = append(sel, "uidrange")
		}
		if r.SuppressPrefixlen > 0 || r.SuppressIfgroup > 0 {
			sel = append(sel, "suppress")
		}
		if r.Goto > 0 || (r.Type != 0 && r.Type != 1 /* FR_ACT_TO_TBL */) {
			sel = append(sel, "non-table action")
		}
		if len(sel) > 0 {
			return 0, fmt.Sprintf("policy rule %d (%s) applies to %s: seg6x does not evaluate rule selectors", r.Priority, strings.Join(sel, ", "), dev)
		}
		return uint32(r.Table), ""
	}
	return 0, fmt.Sprintf("no policy rule selects a table for %s", dev)
}

// acceptsSIDs says whether local SIDs are processed for the untagged traffic of interface it: role
// fabric, or role auto without a tenant port of the API or a config file (state.Classify).
func acceptsSIDs(in *input, it model.Interface) bool {
	switch it.Role {
	case model.RoleFabric:
		return true
	case model.RoleAccess:
		return false
	}
	for p := range in.userPorts {
		if p.Dev == it.Name {
			return false
		}
	}
	return true
}

func tenantName(t4, t6 uint32) string {
	switch {
	case t4 == t6:
		return "kernel-" + tableName(t4)
	case t6 == 0:
		return "kernel-" + tableName(t4) + "-ipv4"
	case t4 == 0:
		return "kernel-" + tableName(t6) + "-ipv6"
	}
	return "kernel-" + tableName(t4) + "-" + tableName(t6)
}

func translate(in *input) *desired {
	d := &desired{tenants: map[string]model.Tenant{}, routes: map[string]map[netip.Prefix]model.Route{}, sids: map[netip.Addr]model.SID{}}
	famIdx := map[int]int{unix.AF_INET: 0, unix.AF_INET6: 1}

	// Which tables hold seg6 routes (per family): only those need a tenant.
	hasSeg6 := [2]map[uint32]bool{{}, {}}
	for _, r := range in.routes {
		if r.Encap == encapSeg6 {
			hasSeg6[famIdx[r.Family]][r.Table] = true
		}
	}
	// Ports: each attached interface's untagged traffic, by the tables its two families use.
	type pair struct{ t4, t6 uint32 }
	ports := map[pair][]model.Port{}
	v6tables := map[uint32]bool{} // the IPv6 tables of the interfaces that accept SIDs (fabric side)
	for _, it := range in.ifaces {
		t4, why4 := tableFor(in.rules[unix.AF_INET], it.Name)
		t6, why6 := tableFor(in.rules[unix.AF_INET6], it.Name)
		if acceptsSIDs(in, it) {
			v6tables[t6] = true
		}
		for fam, why := range map[string]string{"IPv4": why4, "IPv6": why6} {
			if why != "" {
				d.notes = append(d.notes, fam+": "+why)
			}
		}
		if !hasSeg6[0][t4] {
			t4 = 0
		}
		if !hasSeg6[1][t6] {
			t6 = 0
		}
		if t4 == 0 && t6 == 0 {
			continue
		}
		if it.Role == model.RoleFabric {
			d.notes = append(d.notes, fmt.Sprintf("%s has role fabric: the kernel, not the fast path, runs the seg6 routes for its traffic (a tenant port would make it access)", it.Name))
			continue
		}
		if owner, ok := in.userPorts[model.Port{Dev: it.Name}]; ok {
			d.notes = append(d.notes, fmt.Sprintf("%s untagged belongs to tenant %q (seg6x API): kernel seg6 routes are not applied there", it.Name, owner))
			continue
		}
		p := pair{t4, t6}
		ports[p] = append(ports[p], model.Port{Dev: it.Name})
	}
	routed := [2]map[uint32]string{{}, {}} // table -> tenant that carries it
	for p, ps := range ports {
		name := tenantName(p.t4, p.t6)
		sort.Slice(ps, func(i, j int) bool { return ps[i].Dev < ps[j].Dev })
		table := p.t4
		if table == 0 {
			table = p.t6
		}
		d.tenants[name] = model.Tenant{Name: name, Table: table, Ports: ps, KernelFallback: true}
		rs := map[netip.Prefix]model.Route{}
		for fam, t := range []uint32{p.t4, p.t6} {
			if t != 0 {
				routed[fam][t] = name
				tableRoutes(in, fam, t, name, rs)
			}
		}
		d.routes[name] = rs
	}

	// Status of every seg6 route; SIDs from seg6local routes.
	var locals []*kernelRoute
	for _, r := range in.routes {
		switch r.Encap {
		case encapSeg6:
			st := RouteStatus{Route: r.String(), Family: r.Family, Table: r.Table, Prefix: r.Dst.String()}
			tenant := routed[famIdx[r.Family]][r.Table]
			got, ok := d.routes[tenant][r.Dst]
			switch {
			case tenant == "":
				st.Reason = "no attached interface's traffic is routed by table " + tableName(r.Table)
			case !ok || got.Mode == model.ModePass:
				st.Reason = seg6Reason(in, r)
			default:
				st.Accelerated, st.Object = true, fmt.Sprintf("route %s tenant %s", r.Dst, tenant)
			}
			d.status = append(d.status, st)
		case encapSeg6Local:
			locals = append(locals, r)
		}
	}
	// Longest prefixes first: a SID served by prefix is only accelerated when every route inside it
	// is too (seg6x's longest match then picks what the kernel's would).
	sort.Slice(locals, func(i, j int) bool {
		a, b := locals[i], locals[j]
		if a.Dst.Bits() != b.Dst.Bits() {
			return a.Dst.Bits() > b.Dst.Bits()
		}
		if a.Dst != b.Dst {
			return a.Dst.Addr().Less(b.Dst.Addr())
		}
		return a.key() < b.key()
	})
	for _, r := range locals {
		st := RouteStatus{Route: r.String(), Family: r.Family, Table: r.Table, Prefix: r.Dst.String()}
		sd, why := localSID(r, in.tunsrc, in.addrs)
		switch {
		case why != "":
			st.Reason = why
		case len(v6tables) == 0:
			st.Reason = "no attached interface accepts SIDs (all are access: declare the fabric ones with seg6x attach DEV --role fabric)"
		case len(v6tables) != 1 || !v6tables[r.Table]:
			st.Reason = fmt.Sprintf("in table %s, which is not the one table the IPv6 traffic of every fabric-side interface uses (seg6x SIDs apply on every fabric port)", tableName(r.Table))
		case in.userSIDs[sd.SID]:
			st.Reason = "conflict: the same SID is set through the seg6x API"
		default:
			st.Reason = shadowed(in, d, r)
		}
		if st.Reason == "" {
			if o, ok := d.sids[sd.SID]; ok {
				st.Reason = fmt.Sprintf("SID %s has the same address (seg6x keys SIDs by address): the kernel keeps this one", o.Name())
			} else {
				st.Accelerated, st.Object = true, "sid "+sd.Name()
				d.sids[sd.SID] = sd
			}
		}
		d.status = append(d.status, st)
	}
	sort.Slice(d.status, func(i, j int) bool { return d.status[i].Route < d.status[j].Route })
	sort.Strings(d.notes)
	d.notes = slices.Compact(d.notes)
	return d
}

// tableRoutes adds table t's routes of family index fam (and the local table's) to rs: seg6 routes
// seg6x can run as encap routes, everything else as pass routes.
func tableRoutes(in *input, fam int, t uint32, tenant string, rs map[netip.Prefix]model.Route) {
	family := []int{unix.AF_INET, unix.AF_INET6}[fam]
	best := map[netip.Prefix]*kernelRoute{}
	tos := map[netip.Prefix]bool{}
	local := map[netip.Prefix]bool{}
	for _, r := range in.routes {
		if r.Family != family || (r.Table != t && r.Table != unix.RT_TABLE_LOCAL) {
			continue
		}
		if r.Table == unix.RT_TABLE_LOCAL {
			local[r.Dst] = true
			continue
		}
		if r.Tos != 0 {
			tos[r.Dst] = true
			continue
		}
		if b := best[r.Dst]; b == nil || r.Priority < b.Priority {
			best[r.Dst] = r
		}
	}
	for p := range local {
		rs[p] = model.Route{Tenant: tenant, Prefix: p, Mode: model.ModePass}
	}
	for p, r := range best {
		if local[p] {
			continue
		}
		if tos[p] || !acceleratable(r) {
			rs[p] = model.Route{Tenant: tenant, Prefix: p, Mode: model.ModePass}
			continue
		}
		mode := model.ModeEncap
		if r.Seg6Mode == seg6ModeEncapRed {
			mode = model.ModeEncapRed
		}
		rs[p] = model.Route{Tenant: tenant, Prefix: p, Mode: mode, Segs: slices.Clone(r.Segs), Src: encapSource(in, r)}
	}
	for p := range tos {
		if _, ok := rs[p]; !ok {
			rs[p] = model.Route{Tenant: tenant, Prefix: p, Mode: model.ModePass}
		}
	}
}

// encapSource is the outer source the kernel's seg6 encap route r writes (set_tun_src, as for
// End.B6.Encaps): `ip sr tunsrc`, else the selection for its first segment with the route's own
// device as the outgoing one. Unknown (no addresses read, no device): the zero address, and the
// store takes the source of the route to the first segment.
func encapSource(in *input, r *kernelRoute) netip.Addr {
	if in.tunsrc.IsValid() || r.Oif == 0 || len(r.Segs) == 0 {
		return in.tunsrc
	}
	if src, why := in.addrs.source(int(r.Oif), r.Segs[0]); why == "" {
		return src
	}
	return netip.Addr{}
}

func acceleratable(r *kernelRoute) bool {
	return r.Encap == encapSeg6 && (r.Seg6Mode == seg6ModeEncap || r.Seg6Mode == seg6ModeEncapRed) &&
		!r.Multipath && !r.Src && r.Type == unix.RTN_UNICAST && len(r.Segs) >= 1 && len(r.Segs) <= model.MaxSegments
}

func seg6Reason(in *input, r *kernelRoute) string {
	switch {
	case r.Seg6Mode != seg6ModeEncap && r.Seg6Mode != seg6ModeEncapRed:
		return "mode " + seg6ModeName(r.Seg6Mode) + " is not accelerated (encap and encap.red are)"
	case r.Multipath:
		return "multipath route"
	case r.Src:
		return "source-specific route (from ...)"
	case r.Tos != 0:
		return "TOS-specific route"
	case len(r.Segs) > model.MaxSegments:
		return fmt.Sprintf("%d SIDs (at most %d)", len(r.Segs), model.MaxSegments)
	}
	for _, o := range in.routes {
		if o.Family == r.Family && o.Table == unix.RT_TABLE_LOCAL && o.Dst == r.Dst {
			return "the prefix is also a local route: the kernel delivers it"
		}
		if o.Family == r.Family && o.Table == r.Table && o.Dst == r.Dst && o.Tos == 0 && o.Priority < r.Priority {
			return "a route with a lower metric for the same prefix wins"
		}
	}
	return "not accelerated"
}

// shadowed says why the kernel would not run seg6local route r on every address it covers, where
// seg6x would: a local address (the local table comes first), a route with a lower metric for the
// same prefix, or, for a prefix, a more specific route of its table that seg6x does not serve as a SID
// (d.sids holds the longer SIDs already accepted).
func shadowed(in *input, d *desired, r *kernelRoute) string {
	var inside []string
	for _, o := range in.routes {
		if o == r || o.Family != unix.AF_INET6 || !r.Dst.Contains(o.Dst.Addr()) || o.Dst.Bits() < r.Dst.Bits() {
			continue
		}
		switch {
		case o.Table == unix.RT_TABLE_LOCAL && o.Dst == r.Dst:
			return "the address is local: the kernel delivers it before any seg6local route"
		case o.Table == unix.RT_TABLE_LOCAL:
			inside = append(inside, "local address "+o.Dst.Addr().String())
		case o.Table != r.Table:
		case o.Dst == r.Dst:
			if o.Tos == 0 && o.Priority < r.Priority {
				return "a route with a lower metric for the same prefix wins"
			}
		default:
			if sd, ok := d.sids[o.Dst.Addr()]; !ok || sd.Prefix() != o.Dst {
				inside = append(inside, "route "+o.Dst.String())
			}
		}
	}
	if len(inside) == 0 {
		return ""
	}
	sort.Strings(inside)
	more := ""
	if len(inside) > 1 {
		more = fmt.Sprintf(" (and %d more)", len(inside)-1)
	}
	return fmt.Sprintf("%s%s inside the prefix is left to the kernel: seg6x would take its traffic", inside[0], more)
}

// localSID turns a seg6local route into a SID, or says why it cannot. A prefix shorter than /128
// becomes a SID served by prefix (a uSID locator's uN, a uA); a binding SID's outer source is the
// one the kernel writes (tunsrc, else the choice of addrs for its first segment on the route's
// device). The SID is checked by the state package's validation, as any SID is.
func localSID(r *kernelRoute, tunsrc netip.Addr, addrs *hostAddrs) (model.SID, string) {
	sd := model.SID{SID: r.Dst.Addr()}
	if r.Dst.Bits() < 128 {
		sd.Bits = uint8(r.Dst.Bits())
	}
	l := r.Local
	switch {
	case r.Family != unix.AF_INET6:
		return sd, "not IPv6"
	case r.Multipath:
		return sd, "multipath route"
	}
	for _, a := range l.Attrs {
		switch a {
		case localTable, localNH4, localNH6, localVRFTable, localCounters, localFlavors:
		case localIIF:
			return sd, "iif attribute"
		case localOIF:
			return sd, "oif attribute (seg6x picks the egress by a FIB lookup of the next hop)"
		case localBPF:
			return sd, "End.BPF program: the kernel runs it (an lwt_seg6local program on the skb, which XDP cannot run; seg6x's own is a plugin SID, docs/plugins.md)"
		case localSRH:
			if l.Action != 10 { // End.B6.Encaps; End.B6 (9, SRH insertion) is not implemented
				return sd, "SRH attribute on " + localActionName(l.Action)
			}
		default:
			return sd, fmt.Sprintf("seg6local attribute %d", a)
		}
	}
	b := model.BehaviorOfKernel(int(l.Action))
	if b == nil {
		return sd, "action " + localActionName(l.Action) + " is not implemented by seg6x"
	}
	sd.Action = b.Name
	if slices.Contains(l.Attrs, localFlavors) {
		if why := localFlavorsOf(l, &sd); why != "" {
			return sd, why
		}
	}
	switch b.Needs {
	case model.ParamNH4:
		sd.NH4 = l.NH4
	case model.ParamNH6:
		sd.NH6 = l.NH6
	case model.ParamTable:
		switch b.KernelTable {
		case model.KernelTableMain:
			sd.Table = l.Table
		case model.KernelTableVRF:
			sd.Table = l.VRFTable
		case model.KernelTableEither:
			sd.Table = l.Table
			if l.VRFTable != 0 {
				sd.Table = l.VRFTable
			}
		}
		if sd.Table == 0 {
			return sd, sd.Action + " without a table"
		}
	case model.ParamSegs:
		if l.SRHWhy != "" {
			return sd, l.SRHWhy
		}
		// The outer source as the kernel's seg6local writes it (set_tun_src): `ip sr tunsrc`, else
		// its source address selection for the first segment with the route's own device as the
		// outgoing interface, which is not always the source of a route lookup for that segment.
		sd.Segs, sd.Src = l.SRH, tunsrc
		if !tunsrc.IsValid() && len(l.SRH) > 0 {
			if r.Oif == 0 {
				return sd, "End.B6.Encaps route without a device (the kernel takes the outer source on it)"
			}
			src, why := addrs.source(int(r.Oif), l.SRH[0])
			if why != "" {
				return sd, why
			}
			sd.Src = src
		}
	}
	one := model.State{SIDs: []model.SID{sd}}
	if err := model.Validate(&one); err != nil {
		return sd, err.Error()
	}
	return one.SIDs[0], ""
}

// localFlavorsOf sets sd's flavors from the route's SEG6_LOCAL_FLAVORS, or says which flavor it does
// not mirror. The kernel takes next-csid on End and End.X and psp on End only (usp and usd it rejects
// with EOPNOTSUPP), and ignores the attribute on every other action (it is then neither kept nor
// dumped): anything else seen here is refused rather than given a meaning the kernel may not have.
func localFlavorsOf(l *seg6Local, sd *model.SID) string {
	ops := l.Flavors
	end := l.Action == 1 // End; End.X is 2
	if ops&flvNextCSID != 0 && (end || l.Action == 2) {
		// On End with psp,next-csid the kernel never runs PSP: NEXT-C-SID goes first and falls back
		// to the classic End, not to the PSP path (docs/design/usid-kernel.md 2.4). Mirrored as it
		// behaves: next-csid alone.
		if end {
			ops &^= flvPSP
		}
		ops &^= flvNextCSID
		sd.Flavors = []string{model.FlavorNextCSID}
		sd.LBLen, sd.NFLen = l.LBLen, l.NFLen
	}
	if ops&flvPSP != 0 && end {
		// PSP alone (docs/design/usid-kernel.md 2.2); the kernel reads no lengths for it.
		ops &^= flvPSP
		sd.Flavors = []string{model.FlavorPSP}
	}
	names := flavorNames(ops)
	if len(names) == 0 {
		return ""
	}
	what := "flavor " + names[0] + " on " + localActionName(l.Action) + " is"
	if len(names) > 1 {
		what = "flavors " + strings.Join(names, ", ") + " on " + localActionName(l.Action) + " are"
	}
	return what + " not mirrored (the kernel runs next-csid on End and End.X, psp on End, no other)"
}
