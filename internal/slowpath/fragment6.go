package slowpath

// fragment6.go: IPv6 fragmentation at the source (RFC 8200 4.5) of a whole frame: the outer packet of
// a VXLAN encapsulation larger than the underlay. The kernel never does
// this for its VXLAN (docs/design/vxlan-kernel.md 2.1); the operators' L2VPN needs 1518-byte frames
// carried over a 1500-byte IPv6 network, so seg6x does.

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
)

const (
	ipv6HeaderLen = 40
	fragHeaderLen = 8
	protoFragment = 44
	minIPv6MTU    = 1280 // RFC 8200 5: every IPv6 link carries 1280-byte packets
)

// FragmentIPv6 splits the IPv6 packet at l3off of frame (the bytes before it are repeated in front
// of every fragment) into fragments of at most mtu bytes of IP each. The packet must have no
// extension headers (its whole payload is the fragmentable part: what seg6x builds), and fit its
// frame. Every fragment carries a Fragment header with the same identification, its offset and the
// M flag; payload lengths are rewritten; the data is cut in multiples of 8 bytes.
func FragmentIPv6(frame []byte, l3off, mtu int, id uint32) ([][]byte, error) {
	if l3off < 0 || len(frame) < l3off+ipv6HeaderLen || frame[l3off]>>4 != 6 {
		return nil, fmt.Errorf("frame of %d bytes has no IPv6 header at %d", len(frame), l3off)
	}
	if mtu < minIPv6MTU {
		return nil, fmt.Errorf("MTU %d is below IPv6's 1280", mtu)
	}
	ip := frame[l3off:]
	plen := int(binary.BigEndian.Uint16(ip[4:]))
	if plen == 0 || len(ip) < ipv6HeaderLen+plen {
		return nil, fmt.Errorf("IPv6 payload length %d does not fit the %d bytes of the frame", plen, len(ip))
	}
	next := ip[6]
	switch next {
	case 0, 43, 44, 50, 51, 60, 135, 139, 140:
		return nil, fmt.Errorf("packet with an extension header (%d): not one seg6x builds", next)
	}
	data := ip[ipv6HeaderLen : ipv6HeaderLen+plen]
	chunk := (mtu - ipv6HeaderLen - fragHeaderLen) &^ 7
	var out [][]byte
	for off, n := 0, 0; off < len(data); off += n {
		n = min(chunk, len(data)-off)
		if rest := len(data) - off; rest <= mtu-ipv6HeaderLen-fragHeaderLen {
			n = rest // the last fragment need not be a multiple of 8 bytes
		}
		f := make([]byte, l3off+ipv6HeaderLen+fragHeaderLen+n)
		copy(f, frame[:l3off+ipv6HeaderLen])
		h := f[l3off:]
		h[6] = protoFragment
		binary.BigEndian.PutUint16(h[4:], uint16(fragHeaderLen+n))
		fh := h[ipv6HeaderLen:]
		fh[0] = next
		more := uint16(0)
		if off+n < len(data) {
			more = 1
		}
		binary.BigEndian.PutUint16(fh[2:], uint16(off)|more)
		binary.BigEndian.PutUint32(fh[4:], id)
		copy(fh[fragHeaderLen:], data[off:off+n])
		out = append(out, f)
	}
	return out, nil
}

// fragmentID is an unpredictable identification (RFC 7739).
func fragmentID() uint32 {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return binary.NativeEndian.Uint32(b[:])
}
