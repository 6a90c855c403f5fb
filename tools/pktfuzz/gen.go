// Package pktfuzz generates the frames of the fuzz harness (test/fuzz): structured Ethernet, 802.1Q,
// IPv4 and IPv6 frames with extension headers and SRHs, aimed at one seg6x configuration (its SIDs,
// locators, tenant VLANs and routes), then cut, padded or bit-flipped. Same seed, same frames.
package pktfuzz

import (
	"encoding/binary"
	"math/rand"
	"net/netip"
	"slices"

	"github.com/seg6x/seg6x/internal/model"
)

// Target is what the frames aim at.
type Target struct {
	Devs   []string       // every ingress device
	Fabric []string       // devices whose untagged frames may carry SIDs
	Ports  []Port         // tenant ports
	VLANs  []uint16       // VLANs of tenant ports
	SIDs   []netip.Addr   // local SIDs
	Segs   []netip.Addr   // other nodes' SIDs (segments of the routes)
	Pfx6   []netip.Prefix // IPv6 destinations worth hitting: locators, tenant routes, routed prefixes
	Src6   []netip.Prefix // IPv6 sources: the domain's and others
	Pfx4   []netip.Prefix // IPv4 destinations: tenant routes and the decap tables' prefixes
	VX     *VXTarget      // a VXLAN device (vxlan.go), or none
	// Frags are the devices whose frames may span buffers (the data plane's rx_frags: MTU above 1500):
	// a frame there may be split anywhere. Elsewhere a frame of a 1500-byte MTU fits one buffer; only a
	// longer one (its MTU raised before the control plane caught up) is split, and after its first
	// OneBufferFrame bytes, as drivers fill the first buffer.
	Frags []string
}

// OneBufferFrame is the longest frame of a 1500-byte MTU (two VLAN tags): what the program reads as
// one buffer on a device not in Target.Frags.
const OneBufferFrame = 14 + 8 + 1500

// Port is a tenant port and the prefixes its tenant routes.
type Port struct {
	Dev    string
	VLAN   uint16 // 0: untagged
	Routes []netip.Prefix
}

// TargetOf aims at st; fabric names the devices that take SIDs, extra6 and extra4 add prefixes st
// does not name (the kernel's routes).
func TargetOf(st model.State, devs, fabric []string, extra6, extra4 []netip.Prefix) Target {
	t := Target{Devs: devs, Fabric: fabric, Pfx6: append([]netip.Prefix(nil), extra6...), Pfx4: append([]netip.Prefix(nil), extra4...)}
	t.Pfx6 = append(t.Pfx6, st.Domain.Locators...)
	t.Src6 = append(t.Src6, st.Domain.Sources...)
	for _, tn := range st.Tenants {
		var routes []netip.Prefix
		for _, r := range st.Routes {
			if r.Tenant == tn.Name {
				routes = append(routes, r.Prefix)
			}
		}
		for _, p := range tn.Ports {
			t.Ports = append(t.Ports, Port{Dev: p.Dev, VLAN: p.VLAN, Routes: routes})
			t.VLANs = append(t.VLANs, p.VLAN)
		}
	}
	for _, r := range st.Routes {
		if r.Prefix.Addr().Is4() {
			t.Pfx4 = append(t.Pfx4, r.Prefix)
		} else {
			t.Pfx6 = append(t.Pfx6, r.Prefix)
		}
		t.Segs = append(t.Segs, r.Segs...)
	}
	for _, s := range st.SIDs {
		t.SIDs = append(t.SIDs, s.SID)
	}
	return t
}

// Gen makes frames from one seed.
type Gen struct {
	r      *rand.Rand
	t      Target
	routes []netip.Prefix // the routes of the tenant port the frame being built arrives on
}

// New returns a generator for t seeded with seed.
func New(seed int64, t Target) *Gen { return &Gen{r: rand.New(rand.NewSource(seed)), t: t} }

