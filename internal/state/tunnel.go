package state

// tunnel.go: how big a tenant packet an encap route can carry: the outer header its policy adds, and
// the egress MTU the kernel's FIB gives towards its first SID (what bpf_fib_lookup checks), read live
// when routes are shown.

import (
	"fmt"
	"net/netip"

	"github.com/vishvananda/netlink"
)

// EncapOverhead is the length of the outer IPv6 header + SRH that a route of this mode with nsegs SIDs
// puts in front of a tenant packet (H.Encaps lists every SID in the SRH; H.Encaps.Red all but the
// first, and no SRH at all for one SID).
func EncapOverhead(mode string, nsegs int) int {
	listed := nsegs
	if mode == ModeEncapRed {
		listed--
	}
	if listed <= 0 {
		return 40
	}
	return 40 + 8 + 16*listed
}

// Path is where packets towards a first SID leave and the MTU there: the route's MTU (a path MTU
// learned from the fabric, or an mtu metric) or else the interface's.
type Path struct {
	Egress string
	MTU    int
}

// PathFinder looks up the egress towards a first SID from a source.
type PathFinder func(dst, src netip.Addr) (Path, error)

// KernelPath asks the kernel of the current network namespace (as `ip -6 route get DST from SRC`).
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
	return p, nil
}

// FillPaths sets Egress and TunnelMTU of every encap route from find (one lookup per first SID and
// source). A route whose path is unknown gets the reason in Egress and TunnelMTU 0.
func FillPaths(routes []Route, find PathFinder) {
	type key struct{ dst, src netip.Addr }
	seen := map[key]Path{}
	errs := map[key]error{}
	for i := range routes {
		r := &routes[i]
		if r.Mode == ModePass || len(r.Segs) == 0 {
			continue
		}
		k := key{r.Segs[0], r.UsedSrc}
		p, ok := seen[k]
		err := errs[k]
		if !ok && err == nil {
			p, err = find(k.dst, k.src)
			if err != nil {
				errs[k] = err
			} else {
				seen[k] = p
			}
		}
		if err != nil {
			r.Egress, r.TunnelMTU = "unknown: "+err.Error(), 0
			continue
		}
		r.Egress = p.Egress
		r.TunnelMTU = max(p.MTU-EncapOverhead(r.Mode, len(r.Segs)), 0)
	}
}
