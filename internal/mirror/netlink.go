// Package mirror follows the kernel's own SRv6 configuration (routes with `encap seg6` and `encap
// seg6local`, the routes and rules around them) over netlink and keeps an equivalent set of seg6x
// objects in the data plane, through the same state commits as every other front end.
package mirror

// netlink.go: reading routes from the kernel (dumps and events) into kernelRoute, with the seg6 and
// seg6local attributes parsed here so that anything seg6x does not understand (a flavor, a BPF
// program, an unknown attribute) is seen and reported instead of silently dropped.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"sort"
	"strings"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// Kernel constants (linux/lwtunnel.h, linux/seg6_iptunnel.h, linux/seg6_local.h).
const (
	encapSeg6      = 5
	encapSeg6Local = 7

	seg6ModeInline   = 0
	seg6ModeEncap    = 1
	seg6ModeL2Encap  = 2
	seg6ModeEncapRed = 3
	seg6ModeL2Red    = 4

	localAction   = 1
	localSRH      = 2
	localTable    = 3
	localNH4      = 4
	localNH6      = 5
	localIIF      = 6
	localOIF      = 7
	localBPF      = 8
	localVRFTable = 9
	localCounters = 10
	localFlavors  = 11

	// Inside SEG6_LOCAL_FLAVORS.
	flvOperation   = 1 // u32: a bitmask of 1<<SEG6_LOCAL_FLV_OP_*
	flvLCBlockBits = 2 // u8: lblen
	flvLCNodeFnBit = 3 // u8: nflen

	// SEG6_LOCAL_FLV_OPERATION bits (1 << SEG6_LOCAL_FLV_OP_PSP, _USP, _USD, _NEXT_CSID).
	flvPSP      = 1 << 1
	flvUSP      = 1 << 2
	flvUSD      = 1 << 3
	flvNextCSID = 1 << 4
)

var localActionNames = map[uint32]string{1: "End", 2: "End.X", 3: "End.T", 4: "End.DX2", 5: "End.DX6", 6: "End.DX4",
	7: "End.DT6", 8: "End.DT4", 9: "End.B6", 10: "End.B6.Encaps", 11: "End.BM", 12: "End.S", 13: "End.AS",
	14: "End.AM", 15: "End.BPF", 16: "End.DT46"}

// seg6Local is a seg6local route's behavior.
type seg6Local struct {
	Action   uint32
	Table    uint32
	VRFTable uint32
	NH4, NH6 netip.Addr
	Attrs    []uint16 // attribute types present besides the action
	// SEG6_LOCAL_FLAVORS, when Attrs has localFlavors: the operation bitmask (flv*) and the
	// NEXT-C-SID lengths in bits (0 when absent).
	Flavors      uint32
	LBLen, NFLen uint8
	// SEG6_LOCAL_SRH (End.B6.Encaps): its segments in path order (the SRH lists them last first), or
	// why the SRH cannot be mirrored (TLVs, HMAC, a tag: seg6x policies carry none).
	SRH    []netip.Addr
	SRHWhy string
}

// flavorNames names the flavor bits of an operation mask in the kernel's (and iproute2's) order.
func flavorNames(ops uint32) []string {
	var out []string
	for bit := 0; bit < 32; bit++ {
		if ops&(1<<bit) == 0 {
			continue
		}
		switch uint32(1) << bit {
		case flvPSP:
			out = append(out, "psp")
		case flvUSP:
			out = append(out, "usp")
		case flvUSD:
			out = append(out, "usd")
		case flvNextCSID:
			out = append(out, "next-csid")
		default:
			out = append(out, fmt.Sprintf("bit %d", bit))
		}
	}
	return out
}

// kernelRoute is one kernel route, reduced to what the mirror needs.
type kernelRoute struct {
	Family    int
	Table     uint32
	Dst       netip.Prefix
	Src       bool // a source-specific (IPv6 "from") route
	Type      uint8
	Tos       uint8
	Priority  uint32
	Oif       uint32
	Multipath bool
	Encap     uint16
	Seg6Mode  int
	Segs      []netip.Addr
	Local     *seg6Local
}

// key identifies a route the way the kernel does (a replace keeps it, a second metric adds one).
func (r *kernelRoute) key() string {
	return fmt.Sprintf("%d|%d|%s|%d|%d", r.Family, r.Table, r.Dst, r.Tos, r.Priority)
}

func (r *kernelRoute) String() string {
	s := fmt.Sprintf("%s table %s", r.Dst, tableName(r.Table))
	switch r.Encap {
	case encapSeg6:
		s += fmt.Sprintf(" encap seg6 mode %s segs %v", seg6ModeName(r.Seg6Mode), r.Segs)
	case encapSeg6Local:
		s += " encap seg6local action " + localActionName(r.Local.Action)
		if l := r.Local; len(l.SRH) > 0 {
			segs := make([]string, len(l.SRH))
			for i, a := range l.SRH {
				segs[i] = a.String()
			}
			s += " srh segs " + strings.Join(segs, ",")
		}
		if l := r.Local; slices.Contains(l.Attrs, localFlavors) {
			s += " flavors " + strings.Join(flavorNames(l.Flavors), ",")
			if l.Flavors&flvNextCSID != 0 {
				s += fmt.Sprintf(" lblen %d nflen %d", l.LBLen, l.NFLen)
			}
		}
	}
	return s
}

