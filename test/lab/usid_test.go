package labtest

import (
	"strings"
	"testing"

	pb "github.com/seg6x/seg6x/api/seg6xv1"
	"github.com/seg6x/seg6x/tools/lab"
	"google.golang.org/protobuf/encoding/protojson"
)

// TestLabUSID runs the lab addressed with uSID containers (`seg6x-lab demo --usid`): the same
// tenants and traffic as TestLab, every policy one container through p's uN (End, next-csid) to the
// far PE's uDT4 (tenants A and B) or uDT6 (tenant A).
func TestLabUSID(t *testing.T) {
	t.Parallel()
	const count = 5
	l, rep := labTraffic(t, "s6u", lab.Options{USID: true}, count)
	for _, p := range rep.Problems() {
		t.Error(p)
	}
	if len(rep.Flows) != 4 || len(rep.Bulk) != 2 || len(rep.Ping6) != 2 {
		t.Fatalf("%d flows, %d bulk transfers, %d IPv6 ping runs; want 4, 2, 2", len(rep.Flows), len(rep.Bulk), len(rep.Ping6))
	}
	stats := func(node string) *pb.StatsReply {
		var s pb.StatsReply
		if err := protojson.Unmarshal(rep.Stats[node], &s); err != nil {
			t.Fatal(err)
		}
		for name, c := range s.Reasons {
			if strings.HasPrefix(name, "DROP") && c.GetPackets() > 0 {
				t.Errorf("%s: %d packets dropped with %s", node, c.GetPackets(), name)
			}
		}
		return &s
	}
	// Each PE: one container per tenant and family, through p (uSID 200) to the other PE's service
	// (pe1 100, pe2 300); its uDT4/uDT6 on /64s of its locator decapsulated what the other sent.
	for node, ids := range map[string][2]string{"pe1": {"100", "300"}, "pe2": {"300", "100"}} {
		s := stats(node)
		// IPv4: pings, UDP, TCP and the bulk transfer; IPv6: count pings.
		wantPolicies := map[string]uint64{
			"fcbb:0:200:" + ids[1] + ":e004::": 3 * count, "fcbb:0:200:" + ids[1] + ":e006::": count, "fcbb:0:200:" + ids[1] + ":e104::": 3 * count}
		if len(s.Policies) != len(wantPolicies) {
			t.Errorf("%s: %d policies, want %d", node, len(s.Policies), len(wantPolicies))
		}
		for _, p := range s.Policies {
			want, ok := wantPolicies[strings.Join(p.Segs, ",")]
			if !ok || p.Count.GetPackets() < want {
				t.Errorf("%s: policy %d segs %v counted %d packets; want one of the containers %v, >= %d packets", node, p.Id, p.Segs, p.Count.GetPackets(), wantPolicies, want)
			}
		}
		wantSIDs := map[string]string{"fcbb:0:" + ids[0] + ":e004::/64": "End.DT4", "fcbb:0:" + ids[0] + ":e006::/64": "End.DT6",
			"fcbb:0:" + ids[0] + ":e104::/64": "End.DT4"}
		if len(s.Sids) != len(wantSIDs) {
			t.Errorf("%s: %d SIDs, want %d", node, len(s.Sids), len(wantSIDs))
		}
		for _, sd := range s.Sids {
			if wantSIDs[sd.Sid] != sd.Action || sd.Count.GetPackets() < count {
				t.Errorf("%s: SID %s %s counted %d packets; want one of %v, >= %d packets", node, sd.Sid, sd.Action, sd.Count.GetPackets(), wantSIDs, count)
			}
		}
	}
	// The transit node: every packet through the uN, none through the classic End it also serves.
	for _, sd := range stats("p").Sids {
		switch {
		case sd.Sid == "fcbb:0:200::/48" && sd.Action == "End":
			if sd.Count.GetPackets() < 14*count {
				t.Errorf("p: uN %s counted %d packets, want >= %d", sd.Sid, sd.Count.GetPackets(), 14*count)
			}
		case sd.Sid == "fc00:2::1":
			if sd.Count.GetPackets() != 0 {
				t.Errorf("p: classic End %s counted %d packets, want 0", sd.Sid, sd.Count.GetPackets())
			}
		default:
			t.Errorf("p: unexpected SID %s %s", sd.Sid, sd.Action)
		}
	}
	// One segment: tenant A's H.Encaps carries an SRH of one segment (40 + 24 bytes), tenant B's
	// H.Encaps.Red none (40 bytes).
	routes := showRoutes(t, l, "pe1")
	for _, r := range routes {
		if want := map[string]int{"A": 1436, "B": 1460}[r.Tenant]; r.TunnelMTU != want {
			t.Errorf("pe1 route %s tenant %s: tunnel MTU %d, want %d", r.Prefix, r.Tenant, r.TunnelMTU, want)
		}
	}
	// A trace at p shows the uN shifting the container both ways (the demo prints it).
	tr, err := l.TraceTransit(2)
	if err != nil {
		t.Fatalf("trace at p: %v\n%s", err, tr)
	}
	for _, want := range []string{
		"sid      fcbb:0:200::/48 (fcbb:0:200:300:e004::) End", "ipv6 fc00:1::1 > fcbb:0:300:e004:: hlim 63",
		"sid      fcbb:0:200::/48 (fcbb:0:200:100:e004::) End", "ipv6 fc00:3::1 > fcbb:0:100:e004:: hlim 63",
	} {
		if !strings.Contains(tr, want) {
			t.Errorf("trace at p: no %q in:\n%s", want, tr)
		}
	}
}
