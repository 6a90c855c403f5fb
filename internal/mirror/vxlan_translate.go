package mirror

// vxlan_translate.go: the kernel's VXLAN devices and forwarding entries (vxlan_follow.go) into seg6x
// VXLAN objects (internal/state vxlan.go), and per device and per entry what became of it and why,
// for `seg6x show kernel`. A device is followed when the fast path could do what the kernel does
// with it (refusal()); an entry when its device is and it means one thing: one remote for a unicast
// MAC the bridge sends to the tunnel, or one local port.

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/seg6x/seg6x/internal/model"
	"github.com/seg6x/seg6x/internal/state"
	"golang.org/x/sys/unix"
)

// VXLANStatus says what became of one kernel VXLAN device.
type VXLANStatus struct {
	Dev         string `json:"dev"`
	VNI         uint32 `json:"vni"`
	Local       string `json:"local,omitempty"`
	Port        uint16 `json:"port"`
	Bridge      string `json:"bridge,omitempty"`
	Followed    bool   `json:"followed"` // a seg6x VXLAN object (Object) holds it
	Accelerated bool   `json:"accelerated"`
	Reason      string `json:"reason,omitempty"`
	Object      string `json:"object,omitempty"`
}

// FDBStatus says what became of one forwarding entry of a bridge with a VXLAN port, or of a VXLAN device.
type FDBStatus struct {
	Dev         string `json:"dev"` // the VXLAN device (its own table) or the bridge port
	Bridge      string `json:"bridge,omitempty"`
	MAC         string `json:"mac"`
	VLAN        uint16 `json:"vlan,omitempty"`
	Remote      string `json:"remote,omitempty"` // VXLAN table: the remote VTEP
	Followed    bool   `json:"followed"`
	Accelerated bool   `json:"accelerated"`
	Reason      string `json:"reason,omitempty"`
	object      string // the VXLAN device whose object holds the entry (followed entries)
	fast        bool   // the fast path forwards by it, once its bridge has an attached port
	port        string // a local MAC's port: the fast path sends to it only when it is attached
	tunnel      bool   // the bridge's entry on the VXLAN port, the device having none of its own
}

// Reasons of followed entries the fast path does not forward by (the kernel does).
const (
	whyDefaultRemote = "default remote: broadcast, unknown unicast and multicast go to every one (the kernel replicates); VXLAN from it is accepted"
	whyFlooded       = "the bridge does not send the MAC to the tunnel (it floods it): the kernel's"
	whyNodeMAC       = "the node's own address: frames to it are the kernel's"
	whyReplicated    = "the bridge sends it to the tunnel and the device has no entry of its own: the kernel replicates it to the default remotes"
)

