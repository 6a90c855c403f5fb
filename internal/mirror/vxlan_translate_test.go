package mirror

// vxlan_translate_test.go: the kernel's VXLAN devices and forwarding entries into seg6x objects and
// statuses, on built links and entries: what is followed, and the reason for each thing that is not.

import (
	"net"
	"net/netip"
	"strings"
	"testing"

	"github.com/seg6x/seg6x/internal/state"
	"golang.org/x/sys/unix"
)

func vxTopology() map[int]*kernelLink {
	fwd := &bridgePort{State: brStateForwarding}
	return map[int]*kernelLink{
		2: {Ifindex: 2, Name: "br0", Kind: "bridge", Up: true, Bridge: &bridgeInfo{}},
		3: {Ifindex: 3, Name: "vx0", Kind: "vxlan", Up: true, Master: 2, MTU: 1450, Port: fwd,
			VX: &kernelVXLAN{Ifindex: 3, Name: "vx0", VNI: 100, Local: netip.MustParseAddr("2001:db8:1::a"), Port: 4789}},
		4: {Ifindex: 4, Name: "t0", Up: true, Master: 2, Port: fwd},
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
		len(v.LocalMACs) != 2 || v.Bridge != "br0" || v.MTU != 1450 || v.Origin != state.OriginKernel {
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
		{"02:00:00:00:0a:01", "t0", vxlanNotYet},
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
