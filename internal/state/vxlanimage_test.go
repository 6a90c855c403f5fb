package state

// vxlanimage_test.go: what the data plane gets for a followed VXLAN device (vxlanimage.go): the
// device as it encapsulates and as its packets are addressed, the remotes it takes packets from,
// every MAC of its bridge with where the kernel's tables send it, and its attached bridge ports as
// bridge ports; written in an order that never lets a frame reach an entry not yet there, and left
// exactly as the image says after every commit.

import (
	"slices"
	"testing"

	"github.com/seg6x/seg6x/internal/model"
)

func bridgedVXLAN() model.VXLAN {
	v := sampleVXLAN()
	v.TOS, v.TTL, v.Label, v.MTU, v.PortLearning = 0x2f, 0, 0x12345, 1500, true
	v.SrcPortLow, v.SrcPortHigh = 5000, 5010
	v.Ports = []model.BridgePort{{Name: "t1", Ifindex: 9, MTU: 1400, Learning: true}}
	v.LocalMACs[0].Dynamic = true
	v.RemoteMACs = append(v.RemoteMACs, model.RemoteMAC{MAC: "02:00:00:00:0b:02", Remote: mustAddr("fc00:b::2"), VNI: 200, Port: 8472},
		model.RemoteMAC{MAC: "02:00:00:00:0b:03", Remote: mustAddr("fc00:b::3"), Bridged: true, Dynamic: true})
	v.TunnelMACs = []model.TunnelMAC{{MAC: "02:00:00:00:0c:01", Dynamic: true}}
	return v
}

func mac(s string) [6]byte {
	k, ok := macKey(0, s)
	if !ok {
		panic(s)
	}
	return k.MAC
}

func TestVXLANImage(t *testing.T) {
	v := bridgedVXLAN()
	model.NormalizeVXLAN(&v)
	im := vxlanImage([]model.VXLAN{v})
	dev := VXDevSpec{Ifindex: 7, Bridge: 6, Local: mustAddr("fc00:a::1"), VNI: 100, Port: 4789, SrcPortLow: 5000, SrcPortSpan: 10,
		MTU: 1500, HopLimit: DefaultVXLANHopLimit, TOS: 0x2c, Label: 0x12345, PortLearning: true}
	if got := im.Devs; len(got) != 1 || got[7] != dev {
		t.Errorf("devs %+v, want %+v", got, dev)
	}
	rx := map[VXRxKey]VXDevSpec{{Local: dev.Local, Port: 4789, VNI: 100}: dev, {Local: dev.Local, Port: 4789, VNI: VXVNIAny}: dev}
	if !mapsEqual(im.Rx, rx) {
		t.Errorf("rx %+v", im.Rx)
	}
	var remotes []string
	for k := range im.Remotes {
		if k.Dev != 7 {
			t.Errorf("remote of device %d", k.Dev)
		}
		remotes = append(remotes, k.Remote.String())
	}
	slices.Sort(remotes)
	if want := []string{"fc00:a::2", "fc00:b::1", "fc00:b::2", "fc00:b::3"}; !slices.Equal(remotes, want) {
		t.Errorf("remotes %v, want %v (the default list and every MAC's remote)", remotes, want)
	}
	k := func(m string) VXMACKey { return VXMACKey{Bridge: 6, MAC: mac(m)} }
	macs := map[VXMACKey]VXMACSpec{
		k("02:00:00:00:0a:01"): {Kind: VXMACLocal, Ifindex: 9, Dynamic: true, MTU: 1400},
		k("02:00:00:00:0a:fe"): {Kind: VXMACNode},
		k("02:00:00:00:0b:01"): {Kind: VXMACTunnel, Ifindex: 7, Remote: mustAddr("fc00:b::1"), Port: 4789, VNI: 100},
		k("02:00:00:00:0b:03"): {Kind: VXMACTunnel, Ifindex: 7, Remote: mustAddr("fc00:b::3"), Port: 4789, VNI: 100, Dynamic: true},
		// Two default remotes: the kernel replicates frames to it, so no remote of its own.
		k("02:00:00:00:0c:01"): {Kind: VXMACTunnel, Ifindex: 7, Port: 4789, VNI: 100, Dynamic: true},
		// 0b:02 is not Bridged: the bridge floods frames to it, no entry.
	}
	if !mapsEqual(im.MACs, macs) {
		t.Errorf("macs\n got %+v\nwant %+v", im.MACs, macs)
	}
	// One default remote: a tunnel MAC goes there.
	v.Remotes = v.Remotes[:1]
	if e := vxlanImage([]model.VXLAN{v}).MACs[k("02:00:00:00:0c:01")]; e.Remote != v.Remotes[0] {
		t.Errorf("tunnel MAC with one default remote: %+v", e)
	}
	// No range of its own: the namespace's.
	v.SrcPortLow, v.SrcPortHigh = 0, 0
	lo, hi := LocalPortRange()
	if d := vxDevSpec(&v); d.SrcPortLow != lo || d.SrcPortSpan != hi-lo {
		t.Errorf("default source ports %d+%d, want %d..%d", d.SrcPortLow, d.SrcPortSpan, lo, hi)
	}
}

