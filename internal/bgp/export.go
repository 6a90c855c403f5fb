package bgp

// export.go: what the node advertises. Every tenant with a vpn: section, export route targets and a
// service SID sends its prefixes (vpn.advertise, and with vpn.advertise_kernel the kernel routes of its
// table) as VPN routes carrying the SID; and, for route target constraint (RFC 4684), one membership
// route per import route target, so peers that filter send only what some tenant imports.

import (
	"fmt"
	"maps"
	"net/netip"
	"slices"

	"github.com/google/uuid"
	"github.com/osrg/gobgp/v4/pkg/apiutil"
	gobgp "github.com/osrg/gobgp/v4/pkg/packet/bgp"

	"github.com/seg6x/seg6x/internal/model"
)

// export is one path given to the server.
type export struct {
	fp     string // what it says: a changed one is re-added
	uuid   uuid.UUID
	route  VPNRoute // VPN routes
	tenant string
}

// wantExports is every VPN route the tenants advertise, by key (RD and prefix).
func (s *Speaker) wantExports(cfg *model.BGP, tenants []model.Tenant) map[string]export {
	out := map[string]export{}
	nh := cfg.NextHop
	if !nh.IsValid() {
		nh = netip.IPv6Unspecified() // the session's local address
	}
	for _, t := range tenants {
		v := t.VPN
		if v == nil || len(v.ExportRT) == 0 || !v.ServiceSID.IsValid() {
			continue
		}
		prefixes := slices.Clone(v.Advertise)
		if v.AdvertiseKernel && s.opts.KernelRoutes != nil {
			kr, err := s.opts.KernelRoutes(t.Table)
			if err != nil {
				s.fail("bgp: tenant %q: reading the kernel routes of table %d: %v", t.Name, t.Table, err)
			}
			prefixes = append(prefixes, kr...)
		}
		rts := slices.Sorted(slices.Values(v.ExportRT))
		st := structureOf(cfg, v)
		for _, p := range prefixes {
			if (v.Behavior == EndDT4 && !p.Addr().Is4()) || (v.Behavior == EndDT6 && p.Addr().Is4()) {
				continue
			}
			r := VPNRoute{RD: v.RD, Prefix: p.Masked(), RTs: rts, NextHop: nh, SID: v.ServiceSID, Behavior: v.Behavior, Structure: st}
			key := v.RD + " " + r.Prefix.String()
			out[key] = export{fp: fmt.Sprintf("%v %t", r, cfg.Transposition), route: r, tenant: t.Name}
		}
	}
	return out
}

// structureOf is the SID structure of a tenant's service SID: block and node from its locator,
// the function after it (zero when the SID was fixed without a locator: not advertised).
func structureOf(cfg *model.BGP, v *model.VPN) SIDStructure {
	loc := v.Locator
	if !loc.IsValid() {
		loc = cfg.Locator
	}
	if !loc.IsValid() || !loc.Contains(v.ServiceSID) || int(cfg.BlockBits) > loc.Bits() {
		return SIDStructure{}
	}
	return SIDStructure{Block: cfg.BlockBits, Node: uint8(loc.Bits()) - cfg.BlockBits, Function: cfg.FunctionBits}
}

// wantMembership is the RTC membership routes: one per route target some tenant imports.
func wantMembership(cfg *model.BGP, tenants []model.Tenant) map[string]export {
	out := map[string]export{}
	for _, t := range tenants {
		if t.VPN == nil {
			continue
		}
		for _, rt := range t.VPN.ImportRT {
			out[rt] = export{fp: rt}
		}
	}
	return out
}

// syncExports gives the server what the tenants advertise, adding and withdrawing the difference.
func (s *Speaker) syncExports(cfg *model.BGP, tenants []model.Tenant) {
	s.exports = s.syncPaths(s.exports, s.wantExports(cfg, tenants), func(key string, e export) (*apiutil.Path, error) {
		return ToPath(e.route, cfg.Transposition)
	})
	s.rtc = s.syncPaths(s.rtc, wantMembership(cfg, tenants), func(rt string, _ export) (*apiutil.Path, error) {
		return membershipPath(cfg.ASN, rt)
	})
}

