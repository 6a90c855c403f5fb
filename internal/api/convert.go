// Package api serves the seg6x gRPC API (api/seg6xv1) on top of the state package, and gives the CLI
// a client: the daemon's socket, or the same server run in-process when no daemon is running.
package api

// convert.go: between the API's messages and the state package's objects. Parsing errors name the
// object and field like the state package's validation errors do.

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	pb "github.com/seg6x/seg6x/api/seg6xv1"
	"github.com/seg6x/seg6x/internal/model"
	"github.com/seg6x/seg6x/internal/state"
)

type parser struct {
	obj  string
	errs model.Errors
}

func (p *parser) fail(field, format string, args ...any) {
	p.errs = append(p.errs, &model.FieldError{Object: p.obj, Field: field, Reason: fmt.Sprintf(format, args...)})
}

func (p *parser) addr(field, s string, optional bool) netip.Addr {
	if s == "" {
		if !optional {
			p.fail(field, "missing")
		}
		return netip.Addr{}
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		p.fail(field, "%q is not an IP address", s)
	}
	return a
}

// addrs parses a list of addresses, named field[i] in errors.
func (p *parser) addrs(field string, ss []string) []netip.Addr {
	var out []netip.Addr
	for i, s := range ss {
		a, err := netip.ParseAddr(s)
		if err != nil { // p.addr reports it; the element's name is only made then
			a = p.addr(fmt.Sprintf("%s[%d]", field, i), s, false)
		}
		out = append(out, a)
	}
	return out
}

func (p *parser) prefix(field, s string, optional bool) netip.Prefix {
	if s == "" {
		if !optional {
			p.fail(field, "missing")
		}
		return netip.Prefix{}
	}
	pf, err := netip.ParsePrefix(s)
	if err != nil {
		p.fail(field, "%q is not a prefix (ADDR/LEN)", s)
	}
	return pf
}

// vlan is a VLAN ID field, refused as every front end refuses one (state.VLANProblem).
func (p *parser) vlan(v uint32) uint16 {
	if why := model.VLANProblem(strconv.FormatUint(uint64(v), 10)); why != "" {
		p.fail("vlan", "%s", why)
	}
	return uint16(v)
}

func (p *parser) u16(field string, v uint32, max uint32) uint16 {
	if v > max {
		p.fail(field, "%d is more than %d", v, max)
	}
	return uint16(v)
}

func (p *parser) err() error {
	if len(p.errs) == 0 {
		return nil
	}
	return p.errs
}

// errOf is err for a parser made without obj, naming every problem name() (made only when there
// is one: routes come by the million).
func (p *parser) errOf(name func() string) error {
	if len(p.errs) == 0 {
		return nil
	}
	obj := name()
	for _, e := range p.errs {
		if fe, ok := e.(*model.FieldError); ok {
			fe.Object = obj
		}
	}
	return p.errs
}

func routeFromPB(r *pb.Route) (model.Route, error) {
	p := &parser{}
	out := routeFields(p, r)
	if r.GetPrefix() == "" {
		p.fail("prefix", "missing")
	} else if pf, err := netip.ParsePrefix(r.GetPrefix()); err != nil {
		p.fail("prefix", "%q is not a prefix (ADDR/LEN)", r.GetPrefix())
	} else {
		out.Prefix = pf
	}
	return out, p.errOf(func() string { return "route " + r.GetPrefix() + " tenant " + r.GetTenant() })
}

// routeFields converts every field of r but its prefix.
func routeFields(p *parser, r *pb.Route) model.Route {
	out := model.Route{Tenant: r.GetTenant(), Mode: r.GetMode()}
	out.Segs = p.addrs("segs", r.GetSegs())
	out.USIDs = usidsFromPB(p, "usids", r.GetUsids())
	out.Src = p.addr("src", r.GetSrc(), true)
	if r.GetHoplimit() > 255 {
		p.fail("hoplimit", "%d is more than 255", r.GetHoplimit())
	}
	out.HopLimit = uint8(r.GetHoplimit())
	out.Policy = r.GetPolicy()
	return out
}

