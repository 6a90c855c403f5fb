package bgp

// route_test.go: VPN routes to GoBGP paths and back, through the wire format (a serialized and
// re-parsed UPDATE), transposition as FRR 8.4 encodes it, its opaque behavior, and refused input.

import (
	"bytes"
	"math/rand/v2"
	"net/netip"
	"reflect"
	"strings"
	"testing"

	"github.com/osrg/gobgp/v4/pkg/apiutil"
	gobgp "github.com/osrg/gobgp/v4/pkg/packet/bgp"
)

// overTheWire serializes p as an UPDATE, parses it back and returns the path a receiver sees.
func overTheWire(t *testing.T, p *apiutil.Path) *apiutil.Path {
	t.Helper()
	b, err := gobgp.NewBGPUpdateMessage(nil, p.Attrs, nil).Serialize()
	if err != nil {
		t.Fatalf("serialize: %v", err)
	}
	m, err := gobgp.ParseBGPMessage(b)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	u := m.Body.(*gobgp.BGPUpdate)
	out := &apiutil.Path{Attrs: u.PathAttributes}
	for _, a := range u.PathAttributes {
		if mp, ok := a.(*gobgp.PathAttributeMpReachNLRI); ok {
			if len(mp.Value) != 1 {
				t.Fatalf("%d NLRIs in MP_REACH", len(mp.Value))
			}
			out.Family, out.Nlri = gobgp.NewFamily(mp.AFI, mp.SAFI), mp.Value[0].NLRI
		}
	}
	if out.Nlri == nil {
		t.Fatal("no MP_REACH_NLRI on the wire")
	}
	return out
}

var (
	frrStructure = SIDStructure{Block: 40, Node: 24, Function: 16} // FRR's default locator layout
	v4Route      = VPNRoute{RD: "65000:100", Prefix: netip.MustParsePrefix("198.18.1.0/24"), RTs: []string{"65000:100"},
		NextHop: netip.MustParseAddr("fc00:a::1"), SID: netip.MustParseAddr("fc00:0:1:0:100::"), Behavior: EndDT4,
		Structure: frrStructure}
)

func TestVPNRouteRoundTripOverTheWire(t *testing.T) {
	v6 := v4Route
	v6.Prefix, v6.Behavior, v6.SID = netip.MustParsePrefix("2001:db8:1::/48"), EndDT6, netip.MustParseAddr("fc00:0:1:0:e006::")
	dt46 := v4Route
	dt46.RD, dt46.RTs, dt46.Behavior = "192.0.2.1:7", []string{"192.0.2.1:7", "65000:100", "65000:200"}, EndDT46
	dt46.Structure = SIDStructure{}
	host := v6
	host.Prefix, host.Structure = netip.MustParsePrefix("2001:db8:1::5/128"), SIDStructure{Block: 32, Node: 16, Function: 20, Argument: 60}
	host.SID = netip.MustParseAddr("fc00:0:1:abcd:e000::")
	as4 := v4Route // 4-byte ASN (asplain) in the RD (type 2) and an RT (four-octet AS specific)
	as4.RD, as4.RTs = "4200000000:7", []string{"4200000000:7", "65000:100"}
	for _, c := range []struct {
		name      string
		r         VPNRoute
		transpose bool
	}{
		{"VPNv4 End.DT4, function transposed", v4Route, true},
		{"VPNv4 End.DT4, whole SID", v4Route, false},
		{"VPNv6 End.DT6, function transposed", v6, true},
		{"VPNv4 End.DT46, RD type 1, three RTs, no structure", dt46, false},
		{"VPNv6 /128, 20-bit function transposed", host, true},
		{"VPNv4, 4-byte ASN RD and RT", as4, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := ToPath(c.r, c.transpose)
			if err != nil {
				t.Fatalf("ToPath: %v", err)
			}
			got, err := FromPath(overTheWire(t, p))
			if err != nil {
				t.Fatalf("FromPath: %v", err)
			}
			if !reflect.DeepEqual(got, c.r) {
				t.Errorf("received\n %+v\nsent\n %+v", got, c.r)
			}
			if got.Family() != p.Family {
				t.Errorf("family %v, path says %v", got.Family(), p.Family)
			}
		})
	}
}

