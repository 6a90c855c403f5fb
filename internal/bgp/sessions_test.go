package bgp

// sessions_test.go: what the speaker adds to GoBGP's view of each neighbor for `bgp show neighbors`:
// its flaps, last error and when, the families not sent and why, and how many of the paths learned
// from it went into no tenant (no BGP server needed).

import (
	"net/netip"
	"testing"
	"time"

	pb "github.com/seg6x/seg6x/api/seg6xv1"
)

func TestNeighborSessions(t *testing.T) {
	s := New(nil, Options{})
	s.imp = newImporter(s)
	a, b := netip.MustParseAddr("fc00:99::1"), netip.MustParseAddr("fc00:99::2")
	p, sid := netip.MustParsePrefix, netip.MustParseAddr
	s.imp.learned.put("1:1", &VPNRoute{RD: "1:1", Prefix: p("198.18.0.0/24"), SID: sid("fc00:2:0:1::")}, a, false)
	s.imp.learned.put("1:1", &VPNRoute{RD: "1:1", Prefix: p("198.18.1.0/24"), SID: sid("fc00:2:0:1::")}, a, false)
	s.imp.learned.putBad("1:2", p("198.18.9.0/24"), "1:2 198.18.9.0/24", learnedPath{peer: b, err: "no SRv6 service SID"})
	s.imp.installed["blue"] = map[netip.Prefix]installedRoute{p("198.18.0.0/24"): {Segs: []netip.Addr{sid("fc00:2:0:1::")}}}
	at := time.Now().Add(-time.Minute)
	s.sessions[a] = &session{flaps: 2, lastErr: "notification received: 6/2 Cease / Administrative Shutdown", lastErrAt: at,
		notSent: map[string]string{"vpnv4": whyNoENH}}
	ns := []*pb.BgpNeighbor{{Address: a.String()}, {Address: b.String()}}
	s.addSessions(ns)
	if n := ns[0]; n.Refused != 1 || n.Flaps != 2 || n.LastError != s.sessions[a].lastErr || n.LastErrorUnixMs != at.UnixMilli() ||
		n.NotSent["vpnv4"] != whyNoENH {
		t.Errorf("neighbor a: %+v", n)
	}
	if n := ns[1]; n.Refused != 1 || n.Flaps != 0 || n.LastError != "" || n.LastErrorUnixMs != 0 || len(n.NotSent) != 0 {
		t.Errorf("neighbor b: %+v", n)
	}
}