// maxSetErrors bounds the prefixes a route set's errors name (the rest are counted).
const maxSetErrors = 10

// routeSetFromPB converts a route set; for a deletion (del) only the tenant and the prefixes count.
func routeSetFromPB(rs *pb.RouteSet, del bool) (*state.RouteSet, error) {
	r := rs.GetRoute()
	p := &parser{obj: fmt.Sprintf("route set of tenant %q", r.GetTenant())}
	if r == nil {
		p.fail("route", "missing (the fields every route of the set shares: tenant, segs, ...)")
		return nil, p.err()
	}
	out := &state.RouteSet{}
	if del {
		out.Route.Tenant = r.GetTenant()
	} else {
		out.Route = routeFields(p, r)
	}
	if r.GetPrefix() != "" {
		p.fail("route.prefix", "%q: leave it empty, the set's prefixes give each route its own", r.GetPrefix())
	}
	p4, p6 := rs.GetPrefixes4(), rs.GetPrefixes6()
	if len(p4)%5 != 0 {
		p.fail("prefixes4", "%d bytes: not whole 5-byte prefixes (4 address bytes, then the length)", len(p4))
	}
	if len(p6)%17 != 0 {
		p.fail("prefixes6", "%d bytes: not whole 17-byte prefixes (16 address bytes, then the length)", len(p6))
	}
	if len(rs.GetPrefixes())+len(p4)+len(p6) == 0 {
		p.fail("prefixes", "missing (one prefix per route)")
	}
	n := len(rs.GetPrefixes()) + len(p4)/5 + len(p6)/17
	out.Prefixes = make([]netip.Prefix, 0, n)
	bad := 0
	badOne := func(field string, i int, format string, args ...any) {
		if bad++; bad <= maxSetErrors {
			p.fail(fmt.Sprintf("%s[%d]", field, i), format, args...)
		}
	}
	for i, s := range rs.GetPrefixes() {
		pf, err := netip.ParsePrefix(s)
		if err != nil {
			badOne("prefixes", i, "%q is not a prefix (ADDR/LEN)", s)
		}
		out.Prefixes = append(out.Prefixes, pf)
	}
	for i := 0; i+5 <= len(p4); i += 5 {
		if bits := int(p4[i+4]); bits > 32 {
			badOne("prefixes4", i/5, "length %d (at most 32)", bits)
		}
		out.Prefixes = append(out.Prefixes, netip.PrefixFrom(netip.AddrFrom4([4]byte(p4[i:i+4])), int(p4[i+4])))
	}
	for i := 0; i+17 <= len(p6); i += 17 {
		if bits := int(p6[i+16]); bits > 128 {
			badOne("prefixes6", i/17, "length %d (at most 128)", bits)
		}
		out.Prefixes = append(out.Prefixes, netip.PrefixFrom(netip.AddrFrom16([16]byte(p6[i:i+16])), int(p6[i+16])))
	}
	if bad > maxSetErrors {
		p.fail("prefixes", "%d more are not prefixes", bad-maxSetErrors)
	}
	return out, p.err()
}

func usidsFromPB(p *parser, field string, u *pb.USIDList) *model.USIDList {
	if u == nil {
		return nil
	}
	out := &model.USIDList{Block: p.prefix(field+".block", u.GetBlock(), false), IDs: u.GetIds()}
	if u.GetNf() > 255 {
		p.fail(field+".nf", "%d bits: a uSID is a multiple of 8 bits, from 8 to 120", u.GetNf())
	}
	out.NF = uint8(u.GetNf())
	return out
}

func usidsToPB(u *model.USIDList) *pb.USIDList {
	if u == nil {
		return nil
	}
	out := &pb.USIDList{Block: u.Block.String(), Nf: uint32(u.NF), Ids: u.IDs}
	if !u.Block.IsValid() {
		out.Block = ""
	}
	return out
}

