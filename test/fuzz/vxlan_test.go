package fuzz

// vxlan_test.go: the fuzz run's VXLAN device, committed as the kernel mirror makes it: tc0
// a port of its bridge, fab0 where VXLAN arrives, remotes behind big0 (MTU 9000) and tf0 (MTU 1500:
// large frames are fragmented), and the oracle's view of the same device.

import (
	"net"
	"net/netip"
	"testing"

	"github.com/seg6x/seg6x/internal/model"
	"github.com/seg6x/seg6x/internal/state"
	"github.com/seg6x/seg6x/tools/pktcheck"
	"github.com/seg6x/seg6x/tools/pktfuzz"
)

type vxlanOracle struct {
	bridge string
	pktcheck.VXLAN
}

// vxOracle checks the frames of the VXLAN device vxSetup commits (bridge "" until then).
var vxOracle = &vxlanOracle{}

func hw(s string) [6]byte {
	m, _ := net.ParseMAC(s)
	return [6]byte(m)
}

func vxSetup(t *testing.T) *pktfuzz.VXTarget {
	t.Helper()
	local := netip.MustParseAddr("fc00:a::1")
	r1, r2 := netip.MustParseAddr("fc00:b::1"), netip.MustParseAddr("fc00:2:1::5")
	m1, m2, h := "02:00:00:00:b1:01", "02:00:00:00:b1:03", "02:00:00:00:c1:01"
	if _, err := rig.Store.Commit([]state.Op{{Kind: model.OpAdd, Interface: &model.Interface{Name: "tc0"}}}, false); err != nil {
		t.Fatal(err)
	}
	tc0, err := rig.Ifindex("tc0")
	if err != nil {
		t.Fatal(err)
	}
	v := model.VXLAN{Dev: "vx0", Ifindex: 4242, VNI: 100, Local: local, Port: 4789, SrcPortLow: 5000, SrcPortHigh: 5010,
		MTU: 1500, Bridge: "br0", BridgeIfindex: 4241, PortLearning: true,
		Ports:      []model.BridgePort{{Name: "tc0", Ifindex: int(tc0), MTU: 1500, Learning: true}},
		Remotes:    []netip.Addr{r1},
		RemoteMACs: []model.RemoteMAC{{MAC: m1, Remote: r1, Bridged: true}, {MAC: m2, Remote: r2, Bridged: true}},
		LocalMACs:  []model.LocalMAC{{MAC: h, Port: "tc0", Ifindex: int(tc0)}}}
	if _, err := rig.Store.Commit([]state.Op{{Kind: model.OpAdd, Origin: model.OriginKernel, VXLAN: &v}}, false); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		rig.Store.Commit([]state.Op{{Kind: model.OpDelete, Origin: model.OriginKernel, VXLAN: &model.VXLAN{Dev: "vx0"}},
			{Kind: model.OpDelete, Interface: &model.Interface{Name: "tc0"}}}, false)
		vxOracle.bridge = ""
	})
	*vxOracle = vxlanOracle{bridge: "tc0", VXLAN: pktcheck.VXLAN{Local: local, Port: 4789, VNI: 100, SportLo: 5000, SportHi: 5010,
		HopLimit: 64, Remotes: map[netip.Addr]bool{r1: true, r2: true},
		RemoteOf: map[[6]byte]netip.Addr{hw(m1): r1, hw(m2): r2}, LocalMACs: map[[6]byte]bool{hw(h): true}}}
	return &pktfuzz.VXTarget{Bridge: "tc0", Fabric: "fab0", Local: local, Port: 4789, VNI: 100,
		Remotes: []netip.Addr{r1, r2}, Others: []netip.Addr{netip.MustParseAddr("fc00:b::99")},
		RemoteMACs: [][6]byte{hw(m1), hw(m2)}, LocalMACs: [][6]byte{hw(h)}}
}
