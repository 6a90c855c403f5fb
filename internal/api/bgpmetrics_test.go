package api

// bgpmetrics_test.go: the BGP speaker's per-neighbor refused routes and session flaps, and its refused
// routes by reason, as the collector exports them from its report.

import (
	"testing"

	pb "github.com/seg6x/seg6x/api/seg6xv1"
)

func TestBGPRefusalAndFlapMetrics(t *testing.T) {
	srv, _, scrape := metricsServer(t)
	srv.SetBGP(func(bool) *pb.BgpReply {
		return &pb.BgpReply{Running: true, Neighbors: []*pb.BgpNeighbor{
			{Address: "fc00:9::1", State: "established", Received: 6, Accepted: 6, Refused: 2, Advertised: 2, Flaps: 3},
			{Address: "fc00:9::2", State: "active"}},
			RefusedRoutes: map[string]uint64{"rt_not_imported": 5, "local_prefix": 1, "bad_sid": 0}}
	})
	ss := scrape()
	ss.want(t, 2, "seg6x_bgp_neighbor_routes", "neighbor", "fc00:9::1", "direction", "refused")
	ss.want(t, 0, "seg6x_bgp_neighbor_routes", "neighbor", "fc00:9::2", "direction", "refused")
	ss.want(t, 3, "seg6x_bgp_neighbor_flaps_total", "neighbor", "fc00:9::1")
	ss.want(t, 0, "seg6x_bgp_neighbor_flaps_total", "neighbor", "fc00:9::2")
	ss.want(t, 5, "seg6x_bgp_refused_routes_total", "reason", "rt_not_imported")
	ss.want(t, 1, "seg6x_bgp_refused_routes_total", "reason", "local_prefix")
	ss.want(t, 0, "seg6x_bgp_refused_routes_total", "reason", "bad_sid")
}