func policyFromPB(pp *pb.Policy) (model.Policy, error) {
	p := &parser{obj: fmt.Sprintf("policy %q", pp.GetName())}
	out := model.Policy{Name: pp.GetName(), Mode: pp.GetMode(), Src: p.addr("src", pp.GetSrc(), true)}
	if pp.GetHoplimit() > 255 {
		p.fail("hoplimit", "%d is more than 255", pp.GetHoplimit())
	}
	out.HopLimit = uint8(pp.GetHoplimit())
	for i, l := range pp.GetLists() {
		sl := model.SegList{Weight: l.GetWeight(), Down: l.GetDown(), USIDs: usidsFromPB(p, fmt.Sprintf("lists[%d].usids", i), l.GetUsids())}
		sl.Segs = p.addrs(fmt.Sprintf("lists[%d].segs", i), l.GetSegs())
		out.Lists = append(out.Lists, sl)
	}
	return out, p.err()
}

func policyToPB(p *model.Policy) *pb.Policy {
	out := &pb.Policy{Name: p.Name, Mode: p.Mode, Hoplimit: uint32(p.HopLimit), Origin: string(p.Origin)}
	if p.Src.IsValid() {
		out.Src = p.Src.String()
	}
	for _, l := range p.Lists {
		sl := &pb.SegList{Weight: l.Weight, Down: l.Down, Usids: usidsToPB(l.USIDs)}
		for _, s := range l.Segs {
			sl.Segs = append(sl.Segs, s.String())
		}
		if l.PolicyID != [2]uint32{} {
			sl.PolicyId = l.PolicyID[:]
		}
		out.Lists = append(out.Lists, sl)
	}
	return out
}

func routeToPB(r *model.Route) *pb.Route {
	out := &pb.Route{Tenant: r.Tenant, Prefix: r.Prefix.String(), Mode: r.Mode, Hoplimit: uint32(r.HopLimit),
		PolicyId: r.ID, TunnelMtu: uint32(r.TunnelMTU), Egress: r.Egress, Origin: string(r.Origin)}
	for _, s := range r.Segs {
		out.Segs = append(out.Segs, s.String())
	}
	if r.Src.IsValid() {
		out.Src = r.Src.String()
	}
	if r.UsedSrc.IsValid() {
		out.UsedSrc = r.UsedSrc.String()
	}
	out.Usids = usidsToPB(r.USIDs)
	out.Policy = r.Policy
	return out
}

func tenantFromPB(t *pb.Tenant) (model.Tenant, error) {
	p := &parser{obj: fmt.Sprintf("tenant %q", t.GetName())}
	out := model.Tenant{Name: t.GetName(), Table: t.GetTable(), Ports: []model.Port{}, KernelFallback: t.GetKernelFallback()}
	for _, pt := range t.GetPorts() {
		out.Ports = append(out.Ports, model.Port{Dev: pt.GetDev(), VLAN: p.vlan(pt.GetVlan())})
	}
	out.Gateway = p.addrs("gateway", t.GetGateway())
	out.MSSClamp = t.GetMssClamp()
	out.VPN = vpnFromPB(p, t.GetVpn())
	return out, p.err()
}

func tenantToPB(t *model.Tenant) *pb.Tenant {
	out := &pb.Tenant{Name: t.Name, Table: t.Table, Origin: string(t.Origin), KernelFallback: t.KernelFallback, MssClamp: t.MSSClamp,
		Vpn: vpnToPB(t.VPN)}
	for _, g := range t.Gateway {
		out.Gateway = append(out.Gateway, g.String())
	}
	for _, pt := range t.Ports {
		out.Ports = append(out.Ports, &pb.Port{Dev: pt.Dev, Vlan: uint32(pt.VLAN)})
	}
	return out
}

