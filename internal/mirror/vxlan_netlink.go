package mirror

// vxlan_netlink.go: the kernel's VXLAN devices and bridge forwarding entries as netlink reports them
// (parsed, and judged for what seg6x could accelerate; vxlan_follow.go follows them).
// Raw attributes, because vishvananda/netlink leaves out several that decide whether a device behaves
// as the fast path would (label policy, ttl inherit, DF, local bypass, reserved bits; an entry's port,
// via device and next-hop group). Facts: docs/design/vxlan-kernel.md section 4.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"

	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// IFLA_VXLAN_* attribute types (linux/if_link.h); golang.org/x/sys names only some of them.
const (
	vxID           = 1
	vxGroup        = 2
	vxLink         = 3
	vxLocal        = 4
	vxTTL          = 5
	vxTOS          = 6
	vxLearning     = 7
	vxAgeing       = 8
	vxLimit        = 9
	vxPortRange    = 10
	vxProxy        = 11
	vxRSC          = 12
	vxL2Miss       = 13
	vxL3Miss       = 14
	vxPort         = 15
	vxGroup6       = 16
	vxLocal6       = 17
	vxUDPCsum      = 18
	vxZeroCsum6Tx  = 19
	vxZeroCsum6Rx  = 20
	vxRemCsumTx    = 21
	vxRemCsumRx    = 22
	vxGBP          = 23
	vxRemCsumNoPar = 24
	vxCollectMD    = 25
	vxLabel        = 26
	vxGPE          = 27
	vxTTLInherit   = 28
	vxDF           = 29
	vxVNIFilter    = 30
	vxLocalBypass  = 31
	vxLabelPolicy  = 32
	vxReservedBits = 33

	vxDefaultPort = 8472 // the kernel's when dstport is 0 or absent (not IANA's 4789)

	ndaNHID = 13 // NDA_NH_ID (linux/neighbour.h)
)

// vxReservedDefault is the kernel's default mask of VXLAN header bits it accepts (the I flag and the
// VNI: flags byte 0x08 only, the reserved fields zero).
var vxReservedDefault = [8]byte{0xf7, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0xff}

// kernelVXLAN is one VXLAN device as the kernel reports it.
type kernelVXLAN struct {
	Ifindex, Master, Link, MTU int
	Name                       string
	Up                         bool
	VNI                        uint32
	Local, Group               netip.Addr // underlay source; default remote or multicast group
	Port                       uint16     // UDP destination port (host order)
	PortLow, PortHigh          uint16     // UDP source port range (0, 0: ip_local_port_range)
	TTL, TOS                   uint8      // 0: the route's / interface's hop limit; TOS 1: inherit
	Label                      uint32     // outer flow label (host order, 20 bits)
	LabelPolicy, DF            uint32
	Ageing                     uint32
	Learning                   bool
	TTLInherit, LocalBypass    bool
	Proxy, RSC, L2Miss, L3Miss bool
	CollectMD, VNIFilter       bool
	GBP, GPE                   bool
	UDPCsum                    bool // IPv4 underlay only
	ZeroCsum6Tx, ZeroCsum6Rx   bool
	RemCsumTx, RemCsumRx       bool
	ReservedBits               []byte // nil: not reported
}

// kernelLink is one link as the VXLAN mirror needs it: what it is (a VXLAN device, a bridge, a bridge
// port) and how it is set up.
type kernelLink struct {
	Ifindex, Master, MTU int
	Name, Kind           string
	Up                   bool
	VX                   *kernelVXLAN // kind vxlan
	Bridge               *bridgeInfo  // kind bridge
	Port                 *bridgePort  // a port of a bridge (slave kind bridge)
}

// bridgeInfo is what decides whether a bridge forwards as the fast path would.
type bridgeInfo struct {
	VLANFiltering bool
	NFCall        bool // br_netfilter: nf_call_iptables, ip6tables or arptables
}

// bridgePort is a bridge port's state and the flags that change how the bridge forwards to it.
type bridgePort struct {
	State                                uint8 // BR_STATE_*: 3 forwarding
	Isolated, NeighSuppress, Locked, MAB bool
	Hairpin                              bool
	Learning                             bool // the bridge learns source MACs on the port
}

// brStateForwarding is BR_STATE_FORWARDING (linux/if_bridge.h).
const brStateForwarding = 3

// IFLA_INFO_SLAVE_KIND / _DATA (linux/if_link.h).
const (
	infoSlaveKind = 4
	infoSlaveData = 5
)

