package bgp

// negotiation_unit_test.go: which neighbors' VPNv4 routes need Extended Next Hop, and what a session's
// capabilities mean for what is sent (no BGP server needed): without the capability for VPNv4 the
// family is not sent, an empty capability (should a GoBGP accept one) counts as none, a family the peer
// does not offer is not exchanged, and graceful restart offered by one side only is a mismatch; what a
// neighbor negotiated is remembered across restarts.

import (
	"maps"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"testing"

	gobgp "github.com/osrg/gobgp/v4/pkg/packet/bgp"

	"github.com/seg6x/seg6x/internal/model"
)

func TestNeedsExtendedNextHop(t *testing.T) {
	a := netip.MustParseAddr
	v4v6 := []string{model.FamilyVPNv4, model.FamilyVPNv6}
	for _, c := range []struct {
		nh, neighbor string
		families     []string
		want         bool
	}{
		{"fc00:1::1", "fc00:99::1", v4v6, true},
		{"fc00:1::1", "198.18.0.1", v4v6, true}, // an IPv6 next hop over an IPv4 session
		{"", "fc00:99::1", v4v6, true},          // the session's local address: IPv6
		{"", "198.18.0.1", v4v6, false},         // ... IPv4
		{"198.18.0.9", "fc00:99::1", v4v6, false},
		{"fc00:1::1", "fc00:99::1", []string{model.FamilyVPNv6}, false}, // no VPNv4 at all
	} {
		cfg := &model.BGP{}
		if c.nh != "" {
			cfg.NextHop = a(c.nh)
		}
		if got := needsENH(cfg, model.Neighbor{Address: a(c.neighbor), Families: c.families}); got != c.want {
			t.Errorf("next hop %q, neighbor %s, %v: %t, want %t", c.nh, c.neighbor, c.families, got, c.want)
		}
	}
}

func TestNegotiate(t *testing.T) {
	mp := func(f gobgp.Family) gobgp.ParameterCapabilityInterface { return gobgp.NewCapMultiProtocol(f) }
	enh := func(fs ...gobgp.Family) gobgp.ParameterCapabilityInterface {
		var ts []*gobgp.CapExtendedNexthopTuple
		for _, f := range fs {
			ts = append(ts, gobgp.NewCapExtendedNexthopTuple(f, gobgp.AFI_IP6))
		}
		return gobgp.NewCapExtendedNexthop(ts)
	}
	gr := gobgp.NewCapGracefulRestart(false, false, 120, nil)
	want := neighborWant{families: []string{model.FamilyVPNv4, model.FamilyVPNv6}, needENH: true}
	for _, c := range []struct {
		name       string
		w          neighborWant
		caps       []gobgp.ParameterCapabilityInterface
		enh        bool
		notSent    map[string]string
		mismatches []string // capabilities
	}{
		{"with extended next hop", want, []gobgp.ParameterCapabilityInterface{mp(gobgp.RF_IPv4_VPN), mp(gobgp.RF_IPv6_VPN), enh(gobgp.RF_IPv4_VPN)},
			true, map[string]string{}, nil},
		{"without", want, []gobgp.ParameterCapabilityInterface{mp(gobgp.RF_IPv4_VPN), mp(gobgp.RF_IPv6_VPN)},
			false, map[string]string{"vpnv4": whyNoENH}, []string{"extended-nexthop"}},
		{"for another family only", want, []gobgp.ParameterCapabilityInterface{mp(gobgp.RF_IPv4_VPN), mp(gobgp.RF_IPv6_VPN), enh(gobgp.RF_IPv4_UC)},
			false, map[string]string{"vpnv4": whyNoENH}, []string{"extended-nexthop"}},
		{"empty, accepted", want, []gobgp.ParameterCapabilityInterface{mp(gobgp.RF_IPv4_VPN), mp(gobgp.RF_IPv6_VPN), enh()},
			false, map[string]string{"vpnv4": whyEmptyENH}, []string{"extended-nexthop"}},
		{"IPv4 next hops", neighborWant{families: want.families}, []gobgp.ParameterCapabilityInterface{mp(gobgp.RF_IPv4_VPN), mp(gobgp.RF_IPv6_VPN)},
			false, map[string]string{}, nil},
		{"vpnv6 not offered", want, []gobgp.ParameterCapabilityInterface{mp(gobgp.RF_IPv4_VPN), enh(gobgp.RF_IPv4_VPN)},
			true, map[string]string{"vpnv6": whyNotOffered}, []string{"multiprotocol vpnv6"}},
		{"graceful restart here only", neighborWant{families: want.families, needENH: true, gr: true},
			[]gobgp.ParameterCapabilityInterface{mp(gobgp.RF_IPv4_VPN), mp(gobgp.RF_IPv6_VPN), enh(gobgp.RF_IPv4_VPN)},
			true, map[string]string{}, []string{"graceful-restart"}},
		{"graceful restart both", neighborWant{families: want.families, needENH: true, gr: true},
			[]gobgp.ParameterCapabilityInterface{mp(gobgp.RF_IPv4_VPN), mp(gobgp.RF_IPv6_VPN), enh(gobgp.RF_IPv4_VPN), gr},
			true, map[string]string{}, nil},
	} {
		n, ms := negotiate(c.w, c.caps)
		var caps []string
		for _, m := range ms {
			caps = append(caps, m.capability)
		}
		if n.enhVPNv4 != c.enh || !maps.Equal(n.notSent, c.notSent) || !slices.Equal(caps, c.mismatches) {
			t.Errorf("%s: extended next hop %t, not sent %v, mismatches %+v; want %t, %v, %v", c.name, n.enhVPNv4, n.notSent, ms,
				c.enh, c.notSent, c.mismatches)
		}
	}
}

// What a neighbor negotiated survives a restart (Options.PeerFile): a neighbor known to negotiate
// extended next hop is not held back in its first session; one known not to, or unknown, is.
func TestPeerFileRemembers(t *testing.T) {
	file := filepath.Join(t.TempDir(), "bgp-neighbors.json")
	a, b, c := netip.MustParseAddr("fc00:99::1"), netip.MustParseAddr("fc00:99::2"), netip.MustParseAddr("fc00:99::3")
	g := newENHGate(file, func(f string, args ...any) { t.Errorf(f, args...) })
	g.known[a], g.known[b] = true, false
	g.save()

	g = newENHGate(file, func(f string, args ...any) { t.Errorf(f, args...) })
	if !maps.Equal(g.known, map[netip.Addr]bool{a: true, b: false}) {
		t.Fatalf("known after a restart: %v", g.known)
	}
	w := neighborWant{families: []string{model.FamilyVPNv4}, needENH: true}
	g.want = map[netip.Addr]neighborWant{a: w, b: w, c: w}
	for addr, want := range map[netip.Addr]bool{a: false, b: true, c: true} {
		if got := g.holdBack(addr); got != want {
			t.Errorf("%s held back: %t, want %t", addr, got, want)
		}
	}
	// A file that is not JSON: nothing known, said once.
	if err := os.WriteFile(file, []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	said := 0
	g = newENHGate(file, func(string, ...any) { said++ })
	if len(g.known) != 0 || said != 1 {
		t.Fatalf("a bad file: known %v, %d lines", g.known, said)
	}
}
