package state

// vxlanimage.go: the data plane entries of the followed VXLAN devices (vxlan.go), in the model's
// terms (dataplane.go): each device as it encapsulates and as its packets are addressed, the remotes
// it takes VXLAN from, and every MAC of its bridge with where the kernel's two tables send frames to
// it. The fast path (bpf/vxlan.h) forwards only what these say goes to one place; the rest is the
// kernel's.

import (
	"net"
	"os"
	"strconv"
	"strings"

	"github.com/seg6x/seg6x/internal/model"
)

// VXImage is the VXLAN part of a data plane image.
type VXImage struct {
	Devs    map[uint32]VXDevSpec
	Rx      map[VXRxKey]VXDevSpec
	Remotes map[VXRemoteKey]bool
	MACs    map[VXMACKey]VXMACSpec
}

// DefaultVXLANHopLimit is the outer hop limit of a device with ttl 0 ("auto": the kernel takes the
// route's hop limit, or the egress interface's, 64 unless changed).
const DefaultVXLANHopLimit = 64

// LocalPortRange is where a device without a source port range of its own takes its source ports
// from: the namespace's ip_local_port_range, as the kernel does.
var LocalPortRange = func() (lo, hi uint16) {
	lo, hi = 32768, 60999
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return lo, hi
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return lo, hi
	}
	l, err1 := strconv.ParseUint(f[0], 10, 16)
	h, err2 := strconv.ParseUint(f[1], 10, 16)
	if err1 != nil || err2 != nil || l >= h {
		return lo, hi
	}
	return uint16(l), uint16(h)
}

// vxDevSpec is device v resolved for the fast path. The kernel picks ports in [low, high-1].
func vxDevSpec(v *model.VXLAN) VXDevSpec {
	lo, hi := v.SrcPortLow, v.SrcPortHigh
	if hi == 0 {
		lo, hi = LocalPortRange()
	}
	d := VXDevSpec{Ifindex: uint32(v.Ifindex), Bridge: uint32(v.BridgeIfindex), Local: v.Local, VNI: v.VNI, Port: v.Port,
		SrcPortLow: lo, SrcPortSpan: hi - lo, MTU: uint16(min(v.MTU, 0xFFFF)), HopLimit: v.TTL, TOS: v.TOS &^ 3,
		Label: v.Label, Learning: v.Learning, PortLearning: v.PortLearning}
	if d.HopLimit == 0 {
		d.HopLimit = DefaultVXLANHopLimit
	}
	return d
}

func macKey(bridge int, m string) (VXMACKey, bool) {
	hw, err := net.ParseMAC(m)
	if err != nil || len(hw) != 6 {
		return VXMACKey{}, false
	}
	k := VXMACKey{Bridge: uint32(bridge)}
	copy(k.MAC[:], hw)
	return k, true
}

// vxlanImage is the data plane's VXLAN entries for devices vs (validated objects).
func vxlanImage(vs []model.VXLAN) VXImage {
	im := VXImage{Devs: map[uint32]VXDevSpec{}, Rx: map[VXRxKey]VXDevSpec{}, Remotes: map[VXRemoteKey]bool{},
		MACs: map[VXMACKey]VXMACSpec{}}
	for i := range vs {
		v := &vs[i]
		d := vxDevSpec(v)
		im.Devs[d.Ifindex] = d
		im.Rx[VXRxKey{Local: v.Local, Port: v.Port, VNI: v.VNI}] = d
		anyKey := VXRxKey{Local: v.Local, Port: v.Port, VNI: VXVNIAny}
		if cur, ok := im.Rx[anyKey]; !ok || d.Ifindex < cur.Ifindex {
			im.Rx[anyKey] = d // the same device whatever the order of vs
		}
		for _, r := range v.Remotes {
			im.Remotes[VXRemoteKey{Dev: d.Ifindex, Remote: r}] = true
		}
		mtu := map[string]uint16{}
		for _, p := range v.Ports {
			mtu[p.Name] = uint16(min(p.MTU, 0xFFFF))
		}
		for _, l := range v.LocalMACs {
			k, ok := macKey(v.BridgeIfindex, l.MAC)
			if !ok {
				continue
			}
			if l.Local {
				im.MACs[k] = VXMACSpec{Kind: VXMACNode}
				continue
			}
			im.MACs[k] = VXMACSpec{Kind: VXMACLocal, Ifindex: uint32(l.Ifindex), Dynamic: l.Dynamic, MTU: mtu[l.Port]}
		}
		for _, r := range v.RemoteMACs {
			im.Remotes[VXRemoteKey{Dev: d.Ifindex, Remote: r.Remote}] = true
			k, ok := macKey(v.BridgeIfindex, r.MAC)
			if !ok || !r.Bridged {
				continue // the bridge floods frames to it: the kernel's
			}
			e := VXMACSpec{Kind: VXMACTunnel, Ifindex: d.Ifindex, Dynamic: r.Dynamic, Remote: r.Remote, Port: r.Port, VNI: r.VNI}
			if e.Port == 0 {
				e.Port = v.Port
			}
			if e.VNI == 0 {
				e.VNI = v.VNI
			}
			im.MACs[k] = e
		}
		for _, t := range v.TunnelMACs {
			k, ok := macKey(v.BridgeIfindex, t.MAC)
			if !ok {
				continue
			}
			e := VXMACSpec{Kind: VXMACTunnel, Ifindex: d.Ifindex, Dynamic: t.Dynamic, Port: v.Port, VNI: v.VNI}
			if len(v.Remotes) == 1 {
				e.Remote = v.Remotes[0] // the default list of one: the kernel sends it there
			}
			im.MACs[k] = e
		}
	}
	return im
}

// mapWrites are the puts and deletes that make a table go from old to new.
func mapWrites[K comparable, V comparable](old, new map[K]V) (puts, dels []Write[K, V]) {
	for k, v := range new {
		o, had := old[k]
		if had && o == v {
			continue
		}
		e := Write[K, V]{Key: k, Val: v, Had: had}
		if had {
			e.Old = o
		}
		puts = append(puts, e)
	}
	for k, o := range old {
		if _, keep := new[k]; !keep {
			dels = append(dels, Write[K, V]{Key: k, Old: o, Had: true})
		}
	}
	return puts, dels
}

// vxlansBefore are the VXLAN objects as they were before change c.
func (c *change) vxlansBefore(rt *runtime) []model.VXLAN {
	var out []model.VXLAN
	for dev, v := range rt.vxlans {
		if _, touched := c.vxlans[dev]; !touched {
			out = append(out, v)
		}
	}
	for _, b := range c.vxlans {
		if b.had {
			out = append(out, b.v)
		}
	}
	return out
}

// setWrites are the puts and deletes that make a set (the keys of old and new) go from old to new.
func setWrites[K comparable](old, new map[K]bool) (puts, dels []Write[K, struct{}]) {
	for k := range new {
		if _, had := old[k]; !had {
			puts = append(puts, Write[K, struct{}]{Key: k})
		}
	}
	for k := range old {
		if _, keep := new[k]; !keep {
			dels = append(dels, Write[K, struct{}]{Key: k, Had: true})
		}
	}
	return puts, dels
}