// parseLink reads an RTM_NEWLINK payload (AF_UNSPEC).
func parseLink(b []byte) (*kernelLink, error) {
	if len(b) < unix.SizeofIfInfomsg {
		return nil, errors.New("short ifinfomsg")
	}
	info := nl.DeserializeIfInfomsg(b)
	attrs, err := nl.ParseRouteAttr(b[unix.SizeofIfInfomsg:])
	if err != nil {
		return nil, err
	}
	l := &kernelLink{Ifindex: int(info.Index), Up: info.Flags&unix.IFF_UP != 0}
	var data, slaveData []byte
	slaveKind := ""
	for _, a := range attrs {
		switch a.Attr.Type & nl.NLA_TYPE_MASK {
		case unix.IFLA_IFNAME:
			l.Name = cString(a.Value)
		case unix.IFLA_MASTER:
			l.Master = int(u32of(a.Value))
		case unix.IFLA_MTU:
			l.MTU = int(u32of(a.Value))
		case unix.IFLA_LINKINFO:
			li, err := nl.ParseRouteAttr(a.Value)
			if err != nil {
				return nil, fmt.Errorf("link %d: IFLA_LINKINFO: %w", l.Ifindex, err)
			}
			for _, x := range li {
				switch x.Attr.Type & nl.NLA_TYPE_MASK {
				case unix.IFLA_INFO_KIND:
					l.Kind = cString(x.Value)
				case unix.IFLA_INFO_DATA:
					data = x.Value
				case infoSlaveKind:
					slaveKind = cString(x.Value)
				case infoSlaveData:
					slaveData = x.Value
				}
			}
		}
	}
	switch l.Kind {
	case "vxlan":
		l.VX = &kernelVXLAN{Ifindex: l.Ifindex, Name: l.Name, Master: l.Master, MTU: l.MTU, Up: l.Up, Learning: true,
			LocalBypass: true}
		if err := l.VX.parseData(data); err != nil {
			return nil, err
		}
	case "bridge":
		l.Bridge = &bridgeInfo{}
		if err := l.Bridge.parse(data); err != nil {
			return nil, fmt.Errorf("bridge %s: %w", l.Name, err)
		}
	}
	if slaveKind == "bridge" {
		l.Port = &bridgePort{Learning: true} // the kernel's default, should the attribute be missing
		if err := l.Port.parse(slaveData); err != nil {
			return nil, fmt.Errorf("bridge port %s: %w", l.Name, err)
		}
	}
	return l, nil
}

func (br *bridgeInfo) parse(b []byte) error {
	attrs, err := nl.ParseRouteAttr(b)
	if err != nil {
		return err
	}
	for _, a := range attrs {
		switch a.Attr.Type & nl.NLA_TYPE_MASK {
		case unix.IFLA_BR_VLAN_FILTERING:
			br.VLANFiltering = u8of(a.Value) != 0
		case unix.IFLA_BR_NF_CALL_IPTABLES, unix.IFLA_BR_NF_CALL_IP6TABLES, unix.IFLA_BR_NF_CALL_ARPTABLES:
			br.NFCall = br.NFCall || u8of(a.Value) != 0
		}
	}
	return nil
}

func (p *bridgePort) parse(b []byte) error {
	attrs, err := nl.ParseRouteAttr(b)
	if err != nil {
		return err
	}
	for _, a := range attrs {
		on := u8of(a.Value) != 0
		switch a.Attr.Type & nl.NLA_TYPE_MASK {
		case unix.IFLA_BRPORT_STATE:
			p.State = u8of(a.Value)
		case unix.IFLA_BRPORT_ISOLATED:
			p.Isolated = on
		case unix.IFLA_BRPORT_NEIGH_SUPPRESS:
			p.NeighSuppress = on
		case unix.IFLA_BRPORT_LOCKED:
			p.Locked = on
		case unix.IFLA_BRPORT_MAB:
			p.MAB = on
		case unix.IFLA_BRPORT_MODE:
			p.Hairpin = on
		case unix.IFLA_BRPORT_LEARNING:
			p.Learning = on
		}
	}
	return nil
}

// refusal says why the bridge would forward otherwise than the fast path ("" if it would not).
func (br *bridgeInfo) refusal() string {
	switch {
	case br.VLANFiltering:
		return "VLAN-aware bridge (vlan_filtering 1)"
	case br.NFCall:
		return "bridge netfilter hooks on (net.bridge.bridge-nf-call-iptables / ip6tables / arptables, or the bridge's nf_call_*): set them to 0"
	}
	return ""
}

// refusal says why frames to or from the port are the kernel's ("" if they need not be). ARP and ND
// are the kernel's on every port (neigh_suppress answers them in the bridge), so that flag is no reason.
func (p *bridgePort) refusal() string {
	switch {
	case p.State != brStateForwarding:
		return fmt.Sprintf("port not forwarding (STP state %d)", p.State)
	case p.Isolated:
		return "isolated port"
	case p.Locked || p.MAB:
		return "locked port (802.1X / MAB)"
	}
	return ""
}

