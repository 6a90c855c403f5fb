package interoptest

// exabgp_test.go: seg6x and ExaBGP 5 exchange SRv6 L3VPN routes. One daemon, two ExaBGP peers. With
// the peer that has the extended next hop capability, in order: seg6x installs the VPNv4 and VPNv6
// routes ExaBGP announces, transposed and not, with the SID the peer meant as the one segment, and
// removes a withdrawn one; ExaBGP receives seg6x's tenant prefixes with the service SIDs, whole and then
// transposed (the config's setting changed on the running daemon); malformed Prefix-SID attributes and
// SIDs no PE may use are refused on the live session (refuse_test.go). Meanwhile the peer without the
// capability watches its session for 30 s (nexthop_test.go).

import (
	"bytes"
	"fmt"
	"net/netip"
	"slices"
	"testing"
	"time"
)

// peerRoute is a route the enh peer announces and what seg6x must make of it.
type peerRoute struct {
	prefix    string
	rt        string
	label     uint32 // the 20-bit label value
	sid       string // in the SID Information sub-TLV (transposed bits zero)
	behavior  uint16
	structure string // ExaBGP's [LBL,LNL,FL,AL,TL,TO]; "": no SID Structure
	tenant    string // where it must be installed
	want      string // the SID the peer means: the route's one segment
	wantBeh   string // the behavior seg6x must read
}

func (p peerRoute) nlri() string {
	return fmt.Sprintf("route %s rd %s label %d next-hop %s extended-community [ target:%s ]", p.prefix, exaRD, p.label, exaENHAddr, p.rt)
}

func (p peerRoute) announce() string {
	return fmt.Sprintf("announce %s bgp-prefix-sid-srv6 ( l3-service %s 0x%x %s )", p.nlri(), p.sid, p.behavior, p.structure)
}

// peerRoutes: VPNv4 and VPNv6, SIDs whole (label implicit null) and transposed (function bits in the
// label: 16 bits at 48 as FRR sends them, and 12 bits at 64 of a 40/24 locator), without a SID
// Structure, with FRR's opaque behavior 0xFFFF, and one for tenant B.
var peerRoutes = []peerRoute{
	{"198.18.2.0/24", rtA, implicitNull, "fc00:22:0:21::", 0x13, "[32,16,16,0,0,0]", "A", "fc00:22:0:21::", "End.DT4"},
	{"2001:db8:2::/64", rtA, implicitNull, "fc00:22:0:22::", 0x12, "[32,16,16,0,0,0]", "A", "fc00:22:0:22::", "End.DT6"},
	{"198.18.3.0/24", rtA, 0x23 << 4, "fc00:22::", 0x13, "[32,16,16,0,16,48]", "A", "fc00:22:0:23::", "End.DT4"},
	{"2001:db8:3::/64", rtA, 0xabcd << 4, "fc00:22::", 0x14, "[32,16,16,0,16,48]", "A", "fc00:22:0:abcd::", "End.DT46"},
	{"198.18.4.0/24", rtA, 0xa5b << 8, "fc00:22:33::", 0x13, "[40,24,12,0,12,64]", "A", "fc00:22:33:0:a5b0::", "End.DT4"},
	{"198.18.5.0/24", rtA, implicitNull, "fc00:22:0:25::", 0x13, "", "A", "fc00:22:0:25::", "End.DT4"},
	{"2001:db8:5::/64", rtA, implicitNull, "fc00:22:0:26::", 0xffff, "[32,16,16,0,0,0]", "A", "fc00:22:0:26::", "End.DT6"},
	{"198.18.12.0/24", rtB, implicitNull, "fc00:22:0:27::", 0x13, "[32,16,16,0,0,0]", "B", "fc00:22:0:27::", "End.DT4"},
}

