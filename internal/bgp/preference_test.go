package bgp

// preference_test.go: the importer against a real store: a tenant's own prefixes (its kernel
// table) outrank learned routes, a covering learned route leaves them to the kernel, a more specific
// one is refused unless vpn.import_more_specific, and SIDs that cannot be tunnel destinations are
// refused, each with its own note.

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/osrg/gobgp/v4/pkg/apiutil"
	gobgp "github.com/osrg/gobgp/v4/pkg/packet/bgp"

	"github.com/seg6x/seg6x/internal/core"
	"github.com/seg6x/seg6x/internal/model"
	"github.com/seg6x/seg6x/internal/state"
	"github.com/seg6x/seg6x/tools/testsupport"
)

type importRig struct {
	t     *testing.T
	st    *state.Store
	sp    *Speaker
	local []netip.Prefix // the tenant's kernel table
	paths []*apiutil.Path
}

func newImportRig(t *testing.T, moreSpecific, inDomain bool) *importRig {
	st := testsupport.OpenStore(t, t.TempDir(), testsupport.FakeEnv{})
	r := &importRig{t: t, st: st, local: []netip.Prefix{netip.MustParsePrefix("198.18.1.0/24"), netip.MustParsePrefix("2001:db8:1::/48")}}
	r.sp = New(core.New(st), Options{Logf: t.Logf,
		KernelRoutes: func(table uint32) ([]netip.Prefix, error) { return r.local, nil },
		IsLocal:      func(a netip.Addr) bool { return a == netip.MustParseAddr("fc00:5::1") }})
	r.sp.imp = newImporter(r.sp) // Run makes it
	s := model.State{
		Domain: model.Domain{Locators: []netip.Prefix{netip.MustParsePrefix("fc00:1::/48"), netip.MustParsePrefix("fc00:3::/48")}},
		BGP: &model.BGP{ASN: 65000, RouterID: netip.MustParseAddr("198.18.255.1"), ListenPort: -1, NextHop: netip.MustParseAddr("fc00:1::1"),
			Locator: netip.MustParsePrefix("fc00:1:0:100::/64"), SIDsInDomain: inDomain},
		Tenants: []model.Tenant{{Name: "A", Table: 1000, VPN: &model.VPN{RD: "65000:1", ImportRT: []string{"65000:1"},
			ExportRT: []string{"65000:1"}, ImportMoreSpecific: moreSpecific}}},
		SIDs: []model.SID{{SID: netip.MustParseAddr("fc00:1::"), Bits: 48, Action: "End"}},
	}
	if _, err := st.Apply(s, false); err != nil {
		t.Fatal(err)
	}
	return r
}

// learn makes the peer fc00:3::1 send prefix with sid (any 128 bits, as a peer may: route_test.go's
// pathWith, route target 65000:1).
func (r *importRig) learn(prefix, sid string) {
	p := pathWith(r.t, prefix, implicitNull, sid, gobgp.END_DT46, nil)
	p.PeerAddress = netip.MustParseAddr("fc00:3::1")
	r.paths = append(r.paths, p)
}

// sync runs one import round with what was learned; it returns the tenant's routes of origin bgp
// (prefix -> "pass" or its SID) and the notes of the learned routes (prefix -> note).
func (r *importRig) sync() (map[string]string, map[string]string) {
	var cfg *model.BGP
	var tenants []model.Tenant
	r.sp.ctl.Read(func(st *state.Store) { cfg, tenants = st.BGPConfig(), st.Tenants() })
	r.sp.imp.sync(cfg, tenants, r.paths)
	r.paths = nil
	routes := map[string]string{}
	r.sp.ctl.Read(func(st *state.Store) {
		for p, rt := range st.TenantRoutes("A") {
			if rt.Origin != model.OriginBGP {
				continue
			}
			if rt.Mode == model.ModePass {
				routes[p.String()] = "pass"
			} else {
				routes[p.String()] = rt.Segs[0].String()
			}
		}
	})
	notes := map[string]string{}
	r.sp.imp.eachLearned(func(lp learnedPath) {
		if _, why := r.sp.imp.usedBy(lp); why != "" {
			notes[lp.route.Prefix.String()] = why
		}
	})
	return routes, notes
}

func TestLocalPrefixesOutrankLearned(t *testing.T) {
	r := newImportRig(t, false, false)
	r.learn("198.18.50.0/24", "fc00:3::100")  // a remote site: installed
	r.learn("198.18.1.0/24", "fc00:3::100")   // the tenant's own prefix: refused, left to the kernel
	r.learn("198.18.1.128/25", "fc00:3::100") // inside the tenant's own: refused by default
	r.learn("2001:db8::/32", "fc00:3::100")   // covers the tenant's own 2001:db8:1::/48: that part stays local
	routes, notes := r.sync()
	want := map[string]string{"198.18.50.0/24": "fc00:3::100", "198.18.1.0/24": "pass", "2001:db8::/32": "fc00:3::100", "2001:db8:1::/48": "pass"}
	if !sameMap(routes, want) {
		t.Errorf("routes %v\nwant   %v", routes, want)
	}
	for p, frag := range map[string]string{
		"198.18.1.0/24":   `tenant "A" holds 198.18.1.0/24 itself (kernel table 1000): a local route outranks BGP`,
		"198.18.1.128/25": `inside 198.18.1.0/24, which tenant "A" holds itself (kernel table 1000); vpn.import_more_specific: true installs it`,
	} {
		if !strings.Contains(notes[p], frag) {
			t.Errorf("%s: note %q, want %q", p, notes[p], frag)
		}
	}
	if notes["198.18.50.0/24"] != "" {
		t.Errorf("an installed route has a note: %q", notes["198.18.50.0/24"])
	}
	r.sync() // nothing new: nothing counted again
	if n := r.sp.refusal.total[RefusedLocalPrefix]; n != 2 {
		t.Errorf("%d refusals counted as %s, want 2 (the /24 and the /25, once each)", n, RefusedLocalPrefix)
	}

	// The covering route withdrawn: the pass route it needed goes too. The kernel table loses the
	// /24: the learned /24 is installed.
	p := pathWith(t, "2001:db8::/32", implicitNull, "fc00:3::100", gobgp.END_DT46, nil)
	p.PeerAddress, p.Withdrawal = netip.MustParseAddr("fc00:3::1"), true
	r.paths = append(r.paths, p)
	r.local = r.local[1:]
	routes, _ = r.sync()
	want = map[string]string{"198.18.50.0/24": "fc00:3::100", "198.18.1.0/24": "fc00:3::100"}
	if !sameMap(routes, want) {
		t.Errorf("after the withdrawal and the kernel change: routes %v\nwant   %v", routes, want)
	}
}