func tableName(t uint32) string {
	switch t {
	case unix.RT_TABLE_MAIN:
		return "main"
	case unix.RT_TABLE_LOCAL:
		return "local"
	}
	return fmt.Sprint(t)
}

func seg6ModeName(m int) string {
	return map[int]string{seg6ModeInline: "inline", seg6ModeEncap: "encap", seg6ModeL2Encap: "l2encap",
		seg6ModeEncapRed: "encap.red", seg6ModeL2Red: "l2encap.red"}[m]
}

func localActionName(a uint32) string {
	if n, ok := localActionNames[a]; ok {
		return n
	}
	return fmt.Sprintf("action %d", a)
}

// parseRoute decodes an RTM_NEWROUTE / RTM_DELROUTE payload (rtmsg + attributes).
func parseRoute(b []byte) (*kernelRoute, error) {
	if len(b) < unix.SizeofRtMsg {
		return nil, errors.New("short rtmsg")
	}
	m := nl.DeserializeRtMsg(b)
	r := &kernelRoute{Family: int(m.Family), Table: uint32(m.Table), Type: m.Type, Tos: m.Tos}
	attrs, err := nl.ParseRouteAttr(b[unix.SizeofRtMsg:])
	if err != nil {
		return nil, err
	}
	var dst []byte
	var encap []byte
	for _, a := range attrs {
		switch a.Attr.Type {
		case unix.RTA_DST:
			dst = a.Value
		case unix.RTA_SRC:
			r.Src = m.Src_len > 0
		case unix.RTA_TABLE:
			r.Table = binary.NativeEndian.Uint32(a.Value)
		case unix.RTA_PRIORITY:
			r.Priority = binary.NativeEndian.Uint32(a.Value)
		case unix.RTA_OIF:
			r.Oif = binary.NativeEndian.Uint32(a.Value)
		case unix.RTA_MULTIPATH:
			r.Multipath = true
		case unix.RTA_ENCAP_TYPE:
			r.Encap = binary.NativeEndian.Uint16(a.Value)
		case unix.RTA_ENCAP:
			encap = a.Value
		}
	}
	bits := 32
	zero := netip.IPv4Unspecified()
	if r.Family == unix.AF_INET6 {
		bits, zero = 128, netip.IPv6Unspecified()
	} else if r.Family != unix.AF_INET {
		return nil, nil // not IP
	}
	addr := zero
	if dst != nil {
		a, ok := netip.AddrFromSlice(dst)
		if !ok {
			return nil, fmt.Errorf("bad RTA_DST of %d bytes", len(dst))
		}
		addr = a.Unmap()
	}
	if int(m.Dst_len) > bits {
		return nil, fmt.Errorf("prefix length %d", m.Dst_len)
	}
	r.Dst = netip.PrefixFrom(addr, int(m.Dst_len)).Masked()
	switch r.Encap {
	case encapSeg6:
		var e netlink.SEG6Encap
		if err := e.Decode(encap); err != nil {
			return nil, fmt.Errorf("seg6 encap of %s: %w", r.Dst, err)
		}
		r.Seg6Mode = e.Mode
		// The SRH lists segments last first (Segment List[0] is the last SID): the path order is
		// the reverse, the order `ip route ... segs` was given in.
		for i := len(e.Segments) - 1; i >= 0; i-- {
			a, _ := netip.AddrFromSlice(e.Segments[i])
			r.Segs = append(r.Segs, a.Unmap())
		}
	case encapSeg6Local:
		l, err := parseLocal(encap)
		if err != nil {
			return nil, fmt.Errorf("seg6local of %s: %w", r.Dst, err)
		}
		r.Local = l
	}
	return r, nil
}

func parseLocal(b []byte) (*seg6Local, error) {
	attrs, err := nl.ParseRouteAttr(b)
	if err != nil {
		return nil, err
	}
	l := &seg6Local{}
	for _, a := range attrs {
		t := a.Attr.Type & 0x3fff // without NLA_F_NESTED / NLA_F_NET_BYTEORDER
		switch t {
		case localAction:
			l.Action = binary.NativeEndian.Uint32(a.Value)
			continue
		case localTable:
			l.Table = binary.NativeEndian.Uint32(a.Value)
		case localVRFTable:
			l.VRFTable = binary.NativeEndian.Uint32(a.Value)
		case localNH4:
			l.NH4, _ = netip.AddrFromSlice(a.Value[:4])
		case localNH6:
			l.NH6, _ = netip.AddrFromSlice(a.Value[:16])
		case localFlavors:
			if err := parseFlavors(l, a.Value); err != nil {
				return nil, err
			}
		case localSRH:
			l.SRH, l.SRHWhy = parseLocalSRH(a.Value)
		}
		l.Attrs = append(l.Attrs, t)
	}
	sort.Slice(l.Attrs, func(i, j int) bool { return l.Attrs[i] < l.Attrs[j] })
	return l, nil
}