// vxlanObjects returns the VXLAN objects the kernel's configuration makes, by device, and the
// status of every device and of every entry of their tables, sorted.
func vxlanObjects(links map[int]*kernelLink, fdb map[string]*fdbEntry) (map[string]model.VXLAN, []VXLANStatus, []FDBStatus) {
	name := func(ifindex int) string {
		if l := links[ifindex]; l != nil {
			return l.Name
		}
		return fmt.Sprintf("ifindex %d", ifindex)
	}
	// VXLAN ports per bridge: a bridge with several is left to the kernel (one VNI per bridge here).
	perBridge := map[int]int{}
	for _, l := range links {
		if l.VX != nil && l.Master != 0 {
			perBridge[l.Master]++
		}
	}
	want := map[string]model.VXLAN{}
	byBridge := map[int]*kernelLink{} // bridge -> its followed VXLAN device
	vxBridge := map[int]int{}         // VXLAN device (followed or not) -> its bridge
	hasVX := map[int]bool{}           // bridges with a VXLAN port
	var devs []VXLANStatus
	for _, l := range links {
		v := l.VX
		if v == nil {
			continue
		}
		st := VXLANStatus{Dev: l.Name, VNI: v.VNI, Port: v.Port}
		if v.Local.IsValid() {
			st.Local = v.Local.String()
		}
		br := links[l.Master]
		if br != nil {
			st.Bridge = br.Name
			vxBridge[l.Ifindex] = br.Ifindex
			hasVX[br.Ifindex] = true
		}
		st.Reason = v.refusal()
		switch {
		case st.Reason != "":
		case br == nil || br.Bridge == nil:
			st.Reason = "not a bridge port"
		case br.Bridge.refusal() != "":
			st.Reason = br.Bridge.refusal()
		case perBridge[br.Ifindex] > 1:
			st.Reason = fmt.Sprintf("bridge %s has %d VXLAN ports", br.Name, perBridge[br.Ifindex])
		case l.Port != nil && l.Port.refusal() != "":
			st.Reason = l.Port.refusal()
		case !l.Up || !br.Up:
			st.Reason = "down"
		}
		if st.Reason == "" {
			want[l.Name] = model.VXLAN{Dev: l.Name, Ifindex: l.Ifindex, VNI: v.VNI, Local: v.Local, Port: v.Port,
				SrcPortLow: v.PortLow, SrcPortHigh: v.PortHigh, TTL: v.TTL, TOS: v.TOS, Label: v.Label, Learning: v.Learning,
				PortLearning: l.Port == nil || l.Port.Learning, MTU: l.MTU, Bridge: br.Name, BridgeIfindex: br.Ifindex,
				Ports: bridgePorts(links, br.Ifindex, l.Ifindex), Origin: model.OriginKernel}
			byBridge[br.Ifindex] = l
			st.Followed, st.Reason, st.Object = true, "", fmt.Sprintf("vxlan %q", l.Name)
		}
		devs = append(devs, st)
	}

	// The bridges' tables first: which MACs are behind a local port, which the bridge sends to the tunnel.
	local := map[string]string{}     // bridge ifindex + MAC -> local port
	tunnel := map[string]*fdbEntry{} // bridge ifindex + MAC -> the bridge's entry on its VXLAN port
	ownEntry := map[string]bool{}    // bridge ifindex + MAC: the VXLAN device has a unicast entry of its own
	var ents []FDBStatus
	for _, e := range fdb {
		if !e.bridgeTable() {
			continue
		}
		vx := byBridge[e.Master]
		followedBridge := vx != nil
		if !followedBridge && !hasVX[e.Master] {
			continue // a bridge without a VXLAN port: not the mirror's
		}
		k := fmt.Sprintf("%d %s", e.Master, e.MAC)
		st := FDBStatus{Dev: name(e.Ifindex), Bridge: name(e.Master), MAC: e.MAC.String(), VLAN: e.VLAN}
		port := links[e.Ifindex]
		switch {
		case !followedBridge:
			st.Reason = "its bridge's VXLAN device is not followed"
		case e.MAC[0]&1 != 0:
			st.Reason = "multicast MAC: the kernel's"
		case e.VLAN != 0:
			st.Reason = "VLAN entry (VLAN-aware bridge)"
		case e.Ifindex == vx.Ifindex && e.State&unix.NUD_PERMANENT == 0:
			tunnel[k] = e
			continue // reported with the device's own entry for the MAC (or as a tunnel MAC)
		case port == nil:
			st.Reason = "unknown port"
		case e.Ifindex != e.Master && (port.Port == nil || port.Port.refusal() != ""):
			st.Reason = "port: " + portRefusal(port)
		}
		if st.Reason == "" {
			lm := model.LocalMAC{MAC: e.MAC.String(), Port: port.Name, Ifindex: port.Ifindex, Local: e.State&unix.NUD_PERMANENT != 0}
			v := want[vx.Name]
			if !lm.Local {
				lm.Dynamic = e.dynamic()
			}
			v.LocalMACs = append(v.LocalMACs, lm)
			want[vx.Name] = v
			if !lm.Local {
				local[k] = port.Name
			}
			st.Followed, st.object = true, vx.Name
			if lm.Local {
				st.Reason = whyNodeMAC
			} else {
				st.fast, st.port = true, port.Name
			}
		}
		ents = append(ents, st)
	}

	// Then the VXLAN devices' own tables.
	for _, e := range fdb {
		l := links[e.Ifindex]
		if e.bridgeTable() || l == nil || l.VX == nil {
			continue // a device's own address list (self entries of other devices): not forwarding entries
		}
		st := FDBStatus{Dev: l.Name, MAC: e.MAC.String(), VLAN: e.VLAN}
		if e.Dst.IsValid() {
			st.Remote = e.Dst.String()
		}
		v, followed := want[l.Name]
		if b := links[vxBridge[l.Ifindex]]; b != nil {
			st.Bridge = b.Name
		}
		k := fmt.Sprintf("%d %s", v.BridgeIfindex, e.MAC)
		zero := isZeroMAC(e.MAC)
		if !zero && e.MAC[0]&1 == 0 {
			ownEntry[k] = true // the kernel uses it, followed or not: its MAC is no tunnel MAC
		}
		switch {
		case !followed:
			st.Reason = "its VXLAN device is not followed"
		case e.refusal() != "":
			st.Reason = e.refusal()
		case !zero && e.MAC[0]&1 != 0:
			st.Reason = "multicast MAC: the kernel replicates it"
		case local[k] != "":
			st.Reason = "the bridge has the MAC on local port " + local[k]
		}
		if st.Reason == "" {
			br := tunnel[k]
			if zero {
				v.Remotes = append(v.Remotes, e.Dst)
			} else {
				v.RemoteMACs = append(v.RemoteMACs, model.RemoteMAC{MAC: e.MAC.String(), Remote: e.Dst, VNI: e.VNI, Port: e.Port,
					Bridged: br != nil, Dynamic: e.dynamic() || br != nil && br.dynamic()})
			}
			want[l.Name] = v
			st.Followed, st.object = true, l.Name
			switch {
			case zero:
				st.Reason = whyDefaultRemote
			case br == nil:
				st.Reason = whyFlooded
			default:
				st.fast = true
			}
		}
		ents = append(ents, st)
	}

	// MACs the bridge sends to a followed VXLAN port that has no entry of its own for them: to the
	// default remotes (the fast path's when there is exactly one).
	for k, e := range tunnel {
		vx := byBridge[e.Master]
		if ownEntry[k] || vx == nil {
			continue
		}
		v := want[vx.Name]
		v.TunnelMACs = append(v.TunnelMACs, model.TunnelMAC{MAC: e.MAC.String(), Dynamic: e.dynamic()})
		want[vx.Name] = v
		st := FDBStatus{Dev: vx.Name, Bridge: name(e.Master), MAC: e.MAC.String(), Followed: true, object: vx.Name, tunnel: true}
		ents = append(ents, st)
	}
	for i := range ents { // the default remotes are all known now
		if st := &ents[i]; st.tunnel {
			if rs := want[st.object].Remotes; len(rs) == 1 {
				st.fast, st.Remote = true, rs[0].String()
			} else {
				st.Reason = whyReplicated
			}
		}
	}
	for n, v := range want {
		model.NormalizeVXLAN(&v)
		want[n] = v
	}
	slices.SortFunc(devs, func(a, b VXLANStatus) int { return strings.Compare(a.Dev, b.Dev) })
	slices.SortFunc(ents, func(a, b FDBStatus) int {
		return cmp.Or(strings.Compare(a.Bridge, b.Bridge), strings.Compare(a.Dev, b.Dev), cmp.Compare(a.VLAN, b.VLAN),
			strings.Compare(a.MAC, b.MAC), compareAddrStrings(a.Remote, b.Remote))
	})
	return want, devs, ents
}