func (v *kernelVXLAN) parseData(b []byte) error {
	attrs, err := nl.ParseRouteAttr(b)
	if err != nil {
		return fmt.Errorf("vxlan %s: IFLA_INFO_DATA: %w", v.Name, err)
	}
	for _, a := range attrs {
		val := a.Value
		flag := func() bool { return len(val) == 0 || val[0] != 0 } // u8 0/1, or a flag attribute
		switch a.Attr.Type & nl.NLA_TYPE_MASK {
		case vxID:
			v.VNI = u32of(val)
		case vxGroup, vxGroup6:
			v.Group = addrOf(val)
		case vxLocal, vxLocal6:
			v.Local = addrOf(val)
		case vxLink:
			v.Link = int(u32of(val))
		case vxTTL:
			v.TTL = u8of(val)
		case vxTOS:
			v.TOS = u8of(val)
		case vxLearning:
			v.Learning = flag()
		case vxAgeing:
			v.Ageing = u32of(val)
		case vxPortRange:
			if len(val) >= 4 {
				v.PortLow, v.PortHigh = binary.BigEndian.Uint16(val), binary.BigEndian.Uint16(val[2:])
			}
		case vxProxy:
			v.Proxy = flag()
		case vxRSC:
			v.RSC = flag()
		case vxL2Miss:
			v.L2Miss = flag()
		case vxL3Miss:
			v.L3Miss = flag()
		case vxPort:
			if len(val) >= 2 {
				v.Port = binary.BigEndian.Uint16(val)
			}
		case vxUDPCsum:
			v.UDPCsum = flag()
		case vxZeroCsum6Tx:
			v.ZeroCsum6Tx = flag()
		case vxZeroCsum6Rx:
			v.ZeroCsum6Rx = flag()
		case vxRemCsumTx:
			v.RemCsumTx = flag()
		case vxRemCsumRx:
			v.RemCsumRx = flag()
		case vxGBP:
			v.GBP = true
		case vxCollectMD:
			v.CollectMD = flag()
		case vxLabel:
			if len(val) >= 4 {
				v.Label = binary.BigEndian.Uint32(val) & 0xFFFFF
			}
		case vxGPE:
			v.GPE = true
		case vxTTLInherit:
			v.TTLInherit = flag()
		case vxDF:
			v.DF = uint32(u8of(val))
		case vxVNIFilter:
			v.VNIFilter = flag()
		case vxLocalBypass:
			v.LocalBypass = flag()
		case vxLabelPolicy:
			v.LabelPolicy = u32of(val)
		case vxReservedBits:
			v.ReservedBits = append([]byte(nil), val...)
		}
	}
	if v.Port == 0 {
		v.Port = vxDefaultPort
	}
	return nil
}

// refusal says why seg6x would leave the device to the kernel ("" if it could accelerate it): what
// the fast path does not do as the kernel does (docs/design/vxlan-kernel.md section 7).
func (v *kernelVXLAN) refusal() string {
	switch {
	case v.CollectMD || v.VNIFilter:
		return "external (collect_metadata / vnifilter): per-packet tunnel metadata"
	case !v.Local.IsValid():
		return "no local address: the source is the kernel's choice per packet"
	case !v.Local.Is6() || v.Group.IsValid() && !v.Group.Is6():
		return "IPv4 underlay"
	case v.Local.IsLinkLocalUnicast() || v.Group.IsLinkLocalUnicast():
		return "link-local VTEP"
	case !v.Local.IsGlobalUnicast():
		return "local address not a global unicast one"
	case v.Group.IsMulticast():
		return "multicast group for BUM traffic"
	case v.GBP || v.GPE:
		return "GBP or GPE header extensions"
	case v.RemCsumTx || v.RemCsumRx:
		return "remote checksum offload"
	case v.Proxy || v.RSC || v.L2Miss || v.L3Miss:
		return "proxy, rsc, l2miss or l3miss"
	case v.TTLInherit || v.TOS == 1 || v.LabelPolicy != 0:
		return "ttl, tos or flow label inherited from the inner packet"
	case v.ZeroCsum6Tx || v.ZeroCsum6Rx:
		return "zero UDP checksums over IPv6 (udp6zerocsumtx/rx)"
	case v.ReservedBits != nil && string(v.ReservedBits) != string(vxReservedDefault[:]):
		return "reserved bits accepted beyond the kernel's default"
	}
	return ""
}

// fdbEntry is one forwarding entry of a bridge or of a VXLAN device (AF_BRIDGE neighbour message).
type fdbEntry struct {
	Ifindex int // the port (bridge table) or the VXLAN device (its own table)
	Master  int // NDA_MASTER: the bridge (bridge table)
	MAC     net.HardwareAddr
	VLAN    uint16
	Dst     netip.Addr // VXLAN table: the remote VTEP
	VNI     uint32     // 0: the device's
	Port    uint16     // 0: the device's
	Via     int        // NDA_IFINDEX: the underlay device to reach Dst by
	NHID    uint32     // a next-hop group instead of Dst
	State   uint16
	Flags   uint8
	Deleted bool
}