// installed reports whether every route is learned from the enh peer with its SID and behavior and
// installed into its tenant with that SID as its one segment, origin bgp; else what is not.
func (r *rig) installed(want []peerRoute) (bool, string) {
	rep, err := r.bgp()
	if err != nil {
		return false, err.Error()
	}
	rs, err := r.routes()
	if err != nil {
		return false, err.Error()
	}
	for _, p := range want {
		var l string
		for _, lr := range rep.Learned {
			if lr.Prefix == p.prefix && lr.Peer == exaENHAddr {
				l = fmt.Sprintf("sid %s %s tenant %q %s", lr.Sid, lr.Behavior, lr.Tenant, lr.Reason)
			}
		}
		if wl := fmt.Sprintf("sid %s %s tenant %q ", p.want, p.wantBeh, p.tenant); l != wl {
			return false, fmt.Sprintf("%s learned as %q, want %q", p.prefix, l, wl)
		}
		if rt, ok := rs[p.tenant+" "+p.prefix]; !ok || !slices.Equal(rt.Segs, []string{p.want}) || rt.Origin != "bgp" {
			return false, fmt.Sprintf("%s in tenant %s: %+v (present %t), want segs [%s] origin bgp", p.prefix, p.tenant, rt, ok, p.want)
		}
	}
	return true, ""
}

func TestExaBGP(t *testing.T) {
	r := setup(t)
	for _, p := range []*exaPeer{r.enh, r.plain} {
		waitFor(t, p.c.Name+" session", 30*time.Second, func() (bool, string) {
			msgs, _, err := p.read()
			ups, _, _ := sessionEvents(msgs)
			return err == nil && ups > 0, fmt.Sprintf("ExaBGP reported %d session ups (%v)\n%s", ups, err, p.logTail())
		})
	}
	t.Run("peers", func(t *testing.T) {
		t.Run("without-extended-next-hop", func(t *testing.T) {
			t.Parallel()
			testNoExtendedNextHop(t, r)
		})
		t.Run("with-extended-next-hop", func(t *testing.T) {
			t.Parallel()
			t.Run("learn", func(t *testing.T) { testLearn(t, r) })
			t.Run("advertise", func(t *testing.T) { testAdvertise(t, r) })
			t.Run("malformed", func(t *testing.T) { testRefused(t, r, malformedRoutes(), markerMalformed) })
			t.Run("bad-sids", func(t *testing.T) { testRefused(t, r, badSIDRoutes(), markerBadSIDs) })
		})
	})
}

// testLearn: ExaBGP's routes are installed with the SIDs it meant; a withdrawn one goes.
func testLearn(t *testing.T, r *rig) {
	for _, p := range peerRoutes {
		if err := r.enh.command(p.announce()); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "seg6x installs the routes ExaBGP announced", 20*time.Second, func() (bool, string) { return r.installed(peerRoutes) })

	extra := peerRoute{"198.18.7.0/24", rtA, 0x7 << 4, "fc00:22::", 0x13, "[32,16,16,0,16,48]", "A", "fc00:22:0:7::", "End.DT4"}
	if err := r.enh.command(extra.announce()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "seg6x installs one more", 20*time.Second, func() (bool, string) { return r.installed([]peerRoute{extra}) })
	if err := r.enh.command("withdraw " + extra.nlri()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "seg6x removes the route ExaBGP withdrew", 20*time.Second, func() (bool, string) {
		rs, err := r.routes()
		if err != nil {
			return false, err.Error()
		}
		rt, ok := rs["A "+extra.prefix]
		return !ok, fmt.Sprintf("still installed: %+v", rt)
	})
	if ok, why := r.installed(peerRoutes); !ok {
		t.Fatalf("after the withdrawal: %s", why)
	}
}

// seg6xRoute is a route seg6x advertises: tenant, RD, prefix, route target, behavior code.
type seg6xRoute struct {
	tenant, rd, prefix, rt string
	behavior               uint16
}

var seg6xRoutes = []seg6xRoute{
	{"A", "198.18.255.1:100", "198.18.1.0/24", rtA, 0x14},
	{"A", "198.18.255.1:100", "2001:db8:1::/64", rtA, 0x14},
	{"B", "198.18.255.1:200", "198.18.11.0/24", rtB, 0x13},
}