func portRefusal(l *kernelLink) string {
	if l.Port == nil {
		return "not a bridge port"
	}
	return l.Port.refusal()
}

func compareAddrStrings(a, b string) int {
	x, errx := netip.ParseAddr(a)
	y, erry := netip.ParseAddr(b)
	if errx != nil || erry != nil {
		return strings.Compare(a, b)
	}
	return x.Compare(y)
}

// stored makes the statuses say what the store holds after the commit: a device (and its entries)
// is followed only if its object is there as translated; one the store refused says so (the refusal
// is among the mirror's notes). A followed device is accelerated when some port of its bridge is
// attached (frames from it are encapsulated, and VXLAN to it decapsulated on fabric ports); an entry
// when the fast path forwards by it there (a local MAC: when its port is attached too).
func stored(st *state.Store, d *desired) {
	have := map[string]model.VXLAN{}
	for _, v := range st.VXLANs() {
		have[v.Dev] = v
	}
	attached := map[string]bool{}
	for _, it := range st.Interfaces() {
		attached[it.Name] = true
	}
	ok, fast := map[string]bool{}, map[string]bool{}
	for dev, v := range d.vxlans {
		h, in := have[dev]
		ok[dev] = in && model.SameVXLAN(h, v)
		for _, p := range v.Ports {
			fast[dev] = fast[dev] || attached[p.Name]
		}
	}
	const refused = "its seg6x VXLAN object was refused (see the notes)"
	for i := range d.vxStatus {
		s := &d.vxStatus[i]
		switch {
		case s.Followed && !ok[s.Dev]:
			s.Followed, s.Reason, s.Object = false, refused, ""
		case s.Followed && !fast[s.Dev]:
			s.Reason = fmt.Sprintf("no port of bridge %s is attached to seg6x: its frames are the kernel's", s.Bridge)
		case s.Followed:
			s.Accelerated = true
		}
	}
	for i := range d.fdbStatus {
		s := &d.fdbStatus[i]
		switch {
		case s.Followed && !ok[s.object]:
			s.Followed, s.Reason = false, refused
		case !s.fast:
		case !fast[s.object]:
			s.Reason = "no port of its bridge is attached to seg6x"
		case s.port != "" && !attached[s.port]:
			s.Reason = fmt.Sprintf("port %s is not attached to seg6x: frames to it are the kernel's", s.port)
		default:
			s.Accelerated = true
		}
	}
}

// bridgePorts are the other ports of bridge br (the VXLAN device vx aside) that forward.
func bridgePorts(links map[int]*kernelLink, br, vx int) []model.BridgePort {
	var out []model.BridgePort
	for _, l := range links {
		if l.Master != br || l.Ifindex == vx || l.Port == nil || l.Port.refusal() != "" {
			continue
		}
		out = append(out, model.BridgePort{Name: l.Name, Ifindex: l.Ifindex, MTU: l.MTU, Learning: l.Port.Learning})
	}
	slices.SortFunc(out, func(a, b model.BridgePort) int { return strings.Compare(a.Name, b.Name) })
	return out
}
