package state

// vpnsid_test.go: the bgp: section and the tenants' vpn: sections. Each vpn: tenant gets a service SID
// from its locator (lowest free function), kept across config applies and restarts while the locator
// stays, moved when it changes, removed with the section or the tenant; the API cannot touch it; bad
// sections are refused with nothing applied.

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/seg6x/seg6x/internal/model"
)

func vpnState() model.State {
	st := baseState()
	st.BGP = &model.BGP{ASN: 65000, RouterID: mustAddr("198.18.255.1"), Locator: mustPrefix("fc00:1::/48"),
		Neighbors: []model.Neighbor{{Address: mustAddr("fc00:9::1"), ASN: 65000}}}
	st.Tenants[0].VPN = &model.VPN{RD: "65000:100", ImportRT: []string{"65000:100"}, ExportRT: []string{"65000:100"},
		Advertise: []netip.Prefix{mustPrefix("198.18.1.0/24")}}
	st.Tenants = append(st.Tenants, model.Tenant{Name: "red", Table: 200, Ports: []model.Port{{Dev: "eth1", VLAN: 200}},
		VPN: &model.VPN{RD: "198.18.255.1:200", ImportRT: []string{"65000:200"}, Behavior: "End.DT4"}})
	return st
}

// serviceSIDs is each tenant's service SID and its action, as the store shows it and as the data
// plane holds it.
func serviceSIDs(t *testing.T, st *Store) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, tn := range st.Tenants() {
		if tn.VPN != nil && tn.VPN.ServiceSID.IsValid() {
			out[tn.Name] = tn.VPN.ServiceSID.String()
		}
	}
	n := 0
	for _, sd := range st.SIDs() {
		if sd.Origin != model.OriginVPN {
			continue
		}
		n++
		if out[sd.Tenant] != sd.SID.String() {
			t.Fatalf("SID %s of origin vpn for tenant %q, but the tenant shows %q", sd.SID, sd.Tenant, out[sd.Tenant])
		}
		if _, ok := fakeOf(st).table(TableSIDs)[sd.Prefix()]; !ok {
			t.Fatalf("service SID %s is not in the data plane", sd.SID)
		}
		out[sd.Tenant] += " " + sd.Action
	}
	if n != len(out) {
		t.Fatalf("%d service SIDs for %d tenants: %v", n, len(out), out)
	}
	return out
}

func wantSIDs(t *testing.T, st *Store, want map[string]string) {
	t.Helper()
	got := serviceSIDs(t, st)
	if len(got) != len(want) {
		t.Fatalf("service SIDs %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("service SIDs %v, want %v", got, want)
		}
	}
	checkImage(t, st)
}

