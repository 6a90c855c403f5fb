package state

// tunnel.go: how big a tenant packet an encap route can carry: the outer header its policy adds, and
// the egress MTU the kernel's FIB gives towards its first SID (what bpf_fib_lookup checks), read live
// when routes are shown.

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/seg6x/seg6x/internal/model"
	"github.com/vishvananda/netlink"
)

// EncapOverhead is the length of the outer IPv6 header + SRH that a route of this mode with nsegs SIDs
// puts in front of a tenant packet (H.Encaps lists every SID in the SRH; H.Encaps.Red all but the
// first, and no SRH at all for one SID).
func EncapOverhead(mode string, nsegs int) int {
	listed := nsegs
	if mode == model.ModeEncapRed {
		listed--
	}
	if listed <= 0 {
		return 40
	}
	return 40 + 8 + 16*listed
}

// Path is where packets towards a first SID leave and the MTU there: the route's MTU (a path MTU
// learned from the fabric, or an mtu metric) or else the interface's. For a multipath (ECMP) route,
// Egress names every next hop's interface (comma-separated, in the route's order) and MTU is the
// smallest of theirs: a flow may take any of them.
type Path struct {
	Egress string
	MTU    int
}

// PathFinder looks up the egress towards a first SID from a source.
type PathFinder func(dst, src netip.Addr) (Path, error)

// KernelPath asks the kernel of the current network namespace (as `ip -6 route get DST from SRC`,
// then `ip -6 route get fibmatch DST from SRC` for the next hops of the route it matched).
func KernelPath(dst, src netip.Addr) (Path, error) {
	opts := &netlink.RouteGetOptions{}
	if src.IsValid() {
		opts.SrcAddr = src.AsSlice()
	}
	rs, err := netlink.RouteGetWithOptions(dst.AsSlice(), opts)
	if err != nil {
		return Path{}, fmt.Errorf("route to %s from %s: %v", dst, src, err)
	}
	if len(rs) == 0 {
		return Path{}, fmt.Errorf("no route to %s", dst)
	}
	link, err := netlink.LinkByIndex(rs[0].LinkIndex)
	if err != nil {
		return Path{}, fmt.Errorf("egress ifindex %d: %v", rs[0].LinkIndex, err)
	}
	p := Path{Egress: link.Attrs().Name, MTU: link.Attrs().MTU}
	if rs[0].MTU > 0 && rs[0].MTU < p.MTU {
		p.MTU = rs[0].MTU
	}
	opts.FIBMatch = true
	if fm, err := netlink.RouteGetWithOptions(dst.AsSlice(), opts); err == nil && len(fm) == 1 && len(fm[0].MultiPath) > 1 {
		if mp, ok := multipathPath(fm[0]); ok {
			mp.MTU = min(mp.MTU, p.MTU) // a path MTU the kernel learned towards dst caps every next hop
			return mp, nil
		}
	}
	return p, nil
}

// multipathPath is the Path of every next hop of the multipath route r: their interfaces, distinct and
// sorted (the kernel lists the sibling that matched the lookup's hash first), and the smallest MTU (the route's mtu metric caps them all). ok is false when a next hop's interface
// cannot be read.
func multipathPath(r netlink.Route) (Path, bool) {
	var names []string
	mtu := 0
	for _, nh := range r.MultiPath {
		link, err := netlink.LinkByIndex(nh.LinkIndex)
		if err != nil {
			return Path{}, false
		}
		a := link.Attrs()
		if !slices.Contains(names, a.Name) {
			names = append(names, a.Name)
		}
		if m := a.MTU; mtu == 0 || m < mtu {
			mtu = m
		}
	}
	if r.MTU > 0 && r.MTU < mtu {
		mtu = r.MTU
	}
	slices.Sort(names)
	return Path{Egress: strings.Join(names, ","), MTU: mtu}, true
}

// FillPaths sets Egress and TunnelMTU of every encap route from find (one lookup per first SID and
// source). A route whose path is unknown gets the reason in Egress and TunnelMTU 0. A route naming a
// policy (one of policies) gets the egresses of the policy's lists that are up and the smallest of
// their tunnel MTUs: a flow may be on any of them.
func FillPaths(routes []model.Route, policies []model.Policy, find PathFinder) {
	type key struct{ dst, src netip.Addr }
	seen := map[key]Path{}
	errs := map[key]error{}
	lookup := func(dst, src netip.Addr) (Path, error) {
		k := key{dst, src}
		p, ok := seen[k]
		err := errs[k]
		if !ok && err == nil {
			if p, err = find(dst, src); err != nil {
				errs[k] = err
			} else {
				seen[k] = p
			}
		}
		return p, err
	}
	named := map[string]*model.Policy{}
	for i := range policies {
		named[policies[i].Name] = &policies[i]
	}
	for i := range routes {
		r := &routes[i]
		if r.Policy != "" {
			if p := named[r.Policy]; p != nil {
				r.Egress, r.TunnelMTU = policyPath(p, lookup)
			}
			continue
		}
		if r.Mode == model.ModePass || len(r.Segs) == 0 {
			continue
		}
		p, err := lookup(r.Segs[0], r.UsedSrc)
		if err != nil {
			r.Egress, r.TunnelMTU = "unknown: "+err.Error(), 0
			continue
		}
		r.Egress = p.Egress
		r.TunnelMTU = max(p.MTU-EncapOverhead(r.Mode, len(r.Segs)), 0)
	}
}

// policyPath is the egresses (distinct, in list order) and smallest tunnel MTU of p's lists that are
// up; lists whose path is unknown are named with the reason (and not in the MTU).
func policyPath(p *model.Policy, lookup PathFinder) (string, int) {
	var parts []string
	mtu, up := 0, 0
	for i, l := range p.Lists {
		if l.Down || len(l.Segs) == 0 {
			continue
		}
		up++
		path, err := lookup(l.Segs[0], p.Src)
		if err != nil {
			parts = append(parts, fmt.Sprintf("list %d unknown: %v", i, err))
			continue
		}
		for _, e := range strings.Split(path.Egress, ",") {
			if !slices.Contains(parts, e) {
				parts = append(parts, e)
			}
		}
		if m := max(path.MTU-EncapOverhead(p.Mode, len(l.Segs)), 0); mtu == 0 || m < mtu {
			mtu = m
		}
	}
	if up == 0 {
		return "none: every list of policy " + p.Name + " is down", 0
	}
	return strings.Join(parts, ","), mtu
}
