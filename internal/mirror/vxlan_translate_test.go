package mirror

// vxlan_translate_test.go: the kernel's VXLAN devices and forwarding entries into seg6x objects and
// statuses, on built links and entries: what is followed, and the reason for each thing that is not.

import (
	"net"
	"net/netip"
	"strings"
	"testing"

	"github.com/seg6x/seg6x/internal/model"
	"golang.org/x/sys/unix"
)

func vxTopology() map[int]*kernelLink {
	fwd := &bridgePort{State: brStateForwarding}
	return map[int]*kernelLink{
		2: {Ifindex: 2, Name: "br0", Kind: "bridge", Up: true, Bridge: &bridgeInfo{}},
		3: {Ifindex: 3, Name: "vx0", Kind: "vxlan", Up: true, Master: 2, MTU: 1450, Port: fwd,
			VX: &kernelVXLAN{Ifindex: 3, Name: "vx0", VNI: 100, Local: netip.MustParseAddr("2001:db8:1::a"), Port: 4789}},
		4: {Ifindex: 4, Name: "t0", Up: true, Master: 2, MTU: 1500, Port: &bridgePort{State: brStateForwarding, Learning: true}},
		5: {Ifindex: 5, Name: "t9", Up: true, Master: 2, Port: &bridgePort{State: 1}}, // listening
	}
}

func mac(s string) net.HardwareAddr { m, _ := net.ParseMAC(s); return m }

func entries(es ...*fdbEntry) map[string]*fdbEntry {
	out := map[string]*fdbEntry{}
	for _, e := range es {
		out[e.key()] = e
	}
	return out
}

func TestVXLANObjectsAndReasons(t *testing.T) {
	b := netip.MustParseAddr("2001:db8:1::b")
	self := func(m string, dst netip.Addr) *fdbEntry {
		return &fdbEntry{Ifindex: 3, MAC: mac(m), Dst: dst, Flags: unix.NTF_SELF}
	}
	master := func(m string, port int) *fdbEntry {
		return &fdbEntry{Ifindex: port, Master: 2, MAC: mac(m), Flags: unix.NTF_MASTER}
	}
	fdb := entries(self("00:00:00:00:00:00", b), self("02:00:00:00:0b:01", b), master("02:00:00:00:0b:01", 3),
		self("02:00:00:00:0a:02", b), master("02:00:00:00:0a:02", 4), // the bridge has it on t0: t0 wins
		self("01:00:5e:00:00:01", b),
		master("02:00:00:00:0a:01", 4), master("02:00:00:00:0a:09", 5),
		&fdbEntry{Ifindex: 4, MAC: mac("33:33:00:00:00:01"), Flags: unix.NTF_SELF}) // t0's own address list
	want, devs, ents := vxlanObjects(vxTopology(), fdb)
	v, ok := want["vx0"]
	if !ok || len(devs) != 1 || !devs[0].Followed {
		t.Fatalf("vx0 not followed: %+v %+v", want, devs)
	}
	if len(v.Remotes) != 1 || len(v.RemoteMACs) != 1 || v.RemoteMACs[0].MAC != "02:00:00:00:0b:01" || !v.RemoteMACs[0].Bridged ||
		len(v.LocalMACs) != 2 || v.Bridge != "br0" || v.MTU != 1450 || v.Origin != model.OriginKernel {
		t.Fatalf("vx0 object: %+v", v)
	}
	reason := func(m, dev string) string {
		for _, e := range ents {
			if e.MAC == m && e.Dev == dev {
				return e.Reason
			}
		}
		return "(no status)"
	}
	for _, c := range []struct{ mac, dev, want string }{
		{"02:00:00:00:0a:02", "vx0", "local port t0"},
		{"01:00:5e:00:00:01", "vx0", "multicast MAC"},
		{"02:00:00:00:0a:09", "t9", "not forwarding"},
		{"02:00:00:00:0a:01", "t0", ""}, // the fast path's, once t0 is attached (stored())
	} {
		if r := reason(c.mac, c.dev); !strings.Contains(r, c.want) {
			t.Errorf("%s on %s: %q, want %q", c.mac, c.dev, r, c.want)
		}
	}
	if r := reason("33:33:00:00:00:01", "t0"); r != "(no status)" {
		t.Errorf("a port's own address list reported: %q", r)
	}

	// Each thing that leaves the device to the kernel.
	for _, c := range []struct {
		name, want string
		edit       func(l map[int]*kernelLink)
	}{
		{"vlan-aware bridge", "VLAN-aware", func(l map[int]*kernelLink) { l[2].Bridge.VLANFiltering = true }},
		{"br_netfilter", "netfilter", func(l map[int]*kernelLink) { l[2].Bridge.NFCall = true }},
		{"no bridge", "not a bridge port", func(l map[int]*kernelLink) { l[3].Master = 0 }},
		{"down", "down", func(l map[int]*kernelLink) { l[3].Up = false }},
		{"port blocked", "not forwarding", func(l map[int]*kernelLink) { l[3].Port = &bridgePort{State: 4} }},
		{"isolated", "isolated", func(l map[int]*kernelLink) { l[3].Port = &bridgePort{State: brStateForwarding, Isolated: true} }},
		{"external", "external", func(l map[int]*kernelLink) { l[3].VX.CollectMD = true }},
		{"second vxlan", "2 VXLAN ports", func(l map[int]*kernelLink) {
			l[6] = &kernelLink{Ifindex: 6, Name: "vx1", Up: true, Master: 2, VX: &kernelVXLAN{VNI: 7, Local: b, Port: 4789}}
		}},
	} {
		links := vxTopology()
		c.edit(links)
		want, devs, ents := vxlanObjects(links, fdb)
		if _, ok := want["vx0"]; ok || devs[0].Followed || !strings.Contains(devs[0].Reason, c.want) {
			t.Errorf("%s: %+v", c.name, devs[0])
		}
		for _, e := range ents {
			if e.Followed {
				t.Errorf("%s: entry of a device not followed: %+v", c.name, e)
			}
		}
	}
}