func mapsEqual[K comparable, V comparable](a, b map[K]V) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func TestVXLANCommitWritesInOrder(t *testing.T) {
	st := openTemp(t)
	st.Env = fakeEnv{"t1": 9, "u1": 8}
	for _, n := range []string{"t1", "u1"} {
		if _, err := st.Commit([]Op{{Kind: model.OpAdd, Interface: &model.Interface{Name: n}}}, false); err != nil {
			t.Fatal(err)
		}
	}
	var steps []Step
	st.dp.(*fakeDP).onApply = func(s []Step) { steps = s }
	pos := func(kind StepKind, tb Table) int {
		return slices.IndexFunc(steps, func(s Step) bool { return s.Kind == kind && s.Table() == tb })
	}

	v := bridgedVXLAN()
	if _, err := st.Commit([]Op{{Kind: model.OpAdd, Origin: model.OriginKernel, VXLAN: &v}}, false); err != nil {
		t.Fatal(err)
	}
	checkImage(t, st)
	ports := st.Ports()
	i := slices.IndexFunc(ports, func(p model.PortClass) bool { return p.Dev == "t1" })
	if i < 0 || ports[i].Side != model.SideBridge || ports[i].Bridge != "br0" || !ports[i].Learning || ports[i].VLAN != model.VLANAny {
		t.Fatalf("t1 not a bridge port: %+v", ports)
	}
	if n := slices.IndexFunc(ports, func(p model.PortClass) bool { return p.Dev == "u1" && p.Side == model.SideFabric }); n < 0 {
		t.Fatalf("u1 not fabric: %+v", ports)
	}
	got := st.dp.(*fakeDP).table(TablePorts)[PortKey{Ifindex: 9, VLAN: VLANAnyKey}]
	if want := (PortSpec{Bridge: true, BridgeLearning: true, TableID: 6}); got != want {
		t.Fatalf("t1's port entry %+v, want %+v", got, want)
	}
	// Devices, remotes and MACs before the bridge port that leads to them.
	d, m, p := pos(StepPut, TableVXDevs), pos(StepPut, TableVXMACs), pos(StepPut, TablePorts)
	if d < 0 || m < d || p < m {
		t.Fatalf("put order devs %d, macs %d, ports %d", d, m, p)
	}

	// A MAC moves to another remote, one ages out: only those entries are written.
	v = bridgedVXLAN()
	v.RemoteMACs[0].Remote = mustAddr("fc00:b::9")
	v.LocalMACs = v.LocalMACs[1:]
	if _, err := st.Commit([]Op{{Kind: model.OpReplace, Origin: model.OriginKernel, VXLAN: &v}}, false); err != nil {
		t.Fatal(err)
	}
	checkImage(t, st)
	if i := pos(StepPut, TableVXMACs); i < 0 || steps[i].Writes.Len() != 1 || steps[i].Writes.(VXMACWrites)[0].Key != (VXMACKey{Bridge: 6, MAC: mac("02:00:00:00:0b:01")}) {
		t.Fatalf("MAC puts: %+v", steps)
	}
	if i := pos(StepDelete, TableVXMACs); i < 0 || steps[i].Writes.Len() != 1 {
		t.Fatalf("MAC deletes: %+v", steps)
	}
	if pos(StepPut, TableVXDevs) >= 0 {
		t.Fatal("the device was rewritten for a MAC change")
	}

	// The device goes: its bridge port is a fabric port again before its entries go.
	if _, err := st.Commit([]Op{{Kind: model.OpDelete, Origin: model.OriginKernel, VXLAN: &model.VXLAN{Dev: "vx0"}}}, false); err != nil {
		t.Fatal(err)
	}
	checkImage(t, st)
	p, m, d = pos(StepPut, TablePorts), pos(StepDelete, TableVXMACs), pos(StepDelete, TableVXDevs)
	if p < 0 || m < p || d < m {
		t.Fatalf("delete order ports %d, macs %d, devs %d", p, m, d)
	}
	for _, tb := range []Table{TableVXDevs, TableVXRemotes, TableVXRx, TableVXMACs} {
		if n := st.dp.(*fakeDP).count(tb); n != 0 {
			t.Errorf("table %d keeps %d entries", tb, n)
		}
	}
}
