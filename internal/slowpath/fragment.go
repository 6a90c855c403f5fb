// Package slowpath is the daemon's side of the XDP program's slow path (bpf/slowpath.h): it reads the
// frames the program could not finish alone from the perf ring, does what one XDP run cannot
// (fragment an IPv4 packet into several frames), and runs the result back through the same program as
// if it had arrived on the port the record names, so every fast-path rule still applies to it.
package slowpath

// fragment.go: IPv4 fragmentation of a whole frame (RFC 791 3.2, as the kernel's ip_do_fragment).

import (
	"encoding/binary"
	"errors"
	"fmt"
)

const (
	ipv4FlagDF = 0x4000
	ipv4FlagMF = 0x2000
	ipv4Offset = 0x1FFF
	minIPv4MTU = 68 // RFC 791: every IPv4 link carries 68-byte packets (60 of header, 8 of data)
)

// ErrDontFragment is returned for a packet whose DF flag forbids fragmenting it.
var ErrDontFragment = errors.New("DF set")

// ErrBeyondMax is returned for a fragment whose offset and length reach beyond 65535 bytes (RFC 791:
// no datagram is longer), which no receiver reassembles.
var ErrBeyondMax = errors.New("fragment beyond the largest IPv4 datagram")

// FragmentIPv4 splits the IPv4 packet at l3off of frame (the bytes before it, Ethernet and VLAN tags,
// are repeated in front of every fragment) into fragments of at most mtu bytes of IP each: the data
// cut in multiples of 8 bytes, the offsets and MF flag set (the last fragment keeps the packet's own
// MF, so a fragment can be fragmented again), header length fields and checksums recomputed. Options
// that RFC 791 does not copy are replaced by NOPs after the first fragment, keeping the header
// length, as the kernel does. The packet must fit its frame (trailing bytes are dropped).
func FragmentIPv4(frame []byte, l3off, mtu int) ([][]byte, error) {
	if l3off < 0 || len(frame) < l3off+20 {
		return nil, fmt.Errorf("frame of %d bytes has no IPv4 header at %d", len(frame), l3off)
	}
	ip := frame[l3off:]
	if ip[0]>>4 != 4 {
		return nil, fmt.Errorf("IP version %d, not 4", ip[0]>>4)
	}
	ihl := int(ip[0]&0x0F) * 4
	total := int(binary.BigEndian.Uint16(ip[2:4]))
	if ihl < 20 || total < ihl || total > len(ip) {
		return nil, fmt.Errorf("IPv4 header length %d, total length %d, %d bytes in the frame", ihl, total, len(ip))
	}
	flags := binary.BigEndian.Uint16(ip[6:8])
	if flags&ipv4FlagDF != 0 {
		return nil, ErrDontFragment
	}
	if mtu < minIPv4MTU || mtu < ihl+8 {
		return nil, fmt.Errorf("MTU %d is below the IPv4 minimum (%d, and 8 bytes of data after a %d-byte header)", mtu, minIPv4MTU, ihl)
	}
	if total <= mtu {
		return [][]byte{append([]byte(nil), frame[:l3off+total]...)}, nil
	}
	chunk := (mtu - ihl) &^ 7
	data := ip[ihl:total]
	origOff := int(flags&ipv4Offset) * 8
	if origOff+len(data) > 0xFFFF-ihl {
		// A fragment reaching beyond the largest datagram: no offset can say where its pieces go.
		return nil, fmt.Errorf("%w: offset %d + %d bytes of data", ErrBeyondMax, origOff, len(data))
	}
	lastMF := flags & ipv4FlagMF
	hdr := append([]byte(nil), ip[:ihl]...)
	var out [][]byte
	for done := 0; done < len(data); done += chunk {
		n := min(chunk, len(data)-done)
		f := make([]byte, 0, l3off+ihl+n)
		f = append(f, frame[:l3off]...)
		f = append(f, hdr...)
		f = append(f, data[done:done+n]...)
		h := f[l3off : l3off+ihl]
		binary.BigEndian.PutUint16(h[2:4], uint16(ihl+n))
		fl := uint16((origOff+done)/8) & ipv4Offset
		if done+n < len(data) {
			fl |= ipv4FlagMF
		} else {
			fl |= lastMF
		}
		binary.BigEndian.PutUint16(h[6:8], fl)
		binary.BigEndian.PutUint16(h[10:12], 0)
		binary.BigEndian.PutUint16(h[10:12], checksum(h))
		out = append(out, f)
		if done == 0 {
			uncopiedOptionsToNOP(hdr[20:])
		}
	}
	return out, nil
}

// uncopiedOptionsToNOP overwrites, in place, every option whose copied flag (bit 7 of its type) is
// clear with NOPs: what a fragment other than the first carries (RFC 791 3.1, "copied flag").
func uncopiedOptionsToNOP(opts []byte) {
	for i := 0; i < len(opts); {
		t := opts[i]
		if t == 0 { // end of option list
			return
		}
		if t == 1 { // NOP
			i++
			continue
		}
		n := len(opts) - i
		if i+1 < len(opts) && int(opts[i+1]) >= 2 && int(opts[i+1]) <= n {
			n = int(opts[i+1])
		}
		if t&0x80 == 0 {
			for j := i; j < i+n; j++ {
				opts[j] = 1
			}
		}
		i += n
	}
}

// checksum is the Internet checksum (RFC 1071) of b. (tools/pktcheck has its own: the test oracle
// shares no code with what it checks.)
func checksum(b []byte) uint16 {
	var s uint32
	for i := 0; i+1 < len(b); i += 2 {
		s += uint32(binary.BigEndian.Uint16(b[i:]))
	}
	if len(b)%2 == 1 {
		s += uint32(b[len(b)-1]) << 8
	}
	for s > 0xFFFF {
		s = s>>16 + s&0xFFFF
	}
	return ^uint16(s)
}
