package state

// vxlan_test.go: VXLAN objects (the kernel mirror's): only origin kernel makes them, they are
// validated and normalized, a replace with the same tables is no change, a refused commit leaves
// nothing behind, and they survive a restart (snapshot + journal).

import (
	"errors"
	"net/netip"
	"os"
	"strings"
	"testing"

	"github.com/seg6x/seg6x/internal/model"
)

func sampleVXLAN() model.VXLAN {
	return model.VXLAN{Dev: "vx0", Ifindex: 7, VNI: 100, Local: mustAddr("fc00:a::1"), Port: 4789, Learning: false,
		Bridge: "br0", BridgeIfindex: 6, Remotes: []netip.Addr{mustAddr("fc00:b::1"), mustAddr("fc00:a::2")},
		RemoteMACs: []model.RemoteMAC{{MAC: "02:00:00:00:0B:01", Remote: mustAddr("fc00:b::1"), Bridged: true}},
		LocalMACs: []model.LocalMAC{{MAC: "02:00:00:00:0a:01", Port: "t1", Ifindex: 9},
			{MAC: "02:00:00:00:0a:fe", Port: "t1", Ifindex: 9, Local: true}}}
}

func TestVXLANOnlyFromTheKernel(t *testing.T) {
	st := openTemp(t)
	v := sampleVXLAN()
	_, err := st.Commit([]Op{{Kind: model.OpAdd, VXLAN: &v}}, false)
	var fe *model.FieldError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "--mirror-kernel") {
		t.Fatalf("API add of a VXLAN device: %v", err)
	}
	d, err := st.Commit([]Op{{Kind: model.OpAdd, Origin: model.OriginKernel, VXLAN: &v}}, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Added) != 1 || d.Added[0] != `vxlan "vx0"` {
		t.Fatalf("diff %+v", d)
	}
	got := st.VXLANs()
	if len(got) != 1 || got[0].RemoteMACs[0].MAC != "02:00:00:00:0b:01" || got[0].Remotes[0] != mustAddr("fc00:a::2") ||
		got[0].Origin != model.OriginKernel {
		t.Fatalf("stored (MACs lower case, remotes sorted): %+v", got)
	}
	// The caller's lists are not the store's.
	v.RemoteMACs[0].Remote = mustAddr("fc00:c::1")
	if st.VXLANs()[0].RemoteMACs[0].Remote != mustAddr("fc00:b::1") {
		t.Fatal("the store shares the caller's list")
	}
	// The same device again, lists in another order: no change.
	v = sampleVXLAN()
	v.Remotes[0], v.Remotes[1] = v.Remotes[1], v.Remotes[0]
	if d, err := st.Commit([]Op{{Kind: model.OpReplace, Origin: model.OriginKernel, VXLAN: &v}}, false); err != nil || len(d.Changed)+len(d.Added) != 0 {
		t.Fatalf("same tables: %+v %v", d, err)
	}
	// The API cannot delete it either.
	if _, err := st.Commit([]Op{{Kind: model.OpDelete, VXLAN: &model.VXLAN{Dev: "vx0"}}}, false); err == nil {
		t.Fatal("API delete of the kernel's VXLAN device accepted")
	}
	if _, err := st.Commit([]Op{{Kind: model.OpDelete, Origin: model.OriginKernel, VXLAN: &model.VXLAN{Dev: "vx0"}}}, false); err != nil || len(st.VXLANs()) != 0 {
		t.Fatalf("kernel delete: %v, left %+v", err, st.VXLANs())
	}
}

