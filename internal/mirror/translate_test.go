package mirror

import (
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/seg6x/seg6x/internal/model"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

func rt(fam int, table uint32, dst string) *kernelRoute {
	return &kernelRoute{Family: fam, Table: table, Dst: netip.MustParsePrefix(dst), Type: unix.RTN_UNICAST}
}

func seg6(fam int, dst string, mode int, segs ...string) *kernelRoute {
	r := rt(fam, unix.RT_TABLE_MAIN, dst)
	r.Encap, r.Seg6Mode = encapSeg6, mode
	for _, s := range segs {
		r.Segs = append(r.Segs, netip.MustParseAddr(s))
	}
	return r
}

func local(dst string, action uint32, attrs ...uint16) *kernelRoute {
	r := rt(unix.AF_INET6, unix.RT_TABLE_MAIN, dst)
	r.Encap, r.Local = encapSeg6Local, &seg6Local{Action: action, Attrs: attrs}
	return r
}

func defaultRules() map[int][]netlink.Rule {
	rs := []netlink.Rule{{Priority: 0, Table: unix.RT_TABLE_LOCAL, Type: 1}, {Priority: 32766, Table: unix.RT_TABLE_MAIN, Type: 1},
		{Priority: 32767, Table: 253, Type: 1}}
	return map[int][]netlink.Rule{unix.AF_INET: rs, unix.AF_INET6: rs}
}

func build(routes ...*kernelRoute) map[string]*kernelRoute {
	m := map[string]*kernelRoute{}
	for _, r := range routes {
		m[r.key()] = r
	}
	return m
}

func statusOf(d *desired, route string) RouteStatus {
	for _, s := range d.status {
		if strings.HasPrefix(s.Route, route) {
			return s
		}
	}
	return RouteStatus{Reason: "no status"}
}

func TestTranslate(t *testing.T) {
	in := &input{
		routes: build(
			seg6(unix.AF_INET, "198.18.2.0/24", seg6ModeEncap, "fc00:2::1", "fc00:2::2"),
			seg6(unix.AF_INET, "198.18.3.0/24", seg6ModeEncapRed, "fc00:2::1"),
			seg6(unix.AF_INET, "198.18.4.0/24", seg6ModeL2Encap, "fc00:2::1"),
			rt(unix.AF_INET, unix.RT_TABLE_MAIN, "198.18.2.128/25"),
			rt(unix.AF_INET, unix.RT_TABLE_LOCAL, "198.18.2.1/32"),
			local("fc00:1::1/128", 1),
			local("fc00:1::2/128", 6, localNH4),
			local("fc00:1::3/128", 1, localFlavors),
			local("fc00:1::/64", 1),
			local("fc00:1::4/128", 9),
			local("fc00:1::5/128", 2, localNH6, localOIF),
			local("fc00:1::6/128", 1),
			local("fc00:1::7/128", 15, localBPF), // End.BPF
		),
		rules:     defaultRules(),
		ifaces:    []model.Interface{{Name: "eth0"}, {Name: "eth1"}},
		userPorts: map[model.Port]string{{Dev: "eth1"}: "blue"},
		userSIDs:  map[netip.Addr]bool{netip.MustParseAddr("fc00:1::6"): true},
	}
	in.routes[local("fc00:1::2/128", 6).key()].Local.NH4 = netip.MustParseAddr("198.18.9.2")
	in.routes[local("fc00:1::3/128", 1).key()].Local.Flavors = flvPSP
	d := translate(in)

	ten, ok := d.tenants["kernel-main-ipv4"]
	if !ok || len(ten.Ports) != 1 || ten.Ports[0].Dev != "eth0" || !ten.KernelFallback {
		t.Fatalf("tenants %+v (eth1 untagged belongs to an API tenant)", d.tenants)
	}
	rs := d.routes["kernel-main-ipv4"]
	if r := rs[netip.MustParsePrefix("198.18.2.0/24")]; r.Mode != model.ModeEncap || len(r.Segs) != 2 || r.Segs[0] != netip.MustParseAddr("fc00:2::1") {
		t.Errorf("seg6 route: %+v", r)
	}
	if r := rs[netip.MustParsePrefix("198.18.3.0/24")]; r.Mode != model.ModeEncapRed {
		t.Errorf("encap.red route: %+v", r)
	}
	for _, p := range []string{"198.18.4.0/24", "198.18.2.128/25", "198.18.2.1/32"} {
		if r := rs[netip.MustParsePrefix(p)]; r.Mode != model.ModePass {
			t.Errorf("%s should be a pass route: %+v", p, r)
		}
	}
	if len(d.sids) != 3 || d.sids[netip.MustParseAddr("fc00:1::2")].Action != "End.DX4" {
		t.Errorf("SIDs %+v", d.sids)
	}
	if sd := d.sids[netip.MustParseAddr("fc00:1::3")]; sd.Action != "End" || !slices.Equal(sd.Flavors, []string{"psp"}) {
		t.Errorf("End flavors psp: %+v", sd)
	}
	for route, want := range map[string]string{
		"198.18.2.0/24":  "",
		"198.18.4.0/24":  "mode l2encap is not accelerated",
		"fc00:1::3/128":  "",
		"fc00:1::/64":    "route fc00:1::4/128 (and 3 more) inside the prefix is left to the kernel",
		"fc00:1::4/128":  "action End.B6 is not implemented",
		"fc00:1::5/128":  "oif attribute",
		"fc00:1::6/128":  "conflict: the same SID is set through the seg6x API",
		"fc00:1::7/128":  "End.BPF program: the kernel runs it (an lwt_seg6local program on the skb, which XDP cannot run; seg6x's own is a plugin SID, docs/plugins.md)",
		"fc00:1::1/128 ": "",
	} {
		s := statusOf(d, route)
		if want == "" && !s.Accelerated {
			t.Errorf("%s not accelerated: %s", route, s.Reason)
		}
		if want != "" && (s.Accelerated || !strings.Contains(s.Reason, want)) {
			t.Errorf("%s: accelerated %v reason %q, want %q", route, s.Accelerated, s.Reason, want)
		}
	}
	if len(d.notes) == 0 || !strings.Contains(strings.Join(d.notes, "\n"), `eth1 untagged belongs to tenant "blue"`) {
		t.Errorf("notes %v", d.notes)
	}

	// A fwmark rule in front of main for eth0: seg6x cannot tell which table a packet uses.
	in.rules[unix.AF_INET] = append([]netlink.Rule{{Priority: 100, Table: 100, Mark: 7, Type: 1}}, in.rules[unix.AF_INET]...)
	d = translate(in)
	if len(d.tenants) != 0 || !strings.Contains(strings.Join(d.notes, "\n"), "policy rule 100 (fwmark)") {
		t.Fatalf("with a fwmark rule: tenants %v notes %v", d.tenants, d.notes)
	}
	if s := statusOf(d, "198.18.2.0/24"); s.Accelerated || !strings.Contains(s.Reason, "no attached interface") {
		t.Fatalf("with a fwmark rule the seg6 route is %+v", s)
	}
	// An iif rule sends eth0 to table 100: its seg6 routes become tenant kernel-100-ipv4.
	r100 := seg6(unix.AF_INET, "198.18.7.0/24", seg6ModeEncap, "fc00:2::7")
	r100.Table = 100
	in.routes[r100.key()] = r100
	in.rules[unix.AF_INET][0] = netlink.Rule{Priority: 100, Table: 100, IifName: "eth0", Type: 1}
	d = translate(in)
	if _, ok := d.routes["kernel-100-ipv4"][netip.MustParsePrefix("198.18.7.0/24")]; !ok {
		t.Fatalf("iif rule: tenants %v", d.tenants)
	}
}

// usid is a seg6local route with a SEG6_LOCAL_FLAVORS attribute (ops: the flv* bits).
func usid(dst string, action uint32, ops uint32, lb, nf uint8) *kernelRoute {
	r := local(dst, action, localFlavors)
	r.Local.Flavors, r.Local.LBLen, r.Local.NFLen = ops, lb, nf
	if action == 2 {
		r.Local.Attrs = []uint16{localNH6, localFlavors}
		r.Local.NH6 = netip.MustParseAddr("fc00:e1::2")
	}
	return r
}

func TestTranslateSIDPrefixesAndFlavors(t *testing.T) {
	nh := netip.MustParseAddr("fc00:e1::2")
	other := usid("fcbb:0:900::/48", 1, flvNextCSID, 32, 16)
	other.Table = 200
	lower := usid("fcbb:0:a00::/48", 1, flvNextCSID, 32, 16)
	lower.Priority = 1024
	lowest := local("fcbb:0:a00::/48", 1)
	lowest.Priority = 10
	in := &input{
		routes: build(
			usid("fcbb:0:100::/48", 1, flvNextCSID, 32, 16),        // uN
			usid("fcbb:0:100:e001::/64", 2, flvNextCSID, 32, 32),   // uA inside the uN, accelerated too
			usid("2001:db8:100::/48", 1, flvNextCSID, 0, 0),        // lengths left to the defaults
			usid("fcbb:0:200::/48", 1, flvNextCSID|flvPSP, 48, 16), // psp,next-csid: the kernel runs next-csid only
			usid("fcbb:0:300::/48", 1, flvPSP, 0, 0),               // psp alone
			usid("fcbb:0:301::/48", 1, flvPSP, 32, 16),             // psp alone, lengths (the kernel ignores them)
			usid("fcbb:0:400::/48", 2, flvNextCSID|flvPSP, 32, 16), // End.X takes no psp
			usid("fcbb:0:500::/48", 1, flvUSP|flvUSD, 0, 0),        // usp, usd (the kernel rejects them)
			usid("fcbb:0:501::/48", 1, flvPSP|flvUSP, 0, 0),        // psp with usp: refused as a whole
			usid("fcbb:0:600::/48", 1, 1, 0, 0),                    // bit 0 (UNSPEC)
			usid("fcbb:0:700::/48", 1, flvNextCSID, 17, 16),        // lengths the state refuses
			usid("fcbb:0:800::/48", 1, 0, 0, 0),                    // operation 0: no flavor
			usid("fcbb:0:800::/64", 1, flvNextCSID, 32, 16),        // same address as the /48, longer
			other, // not the fabric's table
			usid("fcbb:0:b00::/48", 1, flvNextCSID, 32, 16), // covers a plain route
			rt(unix.AF_INET6, unix.RT_TABLE_MAIN, "fcbb:0:b00:5::/64"),
			usid("fcbb:0:c00::/48", 1, flvNextCSID, 32, 16), // covers a local address
			rt(unix.AF_INET6, unix.RT_TABLE_LOCAL, "fcbb:0:c00::1/128"),
			usid("fcbb:0:d00::/48", 1, flvNextCSID, 32, 16), // covers a refused SID
			local("fcbb:0:d00::7/128", 9),
			usid("fcbb:0:e00::/48", 1, flvNextCSID, 32, 16), // a route of another table inside: not its business
			func() *kernelRoute { r := rt(unix.AF_INET6, 200, "fcbb:0:e00:5::/64"); return r }(),
			lower, lowest,
			usid("fc00:1::9/128", 3, flvNextCSID, 32, 16), // the kernel keeps no flavors on End.T
			usid("fc00:1::a/128", 3, flvPSP, 0, 0),
		),
		rules:  defaultRules(),
		ifaces: []model.Interface{{Name: "eth0"}},
	}
	in.routes[usid("fc00:1::9/128", 3, 0, 0, 0).key()].Local.Table = 100
	in.routes[usid("fc00:1::9/128", 3, 0, 0, 0).key()].Local.Attrs = []uint16{localTable, localFlavors}
	in.routes[usid("fc00:1::a/128", 3, 0, 0, 0).key()].Local.Table = 100
	in.routes[usid("fc00:1::a/128", 3, 0, 0, 0).key()].Local.Attrs = []uint16{localTable, localFlavors}
	d := translate(in)

	p := netip.MustParsePrefix
	want := map[netip.Prefix]model.SID{
		p("fcbb:0:100::/48"):      {Action: "End", Flavors: []string{"next-csid"}, LBLen: 32, NFLen: 16},
		p("fcbb:0:100:e001::/64"): {Action: "End.X", NH6: nh, Flavors: []string{"next-csid"}, LBLen: 32, NFLen: 32},
		p("2001:db8:100::/48"):    {Action: "End", Flavors: []string{"next-csid"}, LBLen: 32, NFLen: 16},
		p("fcbb:0:200::/48"):      {Action: "End", Flavors: []string{"next-csid"}, LBLen: 48, NFLen: 16},
		p("fcbb:0:300::/48"):      {Action: "End", Flavors: []string{"psp"}},
		p("fcbb:0:301::/48"):      {Action: "End", Flavors: []string{"psp"}},
		p("fcbb:0:800::/64"):      {Action: "End", Flavors: []string{"next-csid"}, LBLen: 32, NFLen: 16},
		p("fcbb:0:e00::/48"):      {Action: "End", Flavors: []string{"next-csid"}, LBLen: 32, NFLen: 16},
		p("fcbb:0:a00::/48"):      {Action: "End"},
	}
	for pf, w := range want {
		w.SID, w.Bits = pf.Addr(), uint8(pf.Bits())
		got, ok := d.sids[pf.Addr()]
		if !ok {
			t.Errorf("%s: no SID (%s)", pf, statusOf(d, pf.String()+" ").Reason)
			continue
		}
		if !sameSID(got, w) || got.Name() != pf.String() {
			t.Errorf("%s: SID %+v, want %+v", pf, got, w)
		}
		if s := statusOf(d, pf.String()+" "); !s.Accelerated || s.Object != "sid "+pf.String() {
			t.Errorf("%s: status %+v", pf, s)
		}
	}
	if len(d.sids) != len(want) {
		t.Errorf("%d SIDs, want %d: %+v", len(d.sids), len(want), d.sids)
	}
	for route, reason := range map[string]string{
		"fcbb:0:400::/48 ": "flavor psp on End.X is not mirrored",
		"fcbb:0:500::/48 ": "flavors usp, usd on End are not mirrored",
		"fcbb:0:501::/48 ": "flavor usp on End is not mirrored",
		"fcbb:0:600::/48 ": "flavor bit 0 on End is not mirrored",
		"fcbb:0:700::/48 ": "lblen: 17: a multiple of 8 from 8 to 120",
		"fcbb:0:800::/48 ": "SID fcbb:0:800::/64 has the same address",
		"fcbb:0:900::/48 ": "in table 200",
		"fcbb:0:b00::/48 ": "route fcbb:0:b00:5::/64 inside the prefix is left to the kernel",
		"fcbb:0:c00::/48 ": "local address fcbb:0:c00::1 inside the prefix",
		"fcbb:0:d00::/48 ": "route fcbb:0:d00::7/128 inside the prefix",
		"fcbb:0:a00::/48 table main encap seg6local action End flavors": "a route with a lower metric for the same prefix wins",
		"fc00:1::9/128 ": "flavor next-csid on End.T is not mirrored",
		"fc00:1::a/128 ": "flavor psp on End.T is not mirrored",
	} {
		if s := statusOf(d, route); s.Accelerated || !strings.Contains(s.Reason, reason) {
			t.Errorf("%s: accelerated %v reason %q, want %q", route, s.Accelerated, s.Reason, reason)
		}
	}
	// How the route reads in seg6x show kernel.
	if s := statusOf(d, "fcbb:0:200::/48 "); !strings.Contains(s.Route, "action End flavors psp,next-csid lblen 48 nflen 16") {
		t.Errorf("route text %q", s.Route)
	}
}
