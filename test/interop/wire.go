package interoptest

// wire.go: BGP bytes read and written here without GoBGP, so that what seg6x (GoBGP inside) sends is
// checked by code that shares nothing with the library that encoded it. Decoding: the UPDATE bodies
// ExaBGP passes on (its "packets" API output): VPNv4/VPNv6 reach and unreach (RFC 4364, 4659, 8277),
// the next hop as sent (RFC 8950), route targets, and the Prefix-SID attribute's SRv6 L3 Service TLV
// with its SID Structure (RFC 9252). Encoding: the Prefix-SID attribute values the malformed cases
// send through ExaBGP's generic attribute.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
)

// Address families and attributes read here.
const (
	afiIPv4, afiIPv6 = 1, 2
	safiMPLSVPN      = 128

	attrMPReach   = 14
	attrMPUnreach = 15
	attrExtComm   = 16
	attrPrefixSID = 40

	tlvL3Service    = 5 // Prefix-SID TLV: SRv6 L3 Service
	subTLVSIDInfo   = 1 // SRv6 Service sub-TLV: SID Information
	subSubStructure = 1 // SRv6 Service Data sub-sub-TLV: SID Structure

	implicitNull = 3 // the label of a route whose SID is not transposed
)

// vpnRoute is one VPN route of an UPDATE: its NLRI, and (reach only) the attributes it came with.
type vpnRoute struct {
	AFI     uint16
	RD      string       // "ASN:N" or "IPv4:N"
	Prefix  netip.Prefix // the tenant prefix
	Label   uint32       // the first label's 20-bit value
	NextHop []byte       // the MP_REACH next hop field as sent (VPN: RD + address(es))
	RTs     []string     // route targets, "ASN:N" or "IPv4:N"
	SRv6    *srv6Service // nil: no SRv6 L3 Service TLV
}

// srv6Service is the first SID Information sub-TLV of an SRv6 L3 Service TLV.
type srv6Service struct {
	SID       netip.Addr // as in the TLV (transposed bits zero)
	Behavior  uint16
	Structure []byte // LBL, LNL, FL, AL, transposition length and offset; nil: absent
}

// FullSID is the service SID with the transposed bits (Structure[4] bits from offset Structure[5])
// taken back from the top of the label (RFC 9252 section 4).
func (r vpnRoute) FullSID() (netip.Addr, error) {
	if r.SRv6 == nil {
		return netip.Addr{}, errors.New("no SRv6 L3 Service TLV")
	}
	s := r.SRv6
	if s.Structure == nil || s.Structure[4] == 0 {
		return s.SID, nil
	}
	n, off := int(s.Structure[4]), int(s.Structure[5])
	if n > 20 || off+n > 128 {
		return netip.Addr{}, fmt.Errorf("transposition %d bits at %d does not fit", n, off)
	}
	b := s.SID.As16()
	for i := 0; i < n; i++ {
		bit := byte(r.Label >> (19 - i) & 1)
		at := off + i
		b[at/8] = b[at/8]&^(1<<(7-at%8)) | bit<<(7-at%8)
	}
	return netip.AddrFrom16(b), nil
}

// update is one decoded UPDATE: its VPN routes announced and withdrawn, and the next hop length of
// each family it announced.
type update struct {
	Reach, Unreach []vpnRoute
	NextHopLen     map[uint16]int // AFI -> MP_REACH next hop length (VPN families only)
}

