package dataplane_test

// store_test.go: the BPF data plane under a store (root: bpffs and maps): a failed step undoes the
// maps, what a crashed commit left is reconciled away, a lost map layout is refilled, and after
// commits the maps hold exactly the encoded image of the running state.

import (
	"errors"
	"net/netip"
	"os"
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/seg6x/seg6x/internal/dataplane"
	"github.com/seg6x/seg6x/internal/model"
	"github.com/seg6x/seg6x/internal/state"
	"github.com/seg6x/seg6x/tools/testsupport"
)

func openStore(t *testing.T, dir string, env state.Env) *state.Store {
	return testsupport.OpenStore(t, dir, env)
}

func base() model.State {
	a, p := netip.MustParseAddr, netip.MustParsePrefix
	return model.State{
		Tenants: []model.Tenant{{Name: "blue", Table: 100, Ports: []model.Port{{Dev: "eth1", VLAN: 100}}}},
		Routes:  []model.Route{{Tenant: "blue", Prefix: p("198.18.2.0/24"), Segs: []netip.Addr{a("fc00:2::1"), a("fc00:3::64")}}},
		SIDs: []model.SID{{SID: a("fc00:1::64"), Action: "End.DT4", Tenant: "blue", VLAN: 100},
			{SID: a("fc00:1::65"), Action: "End.DX4", NH4: a("198.18.9.2")}},
	}
}

func count(t *testing.T, m *ebpf.Map) int {
	t.Helper()
	n := 0
	it := m.Iterate()
	var k, v []byte
	for it.Next(&k, &v) {
		n++
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}

// A failure half way through (attaching native XDP to loopback, which has none, after tx_ports,
// SIDs, routes and ports were written) leaves the maps as they were.
func TestBPFFailedApplyRollsBack(t *testing.T) {
	st := openStore(t, t.TempDir(), testsupport.FakeEnv{"eth1": 7, "lo": 1})
	next := base()
	next.Interfaces = []model.Interface{{Name: "lo", Mode: "native"}}
	_, err := st.Apply(next, false)
	var we *model.WriteError
	if err == nil || !strings.Contains(err.Error(), "attach lo") || !errors.As(err, &we) {
		t.Fatalf("error %v, want a WriteError from attaching lo", err)
	}
	m := dataplane.MapsOf(st)
	for name, mm := range map[string]*ebpf.Map{"tx_ports": m.TxPorts, "sids": m.Sids, "routes4": m.Routes4, "ports": m.Ports} {
		if n := count(t, mm); n != 0 {
			t.Errorf("%s has %d entries after a failed apply", name, n)
		}
	}
}

// After commits the maps need nothing from Reconcile; a stale entry and a missing one (a crash
// between a map write and the journal) are fixed by it.
func TestBPFReconcile(t *testing.T) {
	st := openStore(t, t.TempDir(), testsupport.FakeEnv{"eth1": 7})
	if _, err := st.Apply(base(), false); err != nil {
		t.Fatal(err)
	}
	rep, err := st.Reconcile()
	if err != nil || rep.Written != 0 || rep.Removed != 0 {
		t.Fatalf("maps differ from the image after commits: %+v %v", rep, err)
	}
	m := dataplane.MapsOf(st)
	stale := dataplane.Seg6xRoute4Key{TableId: 77, Plen: 24, Addr: [4]byte{198, 18, 99, 0}}
	if err := m.Routes4.Put(stale, dataplane.Seg6xEncapVal{PolicyId: 1}); err != nil {
		t.Fatal(err)
	}
	if err := m.Sids.Delete(netip.MustParseAddr("fc00:1::64").As16()); err != nil {
		t.Fatal(err)
	}
	rep, err = st.Reconcile()
	if err != nil || rep.Removed != 1 || rep.Written != 1 {
		t.Fatalf("reconcile %+v %v, want 1 stale route removed and 1 SID written", rep, err)
	}
}

// Maps of a new layout (here: none at all) are filled from the saved state when the store opens.
func TestBPFNewMapsFilled(t *testing.T) {
	testsupport.NeedRoot(t, "bpffs, BPF maps")
	dir := t.TempDir()
	st, err := dataplane.OpenStore(dir, testsupport.FakeEnv{"eth1": 7}, state.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Apply(base(), false); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if err := os.RemoveAll(dataplane.MapPinDir(dir)); err != nil {
		t.Fatal(err)
	}
	n := openStore(t, dir, testsupport.FakeEnv{"eth1": 7})
	if n.NewMaps == nil {
		t.Fatal("new maps not reported")
	}
	if c := count(t, dataplane.MapsOf(n).Sids); c != 2 {
		t.Fatalf("new maps hold %d SIDs, want 2", c)
	}
	if c := count(t, dataplane.MapsOf(n).Routes4); c != 1 {
		t.Fatalf("new maps hold %d routes, want 1", c)
	}
}
