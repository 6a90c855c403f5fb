package daemon

// bgp.go: the daemon's BGP speaker (internal/bgp), and the kernel routes a tenant with
// vpn.advertise_kernel advertises.

import (
	"context"
	"net/netip"
	"path/filepath"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	pb "github.com/seg6x/seg6x/api/seg6xv1"
	"github.com/seg6x/seg6x/internal/api"
	"github.com/seg6x/seg6x/internal/bgp"
	"github.com/seg6x/seg6x/internal/core"
)

// bgpPeerFile, in the instance directory, keeps what each BGP neighbor negotiated across restarts (a
// neighbor known to take VPNv4 routes with IPv6 next hops gets them in its first session's first
// UPDATEs: one that keeps this node's routes under graceful restart never sees them withdrawn).
const bgpPeerFile = "bgp-neighbors.json"

// startBGP runs the speaker (idle while the state has no bgp: section); the returned func stops it.
func startBGP(ctx context.Context, ctl *core.Controller, srv *api.Server, o *Options) func() {
	sp := bgp.New(ctl, bgp.Options{Logf: o.logf, Logger: o.logger(), KernelRoutes: kernelRoutes, IsLocal: deliveredLocally,
		PeerFile: filepath.Join(o.Dir, bgpPeerFile)})
	srv.SetBGP(func(routes bool) *pb.BgpReply { return sp.Report(routes) })
	srv.SetBGPRoutes(func() (uint64, uint64, uint64) {
		n := sp.RouteCounts()
		return n.Learned, n.Installed, n.Refused
	})
	bctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); sp.Run(bctx) }()
	return func() { cancel(); <-done }
}

// kernelRoutes lists the unicast routes of a kernel table (not the default route, not routes with a
// lightweight tunnel: those are seg6x's or the kernel's own SRv6 policies).
func kernelRoutes(table uint32) ([]netip.Prefix, error) {
	rs, err := netlink.RouteListFiltered(netlink.FAMILY_ALL, &netlink.Route{Table: int(table)}, netlink.RT_FILTER_TABLE)
	if err != nil {
		return nil, err
	}
	var out []netip.Prefix
	for _, r := range rs {
		if r.Dst == nil || r.Type != unix.RTN_UNICAST || r.Encap != nil {
			continue
		}
		a, ok := netip.AddrFromSlice(r.Dst.IP)
		if !ok {
			continue
		}
		ones, _ := r.Dst.Mask.Size()
		p := netip.PrefixFrom(a.Unmap(), ones)
		if p.Bits() == 0 || !p.IsValid() {
			continue
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// deliveredLocally: the kernel's FIB delivers a to this node (a route of type local: one of its
// addresses, or a local route that covers it).
func deliveredLocally(a netip.Addr) bool {
	rs, err := netlink.RouteGet(a.AsSlice())
	return err == nil && len(rs) > 0 && rs[0].Type == unix.RTN_LOCAL
}