func TestMoreSpecificByPolicy(t *testing.T) {
	r := newImportRig(t, true, false)
	r.learn("198.18.1.128/25", "fc00:3::100")
	routes, _ := r.sync()
	if want := map[string]string{"198.18.1.128/25": "fc00:3::100"}; !sameMap(routes, want) {
		t.Errorf("with vpn.import_more_specific: routes %v, want %v", routes, want)
	}
}

func TestUnusableSIDsRefused(t *testing.T) {
	r := newImportRig(t, false, false)
	cases := map[string]string{ // prefix -> SID
		"198.18.60.0/24": "fe80::1", "198.18.61.0/24": "ff02::1", "198.18.62.0/24": "::1", "198.18.63.0/24": "::",
		"198.18.64.0/24": "::ffff:198.18.0.1", "198.18.65.0/24": "fc00:1:0:100::5", "198.18.66.0/24": "fc00:1::1",
		"198.18.67.0/24": "fc00:5::1", "198.18.68.0/24": "fc00:3::100",
	}
	for p, sid := range cases {
		r.learn(p, sid)
	}
	routes, notes := r.sync()
	if want := map[string]string{"198.18.68.0/24": "fc00:3::100"}; !sameMap(routes, want) {
		t.Errorf("routes %v, want only the usable SID's", routes)
	}
	for p, frag := range map[string]string{
		"198.18.60.0/24": "is link-local", "198.18.61.0/24": "is a multicast address", "198.18.62.0/24": "is the loopback address",
		"198.18.63.0/24": "unspecified", "198.18.64.0/24": "IPv4-mapped", "198.18.65.0/24": "inside this node's bgp.locator",
		"198.18.66.0/24": "inside this node's local SID fc00:1::/48", "198.18.67.0/24": "the FIB delivers it locally",
	} {
		if !strings.Contains(notes[p], frag) {
			t.Errorf("%s (SID %s): note %q, want one saying %q", p, cases[p], notes[p], frag)
		}
	}

	if bad, own := r.sp.refusal.total[RefusedBadSID], r.sp.refusal.total[RefusedOwnSID]; bad != 5 || own != 3 {
		t.Errorf("refusals counted: %d %s (want 5), %d %s (want 3)", bad, RefusedBadSID, own, RefusedOwnSID)
	}

	// Only SIDs inside the domain's locators, when configured.
	r = newImportRig(t, false, true)
	r.learn("198.18.68.0/24", "fc00:3::100")
	r.learn("198.18.69.0/24", "fc00:7::100")
	routes, notes = r.sync()
	if want := map[string]string{"198.18.68.0/24": "fc00:3::100"}; !sameMap(routes, want) ||
		!strings.Contains(notes["198.18.69.0/24"], "outside the domain's locators") {
		t.Errorf("sids_in_domain: routes %v, notes %v", routes, notes)
	}
}

// Each reason a learned route goes unused has its own note.
func TestOneNotePerReason(t *testing.T) {
	r := newImportRig(t, false, false)
	other := func(prefix, rd, rt, nh, sid string) {
		p, err := ToPath(VPNRoute{RD: rd, Prefix: netip.MustParsePrefix(prefix), RTs: []string{rt},
			NextHop: netip.MustParseAddr(nh), SID: netip.MustParseAddr(sid), Behavior: EndDT46}, false)
		if err != nil {
			t.Fatal(err)
		}
		p.PeerAddress = netip.MustParseAddr(nh)
		r.paths = append(r.paths, p)
	}
	other("198.18.70.0/24", "65000:9", "65000:9", "fc00:3::1", "fc00:3::200") // nobody imports 65000:9
	other("198.18.71.0/24", "65000:3", "65000:1", "fc00:3::1", "fc00:3::200") // two RDs: this one wins (sorted first)
	other("198.18.71.0/24", "65000:4", "65000:1", "fc00:3::2", "fc00:3::201") // and this one loses
	_, notes := r.sync()
	if !strings.Contains(notes["198.18.70.0/24"], "no tenant imports its route targets (65000:9)") {
		t.Errorf("an RT nobody imports: %q", notes["198.18.70.0/24"])
	}
	var losing string
	r.sp.imp.eachLearned(func(lp learnedPath) {
		if lp.route.RD == "65000:4" {
			_, losing = r.sp.imp.usedBy(lp)
		}
	})
	if !strings.Contains(losing, `tenant "A" uses another path for 198.18.71.0/24 (RD 65000:3, next hop fc00:3::1)`) {
		t.Errorf("the losing path: %q", losing)
	}
}

func sameMap(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