// dynamic: the kernel learned the entry and ages it (not permanent, static or externally learned).
func (e *fdbEntry) dynamic() bool {
	return e.State&(unix.NUD_PERMANENT|unix.NUD_NOARP) == 0 && e.Flags&unix.NTF_EXT_LEARNED == 0
}

// bridgeTable: the entry is the bridge's (MAC -> port), not the VXLAN device's own (MAC -> remote).
func (e *fdbEntry) bridgeTable() bool { return e.Flags&unix.NTF_SELF == 0 }

// key identifies the entry the way the kernel updates it: a bridge's MAC is on one port (a move
// rewrites the entry in place), a VXLAN device's unicast MAC has one remote (likewise a replace: the
// kernel appends remotes only to the all-zeros and multicast MACs, which have one entry per remote).
func (e *fdbEntry) key() string {
	if e.bridgeTable() {
		return fmt.Sprintf("%d true %d %s", e.Master, e.VLAN, e.MAC)
	}
	k := fmt.Sprintf("%d false %d %s", e.Ifindex, e.VLAN, e.MAC)
	if e.MAC[0]&1 != 0 || isZeroMAC(e.MAC) {
		k += fmt.Sprintf(" %s %d %d %d %d", e.Dst, e.Port, e.VNI, e.Via, e.NHID)
	}
	return k
}

func isZeroMAC(m net.HardwareAddr) bool {
	for _, b := range m {
		if b != 0 {
			return false
		}
	}
	return true
}

// parseFDB reads an RTM_NEWNEIGH / RTM_DELNEIGH payload; nil (no error) for a neighbour that is
// not a bridge forwarding entry.
func parseFDB(b []byte, deleted bool) (*fdbEntry, error) {
	if len(b) < unix.SizeofNdMsg {
		return nil, errors.New("short ndmsg")
	}
	if b[0] != unix.AF_BRIDGE {
		return nil, nil
	}
	e := &fdbEntry{Ifindex: int(int32(binary.NativeEndian.Uint32(b[4:]))), State: binary.NativeEndian.Uint16(b[8:]),
		Flags: b[10], Deleted: deleted}
	attrs, err := nl.ParseRouteAttr(b[unix.SizeofNdMsg:])
	if err != nil {
		return nil, err
	}
	for _, a := range attrs {
		val := a.Value
		switch a.Attr.Type & nl.NLA_TYPE_MASK {
		case unix.NDA_LLADDR:
			if len(val) != 6 {
				return nil, fmt.Errorf("NDA_LLADDR of %d bytes", len(val))
			}
			e.MAC = append(net.HardwareAddr(nil), val...)
		case unix.NDA_DST:
			if e.Dst = addrOf(val); !e.Dst.IsValid() {
				return nil, fmt.Errorf("NDA_DST of %d bytes", len(val))
			}
		case unix.NDA_VLAN:
			if len(val) >= 2 {
				e.VLAN = binary.NativeEndian.Uint16(val)
			}
		case unix.NDA_VNI:
			e.VNI = u32of(val)
		case unix.NDA_PORT:
			if len(val) >= 2 {
				e.Port = binary.BigEndian.Uint16(val)
			}
		case unix.NDA_IFINDEX:
			e.Via = int(u32of(val))
		case unix.NDA_MASTER:
			e.Master = int(u32of(val))
		case ndaNHID:
			e.NHID = u32of(val)
		}
	}
	if e.MAC == nil {
		return nil, errors.New("no NDA_LLADDR")
	}
	return e, nil
}

// refusal says why a VXLAN-table entry could not be followed by the fast path ("" if it could).
func (e *fdbEntry) refusal() string {
	switch {
	case e.bridgeTable():
		return ""
	case e.NHID != 0:
		return "next-hop group entry"
	case e.Via != 0:
		return "remote through a given device (via)"
	case !e.Dst.IsValid():
		return "no remote address"
	case !e.Dst.Is6():
		return "IPv4 remote"
	case e.Dst.IsMulticast():
		return "multicast remote"
	case !e.Dst.IsGlobalUnicast() || e.Dst.IsLinkLocalUnicast():
		return "remote not a global unicast IPv6 address"
	}
	return ""
}

func u32of(b []byte) uint32 {
	if len(b) < 4 {
		return 0
	}
	return binary.NativeEndian.Uint32(b)
}

func u8of(b []byte) uint8 {
	if len(b) < 1 {
		return 0
	}
	return b[0]
}

func addrOf(b []byte) netip.Addr {
	a, ok := netip.AddrFromSlice(b)
	if !ok {
		return netip.Addr{}
	}
	return a.Unmap()
}

func cString(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}