func sidFromPB(s *pb.Sid) (model.SID, error) {
	p := &parser{obj: fmt.Sprintf("sid %s", s.GetSid())}
	out := model.SID{Action: s.GetAction(), Table: s.GetTable(), Tenant: s.GetTenant(), Flavors: s.GetFlavors(),
		Plugin: s.GetPlugin(), Config: s.GetConfig()}
	if strings.Contains(s.GetSid(), "/") {
		a, bits, err := model.ParseSID(s.GetSid())
		if err != nil {
			p.fail("sid", "%q is not an IPv6 address or prefix", s.GetSid())
		}
		out.SID, out.Bits = a, bits
	} else {
		out.SID = p.addr("sid", s.GetSid(), false)
	}
	out.LBLen = uint8(p.u16("lblen", s.GetLblen(), 128))
	out.NFLen = uint8(p.u16("nflen", s.GetNflen(), 128))
	out.NH4 = p.addr("nh4", s.GetNh4(), true)
	out.NH6 = p.addr("nh6", s.GetNh6(), true)
	out.VLAN = p.vlan(s.GetVlan())
	out.Segs = p.addrs("segs", s.GetSegs())
	out.Src = p.addr("src", s.GetSrc(), true)
	return out, p.err()
}

func sidToPB(s *model.SID) *pb.Sid {
	out := &pb.Sid{Sid: s.Name(), Action: s.Action, Table: s.Table, Tenant: s.Tenant, Vlan: uint32(s.VLAN), Id: s.ID,
		Origin: string(s.Origin), Flavors: s.Flavors, Lblen: uint32(s.LBLen), Nflen: uint32(s.NFLen)}
	if s.NH4.IsValid() {
		out.Nh4 = s.NH4.String()
	}
	if s.NH6.IsValid() {
		out.Nh6 = s.NH6.String()
	}
	for _, a := range s.Segs {
		out.Segs = append(out.Segs, a.String())
	}
	if s.Src.IsValid() {
		out.Src = s.Src.String()
	}
	out.Policy = s.Policy
	out.Plugin, out.Config, out.Bind = s.Plugin, s.Config, s.Bind
	return out
}

func pluginFromPB(p *pb.Plugin) model.Plugin {
	return model.Plugin{Name: p.GetName(), File: p.GetFile(), Object: p.GetObject()}
}

func pluginToPB(p *model.Plugin) *pb.Plugin {
	return &pb.Plugin{Name: p.Name, File: p.File, Object: p.Object, Digest: p.Digest}
}

func ifaceToPB(i *model.Interface) *pb.Interface {
	return &pb.Interface{Name: i.Name, Mode: i.Mode, Role: i.Role, Ifindex: int32(i.Ifindex), XdpFeatures: i.XDPFeatures, MultiBuffer: i.MultiBuffer}
}

func ifaceFromPB(i *pb.Interface) model.Interface {
	return model.Interface{Name: i.GetName(), Mode: i.GetMode(), Role: i.GetRole()}
}

func prefixes(p *parser, field string, in []string) []netip.Prefix {
	var out []netip.Prefix
	for i, s := range in {
		if pf := p.prefix(fmt.Sprintf("%s[%d]", field, i), s, false); pf.IsValid() {
			out = append(out, pf)
		}
	}
	return out
}

func domainFromPB(d *pb.Domain) (model.Domain, error) {
	p := &parser{obj: "domain"}
	out := model.Domain{Locators: prefixes(p, "locators", d.GetLocators()), Sources: prefixes(p, "sources", d.GetSources())}
	return out, p.err()
}

func domainToPB(d *model.Domain) *pb.Domain {
	out := &pb.Domain{}
	for _, l := range d.Locators {
		out.Locators = append(out.Locators, l.String())
	}
	for _, s := range d.Sources {
		out.Sources = append(out.Sources, s.String())
	}
	return out
}

// PortClassesToPB converts the boundary classification of every port.
func PortClassesToPB(pcs []model.PortClass) []*pb.PortClass {
	out := make([]*pb.PortClass, 0, len(pcs))
	for _, c := range pcs {
		out = append(out, &pb.PortClass{Dev: c.Dev, Ifindex: int32(c.Ifindex), Vlan: int32(c.VLAN), Side: c.Side,
			Tenant: c.Tenant, Why: c.Why})
	}
	return out
}