// syncPaths turns the server's paths have into want (by key and fingerprint); it returns what the
// server now holds. A path whose key stays but whose content changed (transposition toggled, other
// route targets, another SID) is added again over the old one: GoBGP replaces a local path of the same
// NLRI, and peers get one UPDATE that replaces the route (an implicit withdraw), never a withdrawal
// first. Only paths whose key goes are withdrawn.
func (s *Speaker) syncPaths(have, want map[string]export, build func(string, export) (*apiutil.Path, error)) map[string]export {
	var gone []uuid.UUID
	for k, e := range have {
		if _, ok := want[k]; !ok {
			gone = append(gone, e.uuid)
			delete(have, k)
		}
	}
	if len(gone) > 0 {
		if err := s.srv.DeletePath(apiutil.DeletePathRequest{UUIDs: gone}); err != nil {
			s.fail("bgp: withdrawing %d paths: %v", len(gone), err)
		}
	}
	var keys []string
	var paths []*apiutil.Path
	for k, w := range want {
		if h, ok := have[k]; ok && h.fp == w.fp {
			continue
		}
		p, err := build(k, w)
		if err != nil {
			s.fail("bgp: not advertising %s: %v", k, err)
			if h, ok := have[k]; ok {
				// What it said before is wrong now and the new one cannot be built: withdraw it.
				if err := s.srv.DeletePath(apiutil.DeletePathRequest{UUIDs: []uuid.UUID{h.uuid}}); err != nil {
					s.fail("bgp: withdrawing %s: %v", k, err)
				}
				delete(have, k)
			}
			continue
		}
		keys, paths = append(keys, k), append(paths, p)
	}
	if len(paths) == 0 {
		return have
	}
	res, err := s.srv.AddPath(apiutil.AddPathRequest{Paths: paths})
	if err != nil {
		// GoBGP answers a batch in which one path failed without the others' UUIDs (they were added):
		// add them one by one (again: each replaces itself), so each one's UUID is known.
		res = make([]apiutil.AddPathResponse, len(paths))
		for i, p := range paths {
			r, err := s.srv.AddPath(apiutil.AddPathRequest{Paths: []*apiutil.Path{p}})
			if err != nil || len(r) != 1 {
				res[i].Error = err
				continue
			}
			res[i] = r[0]
		}
	}
	for i, r := range res {
		if r.Error != nil {
			// A replaced one stays as it was (its fingerprint differs: tried again next time).
			s.fail("bgp: advertising %s: %v", keys[i], r.Error)
			continue
		}
		e := want[keys[i]]
		e.uuid = r.UUID // a replaced path's old UUID is gone from the server with it
		have[keys[i]] = e
	}
	return have
}

// membershipPath is the RTC route (RFC 4684) saying this AS imports route target rt.
func membershipPath(asn uint32, rt string) (*apiutil.Path, error) {
	ec, err := gobgp.ParseRouteTarget(toGoBGP(rt))
	if err != nil {
		return nil, err
	}
	nlri := gobgp.NewRouteTargetMembershipNLRI(asn, ec)
	mp, err := gobgp.NewPathAttributeMpReachNLRI(gobgp.RF_RTC_UC, []gobgp.PathNLRI{{NLRI: nlri}}, netip.IPv4Unspecified())
	if err != nil {
		return nil, err
	}
	return &apiutil.Path{Family: gobgp.RF_RTC_UC, Nlri: nlri, Attrs: []gobgp.PathAttributeInterface{
		gobgp.NewPathAttributeOrigin(gobgp.BGP_ORIGIN_ATTR_TYPE_IGP), mp}}, nil
}

// exportList is the advertised VPN routes, sorted (for reports).
func exportList(m map[string]export) []export {
	keys := slices.Sorted(maps.Keys(m))
	out := make([]export, 0, len(keys))
	for _, k := range keys {
		out = append(out, m[k])
	}
	return out
}