// FRR 8.4 sends fc00:0:1:0:100:: (locator fc00:0:1::/64 of 40/24/16/0, function 0x100) as SID fc00:0:1::
// with label 0x01000 (24-bit field 01 00 01: the label shifted by 4, bottom of stack set), TL 16, TO 64.
func TestTranspositionAsFRR(t *testing.T) {
	p, err := ToPath(v4Route, true)
	if err != nil {
		t.Fatal(err)
	}
	nlri := p.Nlri.(*gobgp.LabeledVPNIPAddrPrefix)
	if !reflect.DeepEqual(nlri.Labels.Labels, []uint32{0x01000}) {
		t.Errorf("label %#x, want 0x01000", nlri.Labels.Labels)
	}
	wire, err := nlri.Serialize()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(wire[1:4], []byte{0x01, 0x00, 0x01}) {
		t.Errorf("label field % x, want 01 00 01", wire[1:4])
	}
	var psid *gobgp.PathAttributePrefixSID
	for _, a := range p.Attrs {
		if a, ok := a.(*gobgp.PathAttributePrefixSID); ok {
			psid = a
		}
	}
	info := l3Service(psid)
	if sid, _ := netip.AddrFromSlice(info.SID); sid != netip.MustParseAddr("fc00:0:1::") {
		t.Errorf("SID in the TLV %s, want fc00:0:1:: (function bits zeroed)", sid)
	}
	if info.EndpointBehavior != uint16(gobgp.END_DT4) {
		t.Errorf("behavior %d, want End.DT4 (19)", info.EndpointBehavior)
	}
	st := info.SubSubTLVs[0].(*gobgp.SRv6SIDStructureSubSubTLV)
	if want := (gobgp.SRv6SIDStructureSubSubTLV{LocatorBlockLength: 40, LocatorNodeLength: 24, FunctionLength: 16,
		TranspositionLength: 16, TranspositionOffset: 64}); st.LocatorBlockLength != want.LocatorBlockLength ||
		st.LocatorNodeLength != want.LocatorNodeLength || st.FunctionLength != want.FunctionLength ||
		st.ArgumentLength != 0 || st.TranspositionLength != 16 || st.TranspositionOffset != 64 {
		t.Errorf("structure %+v", st)
	}
}

// pathWith builds a VPN path by hand, for what ToPath never sends.
func pathWith(t *testing.T, prefix string, label uint32, sid string, beh gobgp.SRBehavior, st *gobgp.SRv6SIDStructureSubSubTLV) *apiutil.Path {
	t.Helper()
	rd, _ := gobgp.ParseRouteDistinguisher("65000:1")
	pfx := netip.MustParsePrefix(prefix)
	nlri, err := gobgp.NewLabeledVPNIPAddrPrefix(pfx, *gobgp.NewMPLSLabelStack(label), rd)
	if err != nil {
		t.Fatal(err)
	}
	fam := gobgp.RF_IPv6_VPN
	if pfx.Addr().Is4() {
		fam = gobgp.RF_IPv4_VPN
	}
	mp, _ := gobgp.NewPathAttributeMpReachNLRI(fam, []gobgp.PathNLRI{{NLRI: nlri}}, netip.MustParseAddr("fc00:a::9"))
	rt, _ := gobgp.ParseRouteTarget("65000:1")
	attrs := []gobgp.PathAttributeInterface{gobgp.NewPathAttributeOrigin(0), mp,
		gobgp.NewPathAttributeExtendedCommunities([]gobgp.ExtendedCommunityInterface{rt})}
	if sid != "" {
		var subs []gobgp.PrefixSIDTLVInterface
		if st != nil {
			subs = append(subs, st)
		}
		attrs = append(attrs, gobgp.NewPathAttributePrefixSID(gobgp.NewSRv6ServiceTLV(gobgp.TLVTypeSRv6L3Service,
			gobgp.NewSRv6InformationSubTLV(netip.MustParseAddr(sid), beh, subs...))))
	}
	return &apiutil.Path{Family: fam, Nlri: nlri, Attrs: attrs}
}

// FRR 8.4 (as a PE, and as a route reflector re-encoding what it reflects) sends behavior 0xFFFF.
func TestOpaqueBehaviorTakesTheFamilys(t *testing.T) {
	st := gobgp.NewSRv6SIDStructureSubSubTLV(40, 24, 16, 0, 16, 64)
	for prefix, want := range map[string]string{"198.18.2.0/24": EndDT4, "2001:db8:2::/48": EndDT6} {
		r, err := FromPath(overTheWire(t, pathWith(t, prefix, 0x02000, "fc00:0:2::", gobgp.SRBehavior(0xFFFF), st)))
		if err != nil {
			t.Fatalf("%s: %v", prefix, err)
		}
		if r.Behavior != want || r.SID != netip.MustParseAddr("fc00:0:2:0:200::") {
			t.Errorf("%s: behavior %s SID %s, want %s fc00:0:2:0:200::", prefix, r.Behavior, r.SID, want)
		}
	}
}