// testAdvertise: ExaBGP receives exactly seg6x's tenant prefixes with their service SIDs, first whole
// (label implicit null), then with transposition on (function bits in the label, zero in the SID), then
// whole again.
func testAdvertise(t *testing.T, r *rig) {
	sids, err := r.serviceSIDs()
	if err != nil {
		t.Fatal(err)
	}
	check := func(transposed bool) func() (bool, string) {
		return func() (bool, string) {
			msgs, _, err := r.enh.read()
			if err != nil {
				return false, err.Error()
			}
			us, err := updates(msgs)
			if err != nil {
				return false, err.Error()
			}
			return advertisedAs(adjRIBIn(us), sids, transposed)
		}
	}
	waitFor(t, "ExaBGP receives seg6x's routes, SIDs whole", 20*time.Second, check(false))
	r.apply(t, true)
	waitFor(t, "ExaBGP receives seg6x's routes, SIDs transposed", 20*time.Second, check(true))
	r.apply(t, false)
	waitFor(t, "ExaBGP receives seg6x's routes, SIDs whole again", 20*time.Second, check(false))
}

// advertisedAs reports whether adj holds exactly seg6xRoutes as RFC 9252 encodes them, else what differs.
func advertisedAs(adj map[string]vpnRoute, sids map[string]string, transposed bool) (bool, string) {
	if len(adj) != len(seg6xRoutes) {
		var have []string
		for k := range adj {
			have = append(have, k)
		}
		return false, fmt.Sprintf("ExaBGP holds %d routes %v, want %d", len(adj), have, len(seg6xRoutes))
	}
	nh := netip.MustParseAddr(seg6xNextHop).As16()
	for _, w := range seg6xRoutes {
		got, ok := adj[w.rd+" "+w.prefix]
		if !ok {
			return false, fmt.Sprintf("%s %s not received", w.rd, w.prefix)
		}
		sid, err := netip.ParseAddr(sids[w.tenant])
		if err != nil {
			return false, fmt.Sprintf("tenant %s service SID %q", w.tenant, sids[w.tenant])
		}
		// Function bits 48..63 (block 32 + node 16, function 16): in the label, or in the SID.
		field, label, st := sid.As16(), uint32(implicitNull), []byte{32, 16, 16, 0, 0, 0}
		if transposed {
			label = (uint32(field[6])<<8 | uint32(field[7])) << 4
			field[6], field[7] = 0, 0
			st[4], st[5] = 16, 48
		}
		full, _ := got.FullSID()
		switch {
		case (len(got.NextHop) != 24 && len(got.NextHop) != 48) || !bytes.Equal(got.NextHop[:8], make([]byte, 8)) ||
			!bytes.Equal(got.NextHop[8:24], nh[:]):
			return false, fmt.Sprintf("%s: next hop %x, want RD 0 + %s", w.prefix, got.NextHop, seg6xNextHop)
		case !slices.Equal(got.RTs, []string{w.rt}):
			return false, fmt.Sprintf("%s: route targets %v, want %s", w.prefix, got.RTs, w.rt)
		case got.SRv6 == nil:
			return false, fmt.Sprintf("%s: no SRv6 L3 Service TLV", w.prefix)
		case got.Label != label || got.SRv6.SID != netip.AddrFrom16(field) || !slices.Equal(got.SRv6.Structure, st):
			return false, fmt.Sprintf("%s: label %#x SID %s structure %v, want label %#x SID %s structure %v", w.prefix,
				got.Label, got.SRv6.SID, got.SRv6.Structure, label, netip.AddrFrom16(field), st)
		case got.SRv6.Behavior != w.behavior || full != sid:
			return false, fmt.Sprintf("%s: behavior %#x SID %s, want %#x %s", w.prefix, got.SRv6.Behavior, full, w.behavior, sid)
		}
	}
	return true, ""
}