// Frame is one generated frame and the device it arrives on.
type Frame struct {
	Dev    string
	Data   []byte
	Kind   string // what was built, for reports
	Linear int    // > 0: a multi-buffer frame whose first buffer holds this many bytes
}

// MaxFrame is the largest frame: a jumbo fabric's (9000-byte MTU) and then some. Frames beyond what
// BPF_PROG_TEST_RUN puts in one page reach the program as multi-buffer frames.
const MaxFrame = 9200

// Next returns the next frame. SRv6 frames mostly arrive untagged on a fabric device and tenant
// frames mostly on a tenant port, so that most reach the behaviors; the rest arrive anywhere.
func (g *Gen) Next() Frame {
	var f Frame
	var etype uint16
	var l3 []byte
	kind := g.r.Intn(100)
	var tags []uint16
	g.routes = nil
	if g.t.VX != nil && g.chance(0.2) {
		f = g.vxlanFrame()
		f.Data, f.Kind = g.mutate(f.Data, f.Kind)
		if len(f.Data) > MaxFrame {
			f.Data = f.Data[:MaxFrame]
		}
		g.split(&f)
		return f
	}
	switch {
	case g.chance(0.25):
		f.Dev, tags = g.t.Devs[g.r.Intn(len(g.t.Devs))], g.tags()
	case kind < 45 && len(g.t.Fabric) > 0:
		f.Dev = g.t.Fabric[g.r.Intn(len(g.t.Fabric))]
	case len(g.t.Ports) > 0:
		p := g.t.Ports[g.r.Intn(len(g.t.Ports))]
		f.Dev, g.routes = p.Dev, p.Routes
		if p.VLAN != 0 {
			tags = []uint16{p.VLAN}
		}
	default:
		f.Dev = g.t.Devs[g.r.Intn(len(g.t.Devs))]
	}
	switch {
	case kind < 45:
		etype, l3, f.Kind = 0x86DD, g.srv6(), "srv6"
	case kind < 80:
		etype, l3, f.Kind = 0x0800, g.tenant4(), "ipv4"
	case kind < 95:
		etype, l3, f.Kind = 0x86DD, g.tenant6(), "ipv6"
	default:
		etype, l3, f.Kind = []uint16{0x0806, 0x88CC, 0x8847, uint16(g.r.Intn(65536))}[g.r.Intn(4)], g.bytes(g.r.Intn(100)), "other"
	}
	f.Data = append(g.l2(etype, tags), l3...)
	f.Data, f.Kind = g.mutate(f.Data, f.Kind)
	if len(f.Data) > MaxFrame {
		f.Data = f.Data[:MaxFrame]
	}
	g.split(&f)
	return f
}

// SetFrags changes Target.Frags (the devices' MTUs changed).
func (g *Gen) SetFrags(devs []string) { g.t.Frags = devs }

// SetSIDs replaces the local SIDs the frames are mostly sent to (the fuzz run's plugin phase adds
// plugin SIDs for a while).
func (g *Gen) SetSIDs(sids []netip.Addr) { g.t.SIDs = sids }

// SIDs are the local SIDs the frames are mostly sent to.
func (g *Gen) SIDs() []netip.Addr { return append([]netip.Addr(nil), g.t.SIDs...) }

// split makes some frames of more than 128 bytes multi-buffer frames: on a device of Target.Frags
// with a first buffer of any size, headers cut anywhere included (drivers put a page or at least 2 KB
// first: the program must not trust that); elsewhere only frames longer than OneBufferFrame.
func (g *Gen) split(f *Frame) {
	if len(f.Data) <= 128 || !g.chance(0.05) {
		return
	}
	switch {
	case slices.Contains(g.t.Frags, f.Dev):
		f.Linear = 64 + g.r.Intn(len(f.Data)-64)
	case len(f.Data) > OneBufferFrame+1:
		f.Linear = OneBufferFrame + 1 + g.r.Intn(len(f.Data)-OneBufferFrame-1)
	default:
		return
	}
	f.Kind += "/split"
}