func TestRefusedRoutes(t *testing.T) {
	bad := func(f func(*VPNRoute)) VPNRoute { r := v4Route; f(&r); return r }
	for _, c := range []struct {
		r    VPNRoute
		want string
	}{
		{bad(func(r *VPNRoute) { r.Prefix = netip.MustParsePrefix("198.18.1.7/24") }), "network address"},
		{bad(func(r *VPNRoute) { r.RD = "100" }), "route distinguisher"},
		{bad(func(r *VPNRoute) { r.RTs = nil }), "no route target"},
		{bad(func(r *VPNRoute) { r.RTs = []string{"x:y"} }), "route target"},
		{bad(func(r *VPNRoute) { r.NextHop = netip.MustParseAddr("198.18.0.1") }), "global IPv6"},
		{bad(func(r *VPNRoute) { r.NextHop = netip.MustParseAddr("fe80::1") }), "global IPv6"},
		{bad(func(r *VPNRoute) { r.SID = netip.MustParseAddr("198.18.0.1") }), "SID"},
		{bad(func(r *VPNRoute) { r.Behavior = EndDT6 }), "does not decapsulate"},
		{bad(func(r *VPNRoute) { r.Behavior = "End.DX4" }), "want End.DT4"},
		{bad(func(r *VPNRoute) { r.Structure = SIDStructure{64, 32, 32, 8} }), "longer than 128"},
	} {
		if _, err := ToPath(c.r, false); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want one saying %q", c.r, err, c.want)
		}
	}
	if _, err := ToPath(bad(func(r *VPNRoute) { r.Structure = SIDStructure{} }), true); err == nil ||
		!strings.Contains(err.Error(), "function length") {
		t.Errorf("transposition without a structure: %v", err)
	}
	if _, err := ToPath(bad(func(r *VPNRoute) { r.Structure.Function = 24 }), true); err == nil ||
		!strings.Contains(err.Error(), "at most 20") {
		t.Errorf("24-bit transposition: %v", err)
	}
	for _, c := range []struct {
		name string
		p    *apiutil.Path
		want string
	}{
		{"no Prefix-SID", pathWith(t, "198.18.3.0/24", 3, "", 0, nil), "no SRv6 L3 Service TLV"},
		{"End.DX4", pathWith(t, "198.18.3.0/24", 3, "fc00:0:3::1", gobgp.END_DX4, nil), "not a layer-3 VPN decapsulation"},
		{"End.DT6 for VPNv4", pathWith(t, "198.18.3.0/24", 3, "fc00:0:3::1", gobgp.END_DT6, nil), "does not decapsulate"},
		{"transposition of 21 bits", pathWith(t, "198.18.3.0/24", 3, "fc00:0:3::", gobgp.END_DT4,
			gobgp.NewSRv6SIDStructureSubSubTLV(40, 24, 21, 0, 21, 64)), "at most 20"},
		{"transposition beyond the SID", pathWith(t, "198.18.3.0/24", 3, "fc00:0:3::", gobgp.END_DT4,
			gobgp.NewSRv6SIDStructureSubSubTLV(100, 20, 16, 0, 16, 120)), "beyond the 128-bit SID"},
	} {
		if _, err := FromPath(overTheWire(t, c.p)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one saying %q", c.name, err, c.want)
		}
	}
}

func TestTransposeInUndoesOut(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 2000; i++ {
		var b [16]byte
		for j := range b {
			b[j] = byte(rng.UintN(256))
		}
		sid := netip.AddrFrom16(b)
		n := uint8(rng.UintN(MaxTransposition + 1))
		off := uint8(rng.UintN(uint(129 - int(n))))
		zeroed, label, err := transposeOut(sid, off, n)
		if err != nil {
			t.Fatalf("out(%d, %d): %v", off, n, err)
		}
		if label >= 1<<20 {
			t.Fatalf("label %#x is more than 20 bits", label)
		}
		back, err := transposeIn(zeroed, label, off, n)
		if err != nil || back != sid {
			t.Fatalf("off %d len %d: %s -> %s + %#x -> %s (%v)", off, n, sid, zeroed, label, back, err)
		}
	}
}