// The object's fields the fast path uses: the device's TOS and port learning, the bridge's other
// ports, which entries age (learned), and the MACs the bridge sends to the tunnel without an entry
// of the device's own (to the default remotes: the fast path's when there is one).
func TestVXLANObjectFields(t *testing.T) {
	b, c := netip.MustParseAddr("2001:db8:1::b"), netip.MustParseAddr("2001:db8:1::c")
	links := vxTopology()
	links[3].VX.TOS = 0x20
	links[3].Port = &bridgePort{State: brStateForwarding, Learning: false}
	learned := func(e *fdbEntry) *fdbEntry { e.State = unix.NUD_REACHABLE; return e }
	static := func(e *fdbEntry) *fdbEntry { e.State = unix.NUD_NOARP; return e }
	self := func(m string, dst netip.Addr) *fdbEntry {
		return &fdbEntry{Ifindex: 3, MAC: mac(m), Dst: dst, Flags: unix.NTF_SELF, State: unix.NUD_NOARP}
	}
	master := func(m string, port int) *fdbEntry {
		return &fdbEntry{Ifindex: port, Master: 2, MAC: mac(m), Flags: unix.NTF_MASTER}
	}
	ext := master("02:00:00:00:0b:02", 3)
	ext.Flags |= unix.NTF_EXT_LEARNED
	fdb := entries(self("00:00:00:00:00:00", b),
		self("02:00:00:00:0b:01", b), static(master("02:00:00:00:0b:01", 3)), // static both: not dynamic
		self("02:00:00:00:0b:02", c), ext, // FRR's extern_learn: not dynamic
		learned(self("02:00:00:00:0b:03", c)), static(master("02:00:00:00:0b:03", 3)), // learned by the device
		learned(master("02:00:00:00:0c:01", 3)), // learned by the bridge, no device entry: a tunnel MAC
		learned(master("02:00:00:00:0a:01", 4)), static(master("02:00:00:00:0a:02", 4)),
		// The VXLAN port's own address: the bridge's (the node's), not behind the tunnel.
		&fdbEntry{Ifindex: 3, Master: 2, MAC: mac("02:00:00:00:0e:0e"), Flags: unix.NTF_MASTER, State: unix.NUD_PERMANENT})
	want, _, ents := vxlanObjects(links, fdb)
	v := want["vx0"]
	exp := model.VXLAN{Dev: "vx0", Ifindex: 3, VNI: 100, Local: netip.MustParseAddr("2001:db8:1::a"), Port: 4789, TOS: 0x20,
		MTU: 1450, Bridge: "br0", BridgeIfindex: 2, Origin: model.OriginKernel,
		Ports:   []model.BridgePort{{Name: "t0", Ifindex: 4, MTU: 1500, Learning: true}}, // t9 is not forwarding
		Remotes: []netip.Addr{b},
		RemoteMACs: []model.RemoteMAC{{MAC: "02:00:00:00:0b:01", Remote: b, Bridged: true},
			{MAC: "02:00:00:00:0b:02", Remote: c, Bridged: true}, {MAC: "02:00:00:00:0b:03", Remote: c, Bridged: true, Dynamic: true}},
		LocalMACs: []model.LocalMAC{{MAC: "02:00:00:00:0a:01", Port: "t0", Ifindex: 4, Dynamic: true}, {MAC: "02:00:00:00:0a:02", Port: "t0", Ifindex: 4},
			{MAC: "02:00:00:00:0e:0e", Port: "vx0", Ifindex: 3, Local: true}},
		TunnelMACs: []model.TunnelMAC{{MAC: "02:00:00:00:0c:01", Dynamic: true}}}
	if !model.SameVXLAN(v, exp) {
		t.Fatalf("vx0\n got %+v\nwant %+v", v, exp)
	}
	status := func(m string) FDBStatus {
		for _, e := range ents {
			if e.MAC == m {
				return e
			}
		}
		t.Fatalf("no status for %s", m)
		return FDBStatus{}
	}
	if s := status("02:00:00:00:0c:01"); !s.Followed || !s.fast || s.Remote != b.String() || s.Dev != "vx0" {
		t.Errorf("tunnel MAC, one default remote: %+v", s)
	}
	// Two default remotes: the kernel replicates frames to a tunnel MAC.
	fdb2 := entries(self("00:00:00:00:00:00", b), self("00:00:00:00:00:00", c), learned(master("02:00:00:00:0c:01", 3)))
	want, _, ents = vxlanObjects(links, fdb2)
	if tm := want["vx0"].TunnelMACs; len(tm) != 1 {
		t.Fatalf("tunnel MACs %+v", tm)
	}
	if s := status("02:00:00:00:0c:01"); !s.Followed || s.fast || s.Reason != whyReplicated {
		t.Errorf("tunnel MAC, two default remotes: %+v", s)
	}
	// Port learning on when the kernel says so.
	links[3].Port.Learning = true
	if want, _, _ := vxlanObjects(links, fdb2); !want["vx0"].PortLearning {
		t.Error("port learning on not followed")
	}
}