// decodeUpdate reads an UPDATE message body (after the 19-byte header).
func decodeUpdate(b []byte) (update, error) {
	u := update{NextHopLen: map[uint16]int{}}
	if len(b) < 2 {
		return u, errors.New("short UPDATE")
	}
	wl := int(binary.BigEndian.Uint16(b))
	if len(b) < 4+wl {
		return u, errors.New("withdrawn routes beyond the message")
	}
	b = b[2+wl:]
	al := int(binary.BigEndian.Uint16(b))
	if len(b) < 2+al {
		return u, errors.New("path attributes beyond the message")
	}
	attrs := b[2 : 2+al]
	var rts []string
	var svc *srv6Service
	for len(attrs) > 0 {
		if len(attrs) < 3 {
			return u, errors.New("short attribute header")
		}
		flags, typ := attrs[0], attrs[1]
		var n, hl int
		if flags&0x10 != 0 { // extended length
			if len(attrs) < 4 {
				return u, errors.New("short attribute header")
			}
			n, hl = int(binary.BigEndian.Uint16(attrs[2:])), 4
		} else {
			n, hl = int(attrs[2]), 3
		}
		if len(attrs) < hl+n {
			return u, fmt.Errorf("attribute %d beyond the attributes", typ)
		}
		v := attrs[hl : hl+n]
		attrs = attrs[hl+n:]
		var err error
		switch typ {
		case attrMPReach:
			err = u.mpReach(v)
		case attrMPUnreach:
			err = u.mpUnreach(v)
		case attrExtComm:
			rts, err = routeTargets(v)
		case attrPrefixSID:
			svc, err = decodePrefixSID(v)
		}
		if err != nil {
			return u, fmt.Errorf("attribute %d: %w", typ, err)
		}
	}
	for i := range u.Reach {
		u.Reach[i].RTs, u.Reach[i].SRv6 = rts, svc
	}
	return u, nil
}

func (u *update) mpReach(v []byte) error {
	if len(v) < 5 {
		return errors.New("short MP_REACH_NLRI")
	}
	afi, safi, nhl := binary.BigEndian.Uint16(v), v[2], int(v[3])
	if safi != safiMPLSVPN {
		return nil
	}
	if len(v) < 5+nhl {
		return errors.New("next hop beyond MP_REACH_NLRI")
	}
	u.NextHopLen[afi] = nhl
	nh := v[4 : 4+nhl]
	rs, err := vpnNLRI(afi, v[5+nhl:])
	for i := range rs {
		rs[i].NextHop = nh
	}
	u.Reach = append(u.Reach, rs...)
	return err
}

func (u *update) mpUnreach(v []byte) error {
	if len(v) < 3 {
		return errors.New("short MP_UNREACH_NLRI")
	}
	if v[2] != safiMPLSVPN {
		return nil
	}
	rs, err := vpnNLRI(binary.BigEndian.Uint16(v), v[3:])
	u.Unreach = append(u.Unreach, rs...)
	return err
}

// vpnNLRI reads labeled VPN prefixes: length in bits, labels up to the bottom of stack (or the
// withdrawal's 0x800000), RD, prefix.
func vpnNLRI(afi uint16, b []byte) ([]vpnRoute, error) {
	var out []vpnRoute
	for len(b) > 0 {
		bits := int(b[0])
		b = b[1:]
		r := vpnRoute{AFI: afi}
		for first := true; ; first = false {
			if len(b) < 3 || bits < 24 {
				return out, errors.New("short label")
			}
			l := uint32(b[0])<<16 | uint32(b[1])<<8 | uint32(b[2])
			b, bits = b[3:], bits-24
			if first {
				r.Label = l >> 4
			}
			if l&1 == 1 || l == 0x800000 || l == 0 {
				break
			}
		}
		if len(b) < 8 || bits < 64 {
			return out, errors.New("short route distinguisher")
		}
		r.RD, b, bits = rdString(b[:8]), b[8:], bits-64
		size := 4
		if afi == afiIPv6 {
			size = 16
		}
		if bits > size*8 || len(b) < (bits+7)/8 {
			return out, fmt.Errorf("prefix of %d bits", bits)
		}
		a := make([]byte, size)
		copy(a, b[:(bits+7)/8])
		b = b[(bits+7)/8:]
		addr, _ := netip.AddrFromSlice(a)
		r.Prefix = netip.PrefixFrom(addr, bits)
		out = append(out, r)
	}
	return out, nil
}

func rdString(b []byte) string {
	switch binary.BigEndian.Uint16(b) {
	case 0:
		return fmt.Sprintf("%d:%d", binary.BigEndian.Uint16(b[2:]), binary.BigEndian.Uint32(b[4:]))
	case 1:
		return fmt.Sprintf("%d.%d.%d.%d:%d", b[2], b[3], b[4], b[5], binary.BigEndian.Uint16(b[6:]))
	case 2:
		return fmt.Sprintf("%d:%d", binary.BigEndian.Uint32(b[2:]), binary.BigEndian.Uint16(b[6:]))
	}
	return fmt.Sprintf("rd-%x", b)
}