func TestVXLANValidation(t *testing.T) {
	cases := []struct {
		name, want string
		edit       func(v *model.VXLAN)
	}{
		{"ipv4 local", "local", func(v *model.VXLAN) { v.Local = mustAddr("198.18.0.1") }},
		{"link-local", "local", func(v *model.VXLAN) { v.Local = mustAddr("fe80::1") }},
		{"vni", "24 bits", func(v *model.VXLAN) { v.VNI = 1 << 24 }},
		{"port", "port", func(v *model.VXLAN) { v.Port = 0 }},
		{"no bridge", "no bridge port", func(v *model.VXLAN) { v.Bridge = "" }},
		{"multicast remote", "VTEP", func(v *model.VXLAN) { v.Remotes = []netip.Addr{mustAddr("ff0e::1")} }},
		{"bad mac", "not an Ethernet", func(v *model.VXLAN) { v.RemoteMACs[0].MAC = "02:00:00:00:0b" }},
		{"multicast mac", "multicast MAC", func(v *model.VXLAN) { v.RemoteMACs[0].MAC = "01:00:5e:00:00:01" }},
		{"mac twice", "behind fc00:b::1 and on port t1", func(v *model.VXLAN) { v.LocalMACs[0].MAC = "02:00:00:00:0b:01" }},
		{"port is the device", "no local port", func(v *model.VXLAN) { v.LocalMACs[0].Port = "vx0" }},
		{"label", "20 bits", func(v *model.VXLAN) { v.Label = 1 << 20 }},
		{"source ports", "empty", func(v *model.VXLAN) { v.SrcPortLow, v.SrcPortHigh = 5000, 4000 }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := openTemp(t)
			v := sampleVXLAN()
			c.edit(&v)
			_, err := st.Commit([]Op{{Kind: model.OpReplace, Origin: model.OriginKernel, VXLAN: &v}}, false)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error naming %q", err, c.want)
			}
			if len(st.VXLANs()) != 0 {
				t.Fatal("refused object stored")
			}
		})
	}
}

// A batch refused for another object leaves no VXLAN behind; a committed device survives a restart,
// its MAC tables do not (the kernel mirror reads them again), and a change of MACs alone is not
// journaled.
func TestVXLANCommitsAndRestarts(t *testing.T) {
	st := openTemp(t)
	v := sampleVXLAN()
	bad := model.Tenant{Name: "", Table: 100}
	if _, err := st.Commit([]Op{{Kind: model.OpReplace, Origin: model.OriginKernel, VXLAN: &v},
		{Kind: model.OpAdd, Origin: model.OriginKernel, Tenant: &bad}}, false); err == nil {
		t.Fatal("bad tenant accepted")
	}
	if len(st.VXLANs()) != 0 {
		t.Fatalf("VXLAN of a refused batch stored: %+v", st.VXLANs())
	}
	if _, err := st.Commit([]Op{{Kind: model.OpReplace, Origin: model.OriginKernel, VXLAN: &v}}, false); err != nil {
		t.Fatal(err)
	}
	if err := st.Compact(); err != nil { // this one in the snapshot, the next in the journal
		t.Fatal(err)
	}
	v2 := sampleVXLAN()
	v2.Dev, v2.Ifindex, v2.VNI, v2.Bridge = "vx1", 8, 200, "br1"
	if _, err := st.Commit([]Op{{Kind: model.OpReplace, Origin: model.OriginKernel, VXLAN: &v2}}, false); err != nil {
		t.Fatal(err)
	}
	v.RemoteMACs = append(v.RemoteMACs, model.RemoteMAC{MAC: "02:00:00:00:0b:02", Remote: mustAddr("fc00:b::1")})
	if _, err := st.Commit([]Op{{Kind: model.OpReplace, Origin: model.OriginKernel, VXLAN: &v}}, false); err != nil {
		t.Fatal(err)
	}
	want := st.Current()
	if len(want.VXLANs) != 2 || len(want.VXLANs[0].RemoteMACs) != 2 {
		t.Fatalf("state before restart: %+v", want.VXLANs)
	}
	journal, err := os.ReadFile(st.journalPath())
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(journal), `"vxlan"`); n != 1 {
		t.Fatalf("%d VXLAN records journaled for one new device and a MAC change, want 1:\n%s", n, journal)
	}
	for i := range want.VXLANs {
		want.VXLANs[i].RemoteMACs, want.VXLANs[i].LocalMACs = nil, nil
	}
	st = reopen(t, st)
	if got := st.Current(); !model.Same(got, want) {
		t.Fatalf("after restart:\n got %+v\nwant %+v", got.VXLANs, want.VXLANs)
	}
	if _, err := st.Commit([]Op{{Kind: model.OpDelete, Origin: model.OriginKernel, VXLAN: &model.VXLAN{Dev: "vx1"}}}, false); err != nil {
		t.Fatal(err)
	}
	st = reopen(t, st)
	if got := st.VXLANs(); len(got) != 1 || got[0].Dev != "vx0" {
		t.Fatalf("after delete and restart: %+v", got)
	}
}