// PortClassesFromPB converts the port classes of a status reply.
func PortClassesFromPB(pcs []*pb.PortClass) []model.PortClass {
	out := make([]model.PortClass, 0, len(pcs))
	for _, c := range pcs {
		out = append(out, model.PortClass{Dev: c.GetDev(), Ifindex: int(c.GetIfindex()), VLAN: int(c.GetVlan()), Side: c.GetSide(),
			Tenant: c.GetTenant(), Why: c.GetWhy()})
	}
	return out
}

// OpsFromPB converts a batch; an error names the operation it is in.
func OpsFromPB(ops []*pb.Op) ([]state.Op, error) {
	out := make([]state.Op, 0, len(ops))
	for i, o := range ops {
		op, err := opFromPB(o)
		if err != nil {
			return nil, &state.OpError{Index: i, Op: op, Err: err}
		}
		out = append(out, op)
	}
	return out, nil
}

func opFromPB(o *pb.Op) (state.Op, error) {
	var op state.Op
	switch o.GetKind() {
	case pb.Op_ADD:
		op.Kind = model.OpAdd
	case pb.Op_REPLACE:
		op.Kind = model.OpReplace
	case pb.Op_DELETE:
		op.Kind = model.OpDelete
	default:
		return op, &model.FieldError{Object: "kind", Reason: fmt.Sprintf("want ADD, REPLACE or DELETE, got %v", o.GetKind())}
	}
	switch obj := o.GetObject().(type) {
	case *pb.Op_Options:
		op.Options = &model.Options{NextHopCacheMs: obj.Options.GetNexthopCacheMs()}
	case *pb.Op_Interface:
		it := ifaceFromPB(obj.Interface)
		op.Interface = &it
	case *pb.Op_Domain:
		d, err := domainFromPB(obj.Domain)
		if err != nil {
			return op, err
		}
		op.Domain = &d
	case *pb.Op_Tenant:
		t, err := tenantFromPB(obj.Tenant)
		if err != nil {
			return op, err
		}
		op.Tenant = &t
	case *pb.Op_Route:
		r, err := routeFromPB(obj.Route)
		if err != nil && op.Kind != model.OpDelete {
			return op, err
		}
		op.Route = &r
	case *pb.Op_RouteSet:
		rs, err := routeSetFromPB(obj.RouteSet, op.Kind == model.OpDelete)
		if err != nil {
			return op, err
		}
		op.RouteSet = rs
	case *pb.Op_Sid:
		s, err := sidFromPB(obj.Sid)
		if err != nil && !(op.Kind == model.OpDelete && s.SID.IsValid()) {
			return op, err
		}
		op.SID = &s
	case *pb.Op_Bgp:
		b, err := bgpFromPB(obj.Bgp)
		if err != nil && op.Kind != model.OpDelete {
			return op, err
		}
		if b == nil {
			b = &model.BGP{}
		}
		op.BGP = b
	case *pb.Op_Plugin:
		pl := pluginFromPB(obj.Plugin)
		op.Plugin = &pl
	case *pb.Op_Policy:
		pp, err := policyFromPB(obj.Policy)
		if err != nil && op.Kind != model.OpDelete {
			return op, err
		}
		op.Policy = &pp
	case *pb.Op_TenantRoutes:
		tr := &state.TenantRoutes{Tenant: obj.TenantRoutes.GetTenant()}
		var errs model.Errors
		for _, r := range obj.TenantRoutes.GetRoutes() {
			rr, err := routeFromPB(r)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			tr.Routes = append(tr.Routes, rr)
		}
		if len(errs) > 0 {
			return op, errs
		}
		op.TenantRoutes = tr
	default:
		return op, &model.FieldError{Object: "object", Reason: "missing (set one of options, domain, interface, tenant, route, route_set, sid, tenant_routes, bgp, policy)"}
	}
	return op, nil
}

