package interoptest

// refuse_test.go: routes seg6x must refuse, each sent by ExaBGP on the live session: malformed
// Prefix-SID attributes (bytes given as ExaBGP's generic attribute) and well-formed ones whose SID no
// PE may use. After them ExaBGP announces a good marker route: once it is installed, seg6x has seen
// everything sent before it on the session. Then none of the refused routes is installed, every good
// route learned before is still installed, and the session never went down (no NOTIFICATION either way).

import (
	"fmt"
	"net/netip"
	"testing"
	"time"
)

// badRoute is a VPNv4 route of tenant A seg6x must not install.
type badRoute struct {
	name   string
	prefix string
	label  uint32
	attr   []byte // the Prefix-SID attribute's value, sent as is
	sid    string // without attr: a well-formed L3 Service TLV with this SID (End.DT4, no structure)
}

func (b badRoute) announce() string {
	nlri := fmt.Sprintf("route %s rd %s label %d next-hop %s extended-community [ target:%s ]", b.prefix, exaRD, b.label, exaENHAddr, rtA)
	if b.attr != nil {
		return fmt.Sprintf("announce %s attribute [ 0x28 0xc0 0x%x ]", nlri, b.attr) // optional transitive
	}
	return fmt.Sprintf("announce %s bgp-prefix-sid-srv6 ( l3-service %s 0x13 )", nlri, b.sid)
}

// malformedRoutes are Prefix-SID attributes broken as a tester's ExaBGP sent them.
func malformedRoutes() []badRoute {
	sid := netip.MustParseAddr("fc00:22:0:31::")
	sid16 := sid.As16()
	good := l3Service(sidInfo(sid, 0x13, sidStructure(32, 16, 16, 0, 0, 0)))
	st := sidStructure(32, 16, 16, 0, 0, 0)
	return []badRoute{
		{name: "l3-service-length-beyond-attribute", prefix: "198.18.101.0/24", label: implicitNull,
			attr: withLength(good, len(good)-3+10)},
		{name: "l3-service-length-short-of-its-sub-tlv", prefix: "198.18.102.0/24", label: implicitNull,
			attr: withLength(good, 10)},
		{name: "sid-information-truncated-sid", prefix: "198.18.103.0/24", label: implicitNull,
			attr: l3Service(tlv(subTLVSIDInfo, []byte{0}, sid16[:8]))},
		{name: "unknown-sub-tlv-type", prefix: "198.18.104.0/24", label: implicitNull,
			attr: l3Service(tlv(9, make([]byte, 21)))},
		{name: "structure-longer-than-128-bits", prefix: "198.18.105.0/24", label: implicitNull,
			attr: l3Service(sidInfo(sid, 0x13, sidStructure(64, 48, 16, 8, 0, 0)))},
		{name: "transposition-beyond-the-sid", prefix: "198.18.106.0/24", label: 0x31 << 4,
			attr: l3Service(sidInfo(netip.MustParseAddr("fc00:22::"), 0x13, sidStructure(32, 16, 16, 0, 16, 120)))},
		{name: "transposition-longer-than-the-label", prefix: "198.18.107.0/24", label: 0x31 << 4,
			attr: l3Service(sidInfo(netip.MustParseAddr("fc00:22::"), 0x13, sidStructure(32, 16, 24, 0, 24, 48)))},
		{name: "structure-truncated", prefix: "198.18.108.0/24", label: implicitNull,
			attr: l3Service(sidInfo(sid, 0x13, withLength(st[:7], 4)))},
	}
}

// badSIDRoutes carry well-formed Prefix-SIDs with SIDs no remote PE's service may have.
func badSIDRoutes() []badRoute {
	return []badRoute{
		{name: "link-local", prefix: "198.18.121.0/24", label: implicitNull, sid: "fe80::1"},
		{name: "multicast", prefix: "198.18.122.0/24", label: implicitNull, sid: "ff0e::1"},
		{name: "loopback", prefix: "198.18.123.0/24", label: implicitNull, sid: "::1"},
		{name: "unspecified", prefix: "198.18.124.0/24", label: implicitNull, sid: "::"},
		{name: "ipv4-mapped", prefix: "198.18.125.0/24", label: implicitNull, sid: "::ffff:198.18.0.1"},
		{name: "in-own-locator", prefix: "198.18.126.0/24", label: implicitNull, sid: "fc00:11:0:99::"},
		{name: "own-service-sid", prefix: "198.18.127.0/24", label: implicitNull, sid: "fc00:11:0:1::"},
	}
}

// The marker route announced after each group.
var (
	markerMalformed = peerRoute{"198.18.109.0/24", rtA, implicitNull, "fc00:22:0:39::", 0x13, "[32,16,16,0,0,0]", "A", "fc00:22:0:39::", "End.DT4"}
	markerBadSIDs   = peerRoute{"198.18.128.0/24", rtA, implicitNull, "fc00:22:0:48::", 0x13, "", "A", "fc00:22:0:48::", "End.DT4"}
)

// testRefused sends bad, then marker; checks none of bad is installed, the good routes stay and the
// session stayed up.
func testRefused(t *testing.T, r *rig, bad []badRoute, marker peerRoute) {
	before, err := r.neighbor(exaENHAddr)
	if err != nil || before.GetState() != "established" {
		t.Fatalf("session to %s before: %v %v", exaENHAddr, before, err)
	}
	for _, b := range bad {
		if err := r.enh.command(b.announce()); err != nil {
			t.Fatalf("%s: %v", b.name, err)
		}
	}
	if err := r.enh.command(marker.announce()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the marker route ExaBGP sent after them is installed", 20*time.Second, func() (bool, string) {
		return r.installed([]peerRoute{marker})
	})
	rep, err := r.bgp()
	if err != nil {
		t.Fatal(err)
	}
	rs, err := r.routes()
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		t.Run(b.name, func(t *testing.T) {
			note := "not among the learned paths"
			for _, l := range rep.Learned {
				if l.Prefix == b.prefix && l.Peer == exaENHAddr {
					note = fmt.Sprintf("learned: SID %q tenant %q reason %q", l.Sid, l.Tenant, l.Reason)
				}
			}
			for _, rt := range rs {
				if rt.Prefix == b.prefix {
					t.Errorf("installed into tenant %s with segs %v, origin %s (%s)", rt.Tenant, rt.Segs, rt.Origin, note)
					return
				}
			}
			t.Logf("refused: %s", note)
		})
	}
	if ok, why := r.installed(peerRoutes); !ok {
		t.Errorf("a good route learned before is gone or changed: %s", why)
	}
	after, err := r.neighbor(exaENHAddr)
	if err != nil || after.GetState() != "established" || after.GetEstablishedUnixMs() != before.GetEstablishedUnixMs() {
		t.Errorf("session to %s: before %v, after %v (%v)", exaENHAddr, before, after, err)
	}
	msgs, _, err := r.enh.read()
	if err != nil {
		t.Fatal(err)
	}
	if ups, downs, notes := sessionEvents(msgs); ups != 1 || len(downs) > 0 || notes > 0 {
		t.Errorf("ExaBGP saw the session up %d times, down %v, %d NOTIFICATIONs", ups, downs, notes)
	}
}