// routeTargets reads the route targets (types 0x00, 0x01, 0x02; subtype 0x02) of an extended
// communities attribute.
func routeTargets(v []byte) ([]string, error) {
	if len(v)%8 != 0 {
		return nil, errors.New("extended communities not a multiple of 8 bytes")
	}
	var out []string
	for ; len(v) > 0; v = v[8:] {
		if v[1] != 0x02 {
			continue
		}
		switch v[0] {
		case 0x00:
			out = append(out, fmt.Sprintf("%d:%d", binary.BigEndian.Uint16(v[2:]), binary.BigEndian.Uint32(v[4:])))
		case 0x01:
			out = append(out, fmt.Sprintf("%d.%d.%d.%d:%d", v[2], v[3], v[4], v[5], binary.BigEndian.Uint16(v[6:])))
		case 0x02:
			out = append(out, fmt.Sprintf("%d:%d", binary.BigEndian.Uint32(v[2:]), binary.BigEndian.Uint16(v[6:])))
		}
	}
	return out, nil
}

// tlvs splits type(1) length(2) value TLVs.
func tlvs(b []byte) (map[byte][][]byte, error) {
	out := map[byte][][]byte{}
	for len(b) > 0 {
		if len(b) < 3 {
			return nil, errors.New("short TLV header")
		}
		n := int(binary.BigEndian.Uint16(b[1:]))
		if len(b) < 3+n {
			return nil, fmt.Errorf("TLV %d of %d bytes beyond its container", b[0], n)
		}
		out[b[0]] = append(out[b[0]], b[3:3+n])
		b = b[3+n:]
	}
	return out, nil
}

// decodePrefixSID reads the first SID Information of the SRv6 L3 Service TLV (nil: none).
func decodePrefixSID(v []byte) (*srv6Service, error) {
	top, err := tlvs(v)
	if err != nil || len(top[tlvL3Service]) == 0 {
		return nil, err
	}
	l3 := top[tlvL3Service][0]
	if len(l3) < 1 {
		return nil, errors.New("empty L3 Service TLV")
	}
	subs, err := tlvs(l3[1:]) // after the reserved byte
	if err != nil || len(subs[subTLVSIDInfo]) == 0 {
		return nil, err
	}
	info := subs[subTLVSIDInfo][0]
	if len(info) < 21 {
		return nil, fmt.Errorf("SID Information of %d bytes", len(info))
	}
	s := &srv6Service{SID: netip.AddrFrom16([16]byte(info[1:17])), Behavior: binary.BigEndian.Uint16(info[18:])}
	subsubs, err := tlvs(info[21:])
	if err != nil {
		return nil, err
	}
	if st := subsubs[subSubStructure]; len(st) > 0 {
		if len(st[0]) != 6 {
			return nil, fmt.Errorf("SID Structure of %d bytes", len(st[0]))
		}
		s.Structure = st[0]
	}
	return s, nil
}

// tlv encodes type(1) length(2) value.
func tlv(typ byte, parts ...[]byte) []byte {
	var v []byte
	for _, p := range parts {
		v = append(v, p...)
	}
	return append([]byte{typ, byte(len(v) >> 8), byte(len(v))}, v...)
}

// withLength is an encoded TLV with its length field replaced by n (a malformed TLV).
func withLength(t []byte, n int) []byte {
	out := append([]byte(nil), t...)
	binary.BigEndian.PutUint16(out[1:], uint16(n))
	return out
}

// l3Service is the SRv6 L3 Service TLV holding the given sub-TLVs.
func l3Service(subs ...[]byte) []byte {
	return tlv(tlvL3Service, append([][]byte{{0}}, subs...)...)
}

// sidInfo is an SRv6 SID Information sub-TLV (flags 0) holding the given sub-sub-TLVs.
func sidInfo(sid netip.Addr, behavior uint16, subsubs ...[]byte) []byte {
	a := sid.As16()
	return tlv(subTLVSIDInfo, append([][]byte{{0}, a[:], {0, byte(behavior >> 8), byte(behavior), 0}}, subsubs...)...)
}

// sidStructure is an SRv6 SID Structure sub-sub-TLV: LBL, LNL, FL, AL, transposition length, offset.
func sidStructure(lbl, lnl, fl, al, tl, to byte) []byte {
	return tlv(subSubStructure, []byte{lbl, lnl, fl, al, tl, to})
}