// OpToPB converts one operation for a client to send.
func OpToPB(op state.Op) *pb.Op {
	out := &pb.Op{}
	switch op.Kind {
	case model.OpAdd:
		out.Kind = pb.Op_ADD
	case model.OpReplace:
		out.Kind = pb.Op_REPLACE
	case model.OpDelete:
		out.Kind = pb.Op_DELETE
	}
	switch {
	case op.Options != nil:
		out.Object = &pb.Op_Options{Options: &pb.Options{NexthopCacheMs: op.Options.NextHopCacheMs}}
	case op.Domain != nil:
		out.Object = &pb.Op_Domain{Domain: domainToPB(op.Domain)}
	case op.Interface != nil:
		out.Object = &pb.Op_Interface{Interface: ifaceToPB(op.Interface)}
	case op.Tenant != nil:
		out.Object = &pb.Op_Tenant{Tenant: tenantToPB(op.Tenant)}
	case op.Route != nil:
		out.Object = &pb.Op_Route{Route: routeToPB(op.Route)}
	case op.RouteSet != nil:
		rs := &pb.RouteSet{Route: routeToPB(&op.RouteSet.Route), Prefixes: make([]string, len(op.RouteSet.Prefixes))}
		rs.Route.Prefix = ""
		for i, p := range op.RouteSet.Prefixes {
			rs.Prefixes[i] = p.String()
		}
		out.Object = &pb.Op_RouteSet{RouteSet: rs}
	case op.SID != nil:
		out.Object = &pb.Op_Sid{Sid: sidToPB(op.SID)}
	case op.BGP != nil:
		out.Object = &pb.Op_Bgp{Bgp: bgpToPB(op.BGP)}
	case op.Policy != nil:
		out.Object = &pb.Op_Policy{Policy: policyToPB(op.Policy)}
	case op.Plugin != nil:
		out.Object = &pb.Op_Plugin{Plugin: pluginToPB(op.Plugin)}
	case op.TenantRoutes != nil:
		tr := &pb.TenantRoutes{Tenant: op.TenantRoutes.Tenant}
		for i := range op.TenantRoutes.Routes {
			tr.Routes = append(tr.Routes, routeToPB(&op.TenantRoutes.Routes[i]))
		}
		out.Object = &pb.Op_TenantRoutes{TenantRoutes: tr}
	}
	return out
}

// StateFromPB converts a whole desired state.
func StateFromPB(s *pb.State) (model.State, error) {
	out := model.State{Options: model.Options{NextHopCacheMs: s.GetOptions().GetNexthopCacheMs()}}
	var errs model.Errors
	d, err := domainFromPB(s.GetDomain())
	if err != nil {
		errs = append(errs, err)
	}
	out.Domain = d
	if out.BGP, err = bgpFromPB(s.GetBgp()); err != nil {
		errs = append(errs, err)
	}
	for _, i := range s.GetInterfaces() {
		out.Interfaces = append(out.Interfaces, ifaceFromPB(i))
	}
	for _, t := range s.GetTenants() {
		tt, err := tenantFromPB(t)
		if err != nil {
			errs = append(errs, err)
		}
		out.Tenants = append(out.Tenants, tt)
	}
	for _, r := range s.GetRoutes() {
		rr, err := routeFromPB(r)
		if err != nil {
			errs = append(errs, err)
		}
		out.Routes = append(out.Routes, rr)
	}
	for _, sd := range s.GetSids() {
		ss, err := sidFromPB(sd)
		if err != nil {
			errs = append(errs, err)
		}
		out.SIDs = append(out.SIDs, ss)
	}
	for _, pp := range s.GetPolicies() {
		p, err := policyFromPB(pp)
		if err != nil {
			errs = append(errs, err)
		}
		out.Policies = append(out.Policies, p)
	}
	for _, pl := range s.GetPlugins() {
		out.Plugins = append(out.Plugins, pluginFromPB(pl))
	}
	if len(errs) > 0 {
		return out, errs
	}
	return out, nil
}

