package pktcheck

// vxlan.go: the oracle for VXLAN over IPv6: a frame that leaves a bridge port encapsulated
// must be exactly the input behind a right outer header to the remote of its destination MAC; a
// frame that leaves decapsulated must be exactly the inner frame of a well-formed VXLAN packet to the
// local VTEP, from one of its remotes, to a MAC behind a local port. RFC 7348, RFC 8200, RFC 6040.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
)

// VXLAN is the device and tables the frames are checked against.
type VXLAN struct {
	Local     netip.Addr
	Port      uint16
	VNI       uint32
	SportLo   uint16 // source ports SportLo .. SportHi-1
	SportHi   uint16
	HopLimit  uint8
	Remotes   map[netip.Addr]bool    // VXLAN is taken from them
	RemoteOf  map[[6]byte]netip.Addr // a MAC behind a remote (encapsulated to it)
	LocalMACs map[[6]byte]bool       // MACs behind local ports (decapsulated to them)
}

// ToLocalVTEP says whether frame f is UDP over IPv6 to the device's address and port (what the fast
// path may decapsulate).
func (v *VXLAN) ToLocalVTEP(f []byte) bool {
	etype, off, err := L2(f)
	if err != nil || etype != etherIPv6 || len(f) < off+48 || f[off+6] != 17 {
		return false
	}
	dst, _ := netip.AddrFromSlice(f[off+24 : off+40])
	return dst == v.Local && binary.BigEndian.Uint16(f[off+42:]) == v.Port
}

func mac6(b []byte) (m [6]byte) { copy(m[:], b); return m }

// Encapsulated checks out, a bridge port's frame in as it leaves towards the remote VTEP.
func (v *VXLAN) Encapsulated(in, out []byte) error {
	if len(in) < 14 {
		return errors.New("encapsulated a frame shorter than Ethernet")
	}
	remote, ok := v.RemoteOf[mac6(in)]
	if !ok {
		return fmt.Errorf("encapsulated a frame to %x, which is behind no remote", in[:6])
	}
	if isND(in) || in[6]&1 != 0 {
		return errors.New("encapsulated neighbor discovery or a frame from a multicast source (the kernel's)")
	}
	if len(out) != 14+56+len(in) || !bytes.Equal(out[70:], in) {
		return errors.New("the inner frame is not the frame that came in")
	}
	if binary.BigEndian.Uint16(out[12:]) != etherIPv6 {
		return errors.New("outer EtherType not IPv6")
	}
	ip := out[14:70]
	word := binary.BigEndian.Uint32(ip)
	ecn := uint32(0)
	if etype, off, err := L2(in); err == nil {
		switch {
		case etype == etherIPv4 && len(in) >= off+20:
			ecn = uint32(in[off+1] & 3)
		case etype == etherIPv6 && len(in) >= off+40:
			ecn = binary.BigEndian.Uint32(in[off:]) >> 20 & 3
		}
	}
	if ecn == 3 {
		ecn = 2 // RFC 6040: CE is not copied out
	}
	if word>>28 != 6 || word>>20&3 != ecn {
		return fmt.Errorf("outer first word %08x (inner ECN %d)", word, ecn)
	}
	src, _ := netip.AddrFromSlice(ip[8:24])
	dst, _ := netip.AddrFromSlice(ip[24:40])
	if int(binary.BigEndian.Uint16(ip[4:])) != 16+len(in) || ip[6] != 17 || ip[7] != v.HopLimit || src != v.Local || dst != remote {
		return fmt.Errorf("outer IPv6 %x, want %s -> %s, hop limit %d", ip[:40], v.Local, remote, v.HopLimit)
	}
	u := out[54:]
	sport := binary.BigEndian.Uint16(u)
	if sport < v.SportLo || sport >= v.SportHi || binary.BigEndian.Uint16(u[2:]) != v.Port ||
		int(binary.BigEndian.Uint16(u[4:])) != len(u) {
		return fmt.Errorf("UDP header %x", u[:8])
	}
	if binary.BigEndian.Uint32(u[8:]) != 0x08000000 || binary.BigEndian.Uint32(u[12:]) != v.VNI<<8 {
		return fmt.Errorf("VXLAN header %x", u[8:16])
	}
	if UDP6Checksum(ip[8:24], ip[24:40], u) != 0 || binary.BigEndian.Uint16(u[6:]) == 0 {
		return errors.New("UDP checksum does not verify")
	}
	return nil
}