// parseLocalSRH reads the SRH of a seg6local route (struct ipv6_sr_hdr, as `ip route ... encap
// seg6local action End.B6.Encaps srh segs A,B` gives it): its segments in path order, or why seg6x
// cannot write the same header.
func parseLocalSRH(b []byte) ([]netip.Addr, string) {
	if len(b) < 8 || b[2] != 4 {
		return nil, "SRH attribute that is not a segment routing header"
	}
	n := int(b[4]) + 1 // first segment (last entry) + 1
	switch {
	case len(b) < 8+16*n:
		return nil, fmt.Sprintf("SRH attribute of %d bytes for %d segments", len(b), n)
	case int(b[1]) != 2*n || len(b) != 8+16*n:
		return nil, "SRH with TLVs (HMAC, padding): seg6x policies carry none"
	case b[5] != 0 || b[6] != 0 || b[7] != 0:
		return nil, "SRH with flags or a tag: seg6x policies write 0"
	case int(b[3]) != n-1:
		return nil, fmt.Sprintf("SRH with segments left %d of %d segments", b[3], n)
	}
	segs := make([]netip.Addr, n)
	for i := 0; i < n; i++ {
		segs[n-1-i] = netip.AddrFrom16([16]byte(b[8+16*i : 24+16*i]))
	}
	return segs, ""
}

// parseFlavors reads the SEG6_LOCAL_FLAVORS nest (its attributes may carry NLA_F_NESTED, as the
// kernel's dumps set it on the nest itself).
func parseFlavors(l *seg6Local, b []byte) error {
	attrs, err := nl.ParseRouteAttr(b)
	if err != nil {
		return fmt.Errorf("flavors: %w", err)
	}
	for _, a := range attrs {
		switch a.Attr.Type & 0x3fff {
		case flvOperation:
			if len(a.Value) < 4 {
				return fmt.Errorf("flavors: operation of %d bytes", len(a.Value))
			}
			l.Flavors = binary.NativeEndian.Uint32(a.Value)
		case flvLCBlockBits, flvLCNodeFnBit:
			if len(a.Value) < 1 {
				return errors.New("flavors: empty length attribute")
			}
			if a.Attr.Type&0x3fff == flvLCBlockBits {
				l.LBLen = a.Value[0]
			} else {
				l.NFLen = a.Value[0]
			}
		}
	}
	return nil
}

// dumpRoutes reads every IPv4 and IPv6 route of every table.
func dumpRoutes() (map[string]*kernelRoute, error) {
	out := map[string]*kernelRoute{}
	for _, fam := range []uint8{unix.AF_INET, unix.AF_INET6} {
		msg := nl.NewRtMsg()
		msg.Family = fam
		msgs, err := dumpNetlink("route", unix.RTM_GETROUTE, unix.RTM_NEWROUTE, msg)
		if err != nil {
			return nil, err
		}
		for _, b := range msgs {
			r, err := parseRoute(b)
			if err != nil {
				return nil, err
			}
			if r != nil {
				out[r.key()] = r
			}
		}
	}
	return out, nil
}

// dumpNetlink runs one dump request, again while the kernel reports it interrupted by changes.
func dumpNetlink(what string, typ, reply int, hdr nl.NetlinkRequestData) ([][]byte, error) {
	for attempt := 0; attempt < 5; attempt++ {
		req := nl.NewNetlinkRequest(typ, unix.NLM_F_DUMP)
		req.AddData(hdr)
		msgs, err := req.Execute(unix.NETLINK_ROUTE, uint16(reply))
		if errors.Is(err, nl.ErrDumpInterrupted) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s dump: %w", what, err)
		}
		return msgs, nil
	}
	return nil, fmt.Errorf("%s dump interrupted 5 times in a row", what)
}

// tunnelSource returns `ip sr tunsrc` (the invalid address when unset or unknown).
func tunnelSource() netip.Addr {
	fam, err := netlink.GenlFamilyGet("SEG6")
	if err != nil {
		return netip.Addr{}
	}
	req := nl.NewNetlinkRequest(int(fam.ID), 0)
	req.AddData(&nl.Genlmsg{Command: 4 /* SEG6_CMD_GET_TUNSRC */, Version: 1})
	msgs, err := req.Execute(unix.NETLINK_GENERIC, 0)
	if err != nil || len(msgs) == 0 || len(msgs[0]) < 4 {
		return netip.Addr{}
	}
	attrs, err := nl.ParseRouteAttr(msgs[0][4:])
	if err != nil {
		return netip.Addr{}
	}
	for _, a := range attrs {
		if a.Attr.Type == 1 /* SEG6_ATTR_DST */ && len(a.Value) == 16 {
			if ad, ok := netip.AddrFromSlice(a.Value); ok && !ad.IsUnspecified() {
				return ad
			}
		}
	}
	return netip.Addr{}
}