// StateToPB converts a whole state.
func StateToPB(s *model.State) *pb.State {
	out := &pb.State{Options: &pb.Options{NexthopCacheMs: s.Options.NextHopCacheMs}, Domain: domainToPB(&s.Domain),
		Bgp: bgpToPB(s.BGP)}
	for i := range s.Interfaces {
		out.Interfaces = append(out.Interfaces, ifaceToPB(&s.Interfaces[i]))
	}
	for i := range s.Tenants {
		out.Tenants = append(out.Tenants, tenantToPB(&s.Tenants[i]))
	}
	for i := range s.Routes {
		out.Routes = append(out.Routes, routeToPB(&s.Routes[i]))
	}
	for i := range s.SIDs {
		out.Sids = append(out.Sids, sidToPB(&s.SIDs[i]))
	}
	for i := range s.Policies {
		out.Policies = append(out.Policies, policyToPB(&s.Policies[i]))
	}
	for i := range s.Plugins {
		out.Plugins = append(out.Plugins, pluginToPB(&s.Plugins[i]))
	}
	return out
}

// StateFromChunks reassembles a streamed Show.
func StateFromChunks(chunks []*pb.StateChunk) (model.State, uint64, error) {
	all := &pb.State{}
	var gen uint64
	for i, c := range chunks {
		if i == 0 {
			all.Options, all.Domain, all.Bgp, gen = c.GetState().GetOptions(), c.GetState().GetDomain(), c.GetState().GetBgp(), c.GetGeneration()
		}
		all.Interfaces = append(all.Interfaces, c.GetState().GetInterfaces()...)
		all.Tenants = append(all.Tenants, c.GetState().GetTenants()...)
		all.Routes = append(all.Routes, c.GetState().GetRoutes()...)
		all.Sids = append(all.Sids, c.GetState().GetSids()...)
		all.Policies = append(all.Policies, c.GetState().GetPolicies()...)
		all.Plugins = append(all.Plugins, c.GetState().GetPlugins()...)
	}
	s, err := StateFromPB(all)
	if err != nil {
		return s, gen, err
	}
	// Output-only fields.
	for i, r := range all.Routes {
		s.Routes[i].ID = r.GetPolicyId()
		if a, err := netip.ParseAddr(r.GetUsedSrc()); err == nil {
			s.Routes[i].UsedSrc = a
		}
		s.Routes[i].TunnelMTU, s.Routes[i].Egress = int(r.GetTunnelMtu()), r.GetEgress()
		s.Routes[i].Origin = model.Origin(r.GetOrigin())
	}
	for i, sd := range all.Sids {
		s.SIDs[i].ID, s.SIDs[i].Origin = sd.GetId(), model.Origin(sd.GetOrigin())
		s.SIDs[i].Policy, s.SIDs[i].Bind = sd.GetPolicy(), sd.GetBind()
	}
	for i, pl := range all.Plugins {
		s.Plugins[i].Digest = pl.GetDigest()
	}
	for i, pp := range all.Policies {
		s.Policies[i].Origin = model.Origin(pp.GetOrigin())
		for j, l := range pp.GetLists() {
			if ids := l.GetPolicyId(); len(ids) == 2 {
				s.Policies[i].Lists[j].PolicyID = [2]uint32{ids[0], ids[1]}
			}
		}
	}
	for i, t := range all.Tenants {
		s.Tenants[i].Origin = model.Origin(t.GetOrigin())
		if v := s.Tenants[i].VPN; v != nil {
			v.ServiceSID, _ = netip.ParseAddr(t.GetVpn().GetServiceSid())
		}
	}
	for i, it := range all.Interfaces {
		s.Interfaces[i].Ifindex = int(it.GetIfindex())
		s.Interfaces[i].XDPFeatures = it.GetXdpFeatures()
		s.Interfaces[i].MultiBuffer = it.GetMultiBuffer()
	}
	return s, gen, nil
}