// UDP6Checksum is the checksum over the IPv6 pseudo-header and datagram u: 0 when u's checksum is right.
func UDP6Checksum(src, dst, u []byte) uint16 {
	p := make([]byte, 0, 40+len(u))
	p = append(append(p, src...), dst...)
	p = binary.BigEndian.AppendUint32(p, uint32(len(u)))
	p = append(p, 0, 0, 0, 17)
	return Checksum(append(p, u...))
}

// Decapsulated checks out, the VXLAN packet in as it leaves towards a local port.
func (v *VXLAN) Decapsulated(in, out []byte) error {
	etype, off, err := L2(in)
	if err != nil || etype != etherIPv6 || len(in) < off+40+16+14 {
		return errors.New("decapsulated something that is no VXLAN over IPv6")
	}
	ip := in[off:]
	plen := int(binary.BigEndian.Uint16(ip[4:]))
	if ip[6] != 17 || len(ip) < 40+plen {
		return fmt.Errorf("decapsulated a packet of next header %d, payload length %d in %d bytes", ip[6], plen, len(ip))
	}
	u := ip[40 : 40+plen]
	src, _ := netip.AddrFromSlice(ip[8:24])
	switch {
	case !v.Remotes[src]:
		return fmt.Errorf("decapsulated VXLAN from %s, no remote", src)
	case int(binary.BigEndian.Uint16(u[4:])) != plen || binary.BigEndian.Uint16(u[6:]) == 0 || UDP6Checksum(ip[8:24], ip[24:40], u) != 0:
		return errors.New("decapsulated a datagram whose length or checksum is wrong")
	case binary.BigEndian.Uint32(u[8:]) != 0x08000000 || binary.BigEndian.Uint32(u[12:]) != v.VNI<<8:
		return fmt.Errorf("decapsulated a VXLAN header %x", u[8:16])
	}
	inner := u[16:]
	if !bytes.Equal(out, inner) {
		return errors.New("the frame that left is not the inner frame")
	}
	if !v.LocalMACs[mac6(inner)] || inner[6]&1 != 0 {
		return fmt.Errorf("decapsulated a frame to %x from %x: not a local MAC, or a multicast source", inner[:6], inner[6:12])
	}
	if isND(inner) {
		return errors.New("decapsulated neighbor discovery (the kernel's)")
	}
	return nil
}

// isND: ARP, or ICMPv6 neighbor discovery right behind the IPv6 header (the kernel's, always).
func isND(f []byte) bool {
	it, off, err := L2(f)
	return err == nil && (it == 0x0806 || it == etherIPv6 && len(f) > off+40 && f[off+6] == 58 && f[off+40] >= 133 && f[off+40] <= 137)
}

// Fragments6 checks frags, what the daemon sends for the IPv6 packet at l3off of frame (no extension
// headers) over a link of mtu: each an IPv6 fragment (RFC 8200 4.5) of at most mtu bytes behind the
// same Ethernet header, one identification, offsets in order, more-fragments on all but the last,
// every fragment but the last a multiple of 8 bytes of data; together, the packet's payload.
func Fragments6(frame []byte, l3off, mtu int, frags [][]byte) error {
	if len(frame) < l3off+40 {
		return errors.New("no IPv6 packet to fragment")
	}
	ip := frame[l3off:]
	payload := ip[40 : 40+int(binary.BigEndian.Uint16(ip[4:]))]
	var data []byte
	var id uint32
	for i, f := range frags {
		if len(f) < l3off+48 || len(f)-l3off > mtu {
			return fmt.Errorf("fragment %d: %d bytes for MTU %d", i, len(f)-l3off, mtu)
		}
		h := f[l3off:]
		if !bytes.Equal(f[:l3off], frame[:l3off]) || !bytes.Equal(h[:4], ip[:4]) || !bytes.Equal(h[7:40], ip[7:40]) ||
			h[6] != protoFragment || int(binary.BigEndian.Uint16(h[4:])) != len(h)-40 {
			return fmt.Errorf("fragment %d: headers %x", i, h[:48])
		}
		fh := h[40:48]
		off, more := int(binary.BigEndian.Uint16(fh[2:])&^7), fh[3]&1 == 1
		if i == 0 {
			id = binary.BigEndian.Uint32(fh[4:])
		}
		last := i == len(frags)-1
		if fh[0] != ip[6] || binary.BigEndian.Uint32(fh[4:]) != id || off != len(data) || more == last ||
			!last && (len(h)-48)%8 != 0 {
			return fmt.Errorf("fragment %d: fragment header %x after %d bytes", i, fh, len(data))
		}
		data = append(data, h[48:]...)
	}
	if !bytes.Equal(data, payload) {
		return errors.New("the fragments' data is not the packet's payload")
	}
	return nil
}