// tags is none, one or two VLAN IDs, mostly the tenant ports'.
func (g *Gen) tags() []uint16 {
	n := 0
	switch k := g.r.Intn(100); {
	case k < 5:
		n = 2
	case k < 50:
		n = 1
	}
	var tags []uint16
	for i := 0; i < n; i++ {
		vid := uint16(g.r.Intn(4096))
		if len(g.t.VLANs) > 0 && g.chance(0.8) {
			vid = g.t.VLANs[g.r.Intn(len(g.t.VLANs))]
		}
		tags = append(tags, vid)
	}
	return tags
}

// l2 is an Ethernet header with the given VLAN tags (the outer one of two sometimes an 802.1ad tag).
func (g *Gen) l2(etype uint16, tags []uint16) []byte {
	h := []byte{0x02, 0, 0, 0, 0x01, 0x00, 0x02, 0, 0, 0, byte(g.r.Intn(256)), 0x02}
	for i, vid := range tags {
		tpid := uint16(0x8100)
		if len(tags) == 2 && i == 0 && g.chance(0.5) {
			tpid = 0x88A8
		}
		h = binary.BigEndian.AppendUint16(h, tpid)
		h = binary.BigEndian.AppendUint16(h, uint16(g.r.Intn(8))<<13|vid)
	}
	return binary.BigEndian.AppendUint16(h, etype)
}

// srv6 is an IPv6 packet for a SID: an SRH of 0-16 segments or none, extension headers before and
// after it, and an IPv4, IPv6, Ethernet or other payload.
func (g *Gen) srv6() []byte {
	var hs []ext
	if g.chance(0.1) {
		hs = append(hs, g.optsHeader(protoHopOpts))
	}
	if g.chance(0.1) {
		hs = append(hs, g.optsHeader(protoDstOpts))
	}
	if g.chance(0.01) { // a chain longer than the data plane walks (it must not guess past it)
		for i := 0; i < 8+g.r.Intn(4); i++ {
			hs = append(hs, g.optsHeader(protoDstOpts))
		}
	}
	dst := g.sid()
	if g.chance(0.8) {
		n := []int{1, 1, 2, 2, 3, 4, 0, 5, 8, 16}[g.r.Intn(10)]
		segs := make([]netip.Addr, n)
		for i := range segs {
			segs[i] = g.sid()
		}
		sl := 0
		if n > 0 {
			sl = g.r.Intn(n)
		}
		if g.chance(0.05) {
			sl = g.r.Intn(256)
		}
		if sl < n && g.chance(0.9) {
			segs[sl] = dst
		}
		hs = append(hs, g.srh(segs, sl))
	}
	if g.chance(0.08) {
		hs = append(hs, g.optsHeader(protoDstOpts))
	}
	if g.chance(0.06) {
		hs = append(hs, g.fragHeader())
	}
	last, payload := g.innerPayload()
	nh, pl := chain(hs, last, payload)
	return append(g.ipv6(g.src6(), dst, nh, len(pl)), pl...)
}

// innerPayload is what an SRv6 packet carries.
func (g *Gen) innerPayload() (uint8, []byte) {
	switch n := g.r.Intn(100); {
	case n < 45:
		return protoIPv4, g.tenant4()
	case n < 70:
		return protoIPv6, g.tenant6()
	case n < 75:
		return protoEthernet, append(g.l2(0x0800, g.tags()), g.tenant4()...)
	case n < 85:
		return protoUDP, g.bytes(8 + g.r.Intn(64))
	case n < 90:
		return protoNone, nil
	}
	return uint8(g.r.Intn(256)), g.bytes(g.r.Intn(64))
}