func TestVPNServiceSIDs(t *testing.T) {
	st := openTemp(t)
	if _, err := st.Apply(vpnState(), false); err != nil {
		t.Fatal(err)
	}
	// Lowest free function of fc00:1::/48 with 16-bit functions: fc00:1:0:1::, then fc00:1:0:2::
	// (tenants are given theirs in name order).
	first := map[string]string{"blue": "fc00:1:0:1:: End.DT46", "red": "fc00:1:0:2:: End.DT4"}
	wantSIDs(t, st, first)
	for _, sd := range st.SIDs() { // decapsulated packets are tagged with the tenant's port VLAN
		if sd.Origin == model.OriginVPN && sd.VLAN != map[string]uint16{"blue": 100, "red": 200}[sd.Tenant] {
			t.Fatalf("service SID %s of %s: vlan %d", sd.SID, sd.Tenant, sd.VLAN)
		}
	}
	if b := st.BGPConfig(); b == nil || b.FunctionBits != 16 || b.BlockBits != 32 || b.GracefulRestart.RestartTime != 120 ||
		len(b.Neighbors[0].Families) != 2 {
		t.Fatalf("bgp defaults not filled: %+v", b)
	}

	// The same file again: no change, same SIDs.
	if d, err := st.Apply(vpnState(), false); err != nil || !d.Empty() {
		t.Fatalf("re-apply: diff %+v err %v", d, err)
	}
	// A restart keeps them (and the bgp section).
	st = reopen(t, st)
	wantSIDs(t, st, first)
	if st.BGPConfig() == nil || st.BGPConfig().ASN != 65000 {
		t.Fatalf("bgp section lost across a restart: %+v", st.BGPConfig())
	}

	// The API cannot delete or take a service SID.
	_, err := st.Commit([]Op{{Kind: model.OpDelete, SID: &model.SID{SID: mustAddr("fc00:1:0:1::")}}}, false)
	if err == nil || !strings.Contains(err.Error(), "vpn.locator") {
		t.Fatalf("deleting a service SID through the API: %v", err)
	}

	// A config SID at the next free function: a new tenant skips it.
	next := vpnState()
	next.SIDs = append(next.SIDs, model.SID{SID: mustAddr("fc00:1:0:3::"), Action: "End"})
	next.Tenants = append(next.Tenants, model.Tenant{Name: "green", Table: 300, VPN: &model.VPN{RD: "65000:300", ExportRT: []string{"65000:300"}}})
	if _, err := st.Apply(next, false); err != nil {
		t.Fatal(err)
	}
	first["green"] = "fc00:1:0:4:: End.DT46"
	wantSIDs(t, st, first)

	// blue moves to its own locator; red keeps its SID; removing green's vpn: removes its SID.
	next.Tenants[0].VPN.Locator = mustPrefix("fc00:1:8::/48")
	next.Tenants[2].VPN = nil
	if _, err := st.Apply(next, false); err != nil {
		t.Fatal(err)
	}
	wantSIDs(t, st, map[string]string{"blue": "fc00:1:8:1:: End.DT46", "red": "fc00:1:0:2:: End.DT4"})

	// A fixed SID; a behavior change keeps the address.
	next.Tenants[0].VPN.SID = mustAddr("fc00:1:8:99::")
	next.Tenants[1].VPN.Behavior = "End.DT6"
	if _, err := st.Apply(next, false); err != nil {
		t.Fatal(err)
	}
	wantSIDs(t, st, map[string]string{"blue": "fc00:1:8:99:: End.DT46", "red": "fc00:1:0:2:: End.DT6"})

	// Removing the tenant removes its SID (no "still used" error); removing bgp: keeps blue's locator SID,
	// red had only bgp.locator: refused until red has a locator of its own.
	next.Tenants = next.Tenants[:2]
	next.BGP = nil
	_, err = st.Apply(next, false)
	if err == nil || !strings.Contains(err.Error(), `tenant "red"`) || !strings.Contains(err.Error(), "no locator") {
		t.Fatalf("removing the locator red's SID comes from: %v", err)
	}
	next.Tenants[1].VPN.Locator = mustPrefix("fc00:1:9::/48")
	if _, err := st.Apply(next, false); err != nil {
		t.Fatal(err)
	}
	wantSIDs(t, st, map[string]string{"blue": "fc00:1:8:99:: End.DT46", "red": "fc00:1:9:1:: End.DT6"})
	if st.BGPConfig() != nil {
		t.Fatalf("bgp section still there")
	}
	next.Tenants = next.Tenants[:1]
	if _, err := st.Apply(next, false); err != nil {
		t.Fatal(err)
	}
	wantSIDs(t, st, map[string]string{"blue": "fc00:1:8:99:: End.DT46"})
	st = reopen(t, st)
	wantSIDs(t, st, map[string]string{"blue": "fc00:1:8:99:: End.DT46"})
}

func TestVPNRefusesBadSections(t *testing.T) {
	cases := []struct {
		edit func(s *model.State)
		want string
	}{
		{func(s *model.State) { s.BGP.ASN = 0 }, "asn"},
		{func(s *model.State) { s.BGP.RouterID = mustAddr("fc00::1") }, "router_id"},
		{func(s *model.State) { s.BGP.Locator = mustPrefix("fc00:1::1/48") }, "host bits"},
		{func(s *model.State) { s.BGP.Transposition, s.BGP.FunctionBits = true, 24 }, "function_bits"},
		{func(s *model.State) { s.BGP.Neighbors = append(s.BGP.Neighbors, s.BGP.Neighbors[0]) }, "listed twice"},
		{func(s *model.State) { s.BGP.Neighbors[0].Families = []string{"evpn"} }, "families"},
		{func(s *model.State) { s.Tenants[0].VPN.RD = "65000" }, "vpn.rd"},
		{func(s *model.State) { s.Tenants[0].VPN.ImportRT = []string{"70000:70000"} }, "4-byte ASN"},
		{func(s *model.State) { s.Tenants[0].VPN.ImportRT, s.Tenants[0].VPN.ExportRT = nil, nil }, "neither learn"},
		{func(s *model.State) { s.Tenants[1].VPN.Advertise = []netip.Prefix{mustPrefix("2001:db8::/64")} }, "other family"},
		{func(s *model.State) { s.Tenants[0].VPN.Behavior = "End.DX4" }, "vpn.behavior"},
		{func(s *model.State) { s.Tenants[0].Table = 0 }, "needs a table"},
		{func(s *model.State) { s.Tenants[0].VPN.SID = mustAddr("fc00:1:0:2::") }, "service SID of tenant \"red\""}, // red's
		{func(s *model.State) { s.SIDs[0].SID = mustAddr("fc00:1:0:1::") }, "service SID of a tenant"},              // blue's
	}
	for _, tc := range cases {
		st := openTemp(t)
		if _, err := st.Apply(vpnState(), false); err != nil {
			t.Fatal(err)
		}
		before := serviceSIDs(t, st)
		gen := st.Gen()
		bad := vpnState()
		tc.edit(&bad)
		_, err := st.Apply(bad, false)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("want an error containing %q, got %v", tc.want, err)
		}
		if st.Gen() != gen || len(serviceSIDs(t, st)) != len(before) {
			t.Errorf("%q: a refused change changed the state", tc.want)
		}
		checkImage(t, st)
	}
}
