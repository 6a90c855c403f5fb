package pcapng

// first.go: the first packet of a capture file, for `seg6x explain FILE`: classic pcap (either byte
// order, micro- or nanosecond) or pcapng (its first Enhanced or Simple Packet Block).

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// FirstPacket returns the captured bytes of the first packet in file b.
func FirstPacket(b []byte) ([]byte, error) {
	if len(b) < 24 {
		return nil, errors.New("not a capture file: shorter than a pcap header")
	}
	var bo binary.ByteOrder
	switch binary.LittleEndian.Uint32(b) {
	case 0xa1b2c3d4, 0xa1b23c4d:
		bo = binary.LittleEndian
	case 0xd4c3b2a1, 0x4d3cb2a1:
		bo = binary.BigEndian
	case blockSHB:
		return firstPcapng(b)
	default:
		return nil, errors.New("not a pcap or pcapng file")
	}
	if len(b) < 24+16 {
		return nil, errors.New("pcap file without packets")
	}
	n := int(bo.Uint32(b[24+8:]))
	if len(b) < 40+n {
		return nil, fmt.Errorf("pcap: first packet of %d bytes beyond the file", n)
	}
	return b[40 : 40+n], nil
}

func firstPcapng(b []byte) ([]byte, error) {
	if len(b) < 12 {
		return nil, errors.New("pcapng: truncated section header")
	}
	var bo binary.ByteOrder = binary.LittleEndian
	if binary.LittleEndian.Uint32(b[8:]) != byteOrderMagic {
		bo = binary.BigEndian
		if bo.Uint32(b[8:]) != byteOrderMagic {
			return nil, errors.New("pcapng: bad byte-order magic")
		}
	}
	for off := 0; off+12 <= len(b); {
		typ, l := bo.Uint32(b[off:]), int(bo.Uint32(b[off+4:]))
		if l < 12 || l%4 != 0 || off+l > len(b) {
			return nil, fmt.Errorf("pcapng: bad block length %d at %d", l, off)
		}
		body := b[off+8 : off+l-4]
		switch typ {
		case blockEPB:
			if len(body) < 20 {
				return nil, errors.New("pcapng: truncated packet block")
			}
			n := int(bo.Uint32(body[12:]))
			if 20+n > len(body) {
				return nil, errors.New("pcapng: packet beyond its block")
			}
			return body[20 : 20+n], nil
		case 3: // Simple Packet Block: the original length, then the data (padded)
			if len(body) < 4 {
				return nil, errors.New("pcapng: truncated simple packet block")
			}
			n := min(int(bo.Uint32(body)), len(body)-4)
			return body[4 : 4+n], nil
		}
		off += l
	}
	return nil, errors.New("pcapng file without packets")
}