// tenant4 is a tenant's IPv4 packet towards a tenant route or a decap table.
func (g *Gen) tenant4() []byte {
	proto := []uint8{protoUDP, protoTCP, protoICMP, uint8(g.r.Intn(256))}[g.r.Intn(4)]
	return g.ipv4(g.addr4(), proto, g.payload())
}

// tenant6 is a tenant's IPv6 packet: sometimes addressed into the domain or carrying an SRH.
func (g *Gen) tenant6() []byte {
	var hs []ext
	dst := g.addr6()
	if g.chance(0.1) {
		dst = g.sid()
	}
	if g.chance(0.1) {
		hs = append(hs, g.optsHeader(protoHopOpts))
	}
	if g.chance(0.01) {
		for i := 0; i < 8+g.r.Intn(4); i++ {
			hs = append(hs, g.optsHeader(protoDstOpts))
		}
	}
	if g.chance(0.1) {
		hs = append(hs, g.srh([]netip.Addr{dst, g.sid()}, 0))
	}
	if g.chance(0.05) {
		hs = append(hs, g.fragHeader())
	}
	nh, pl := chain(hs, protoUDP, g.payload())
	return append(g.ipv6(g.src6(), dst, nh, len(pl)), pl...)
}

// payload is an upper-layer payload: mostly small, sometimes near or over the MTUs of the rig (1500,
// 3500, 9000).
func (g *Gen) payload() []byte {
	switch n := g.r.Intn(100); {
	case n < 3:
		return g.bytes(3300 + g.r.Intn(5800)) // jumbo: multi-buffer frames
	case n < 7:
		return g.bytes(1300 + g.r.Intn(1900))
	case n < 12:
		return nil
	}
	return g.bytes(8 + g.r.Intn(120))
}

// sid is mostly a local SID, sometimes another node's SID or any address.
func (g *Gen) sid() netip.Addr {
	switch n := g.r.Intn(100); {
	case n < 70 && len(g.t.SIDs) > 0:
		return g.t.SIDs[g.r.Intn(len(g.t.SIDs))]
	case n < 90 && len(g.t.Segs) > 0:
		return g.t.Segs[g.r.Intn(len(g.t.Segs))]
	}
	return g.addr6()
}

func (g *Gen) addr6() netip.Addr { return g.in(g.pick(g.t.Pfx6, 6), netip.MustParsePrefix("fc00::/8")) }
func (g *Gen) src6() netip.Addr  { return g.in(g.t.Src6, netip.MustParsePrefix("2001:db8::/32")) }
func (g *Gen) addr4() netip.Addr {
	return g.in(g.pick(g.t.Pfx4, 4), netip.MustParsePrefix("198.18.0.0/15"))
}

// pick is mostly the current tenant's prefixes of the family (bits 4 or 6), when it has any.
func (g *Gen) pick(all []netip.Prefix, family int) []netip.Prefix {
	var own []netip.Prefix
	for _, p := range g.routes {
		if p.Addr().Is4() == (family == 4) {
			own = append(own, p)
		}
	}
	if len(own) > 0 && g.chance(0.7) {
		return own
	}
	return all
}

// in is a random address inside one of ps (or inside def when ps is empty or by chance).
func (g *Gen) in(ps []netip.Prefix, def netip.Prefix) netip.Addr {
	p := def
	if len(ps) > 0 && g.chance(0.9) {
		p = ps[g.r.Intn(len(ps))]
	}
	b := p.Addr().AsSlice()
	rnd := g.bytes(len(b))
	for i := range b {
		keep := max(0, min(8, p.Bits()-8*i))
		mask := byte(0xFF << (8 - keep))
		if keep == 0 {
			mask = 0
		}
		b[i] = b[i]&mask | rnd[i]&^mask
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

func (g *Gen) chance(p float64) bool { return g.r.Float64() < p }

func (g *Gen) bytes(n int) []byte {
	b := make([]byte, n)
	g.r.Read(b)
	return b
}
