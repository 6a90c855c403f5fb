package slowpath

// fragment6_test.go: IPv6 source fragmentation of a VXLAN encapsulation: every fragment fits the MTU,
// carries the Ethernet header, the IPv6 header with the Fragment header's length, one identification,
// offsets in 8-byte units and the M flag on all but the last; put back together they are the packet.

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// ipv6Frame is an Ethernet frame with an IPv6 packet of n payload bytes (next header UDP).
func ipv6Frame(n int) []byte {
	f := make([]byte, 14+40+n)
	copy(f, []byte{2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x86, 0xdd})
	ip := f[14:]
	ip[0] = 0x60
	binary.BigEndian.PutUint16(ip[4:], uint16(n))
	ip[6], ip[7] = 17, 64
	ip[8], ip[24] = 0xfc, 0xfc
	for i := range n {
		ip[40+i] = byte(i * 7)
	}
	return f
}

func TestFragmentIPv6(t *testing.T) {
	for _, c := range []struct{ payload, mtu, frags int }{
		{1518 + 16, 1500, 2}, // a 1518-byte frame in VXLAN over a 1500-byte underlay
		{1452, 1500, 1},      // fits: one fragment (the caller only asks for what does not fit)
		{3000, 1280, 3},
	} {
		frame := ipv6Frame(c.payload)
		frags, err := FragmentIPv6(frame, 14, c.mtu, 0x01020304)
		if err != nil {
			t.Fatal(err)
		}
		if len(frags) != c.frags {
			t.Fatalf("%d bytes at MTU %d: %d fragments, want %d", c.payload, c.mtu, len(frags), c.frags)
		}
		var data []byte
		for i, f := range frags {
			ip := f[14:]
			if !bytes.Equal(f[:14], frame[:14]) || !bytes.Equal(ip[:4], frame[14:18]) || !bytes.Equal(ip[7:40], frame[21:54]) {
				t.Fatalf("fragment %d: headers not the packet's", i)
			}
			if len(ip) > c.mtu || ip[6] != 44 || int(binary.BigEndian.Uint16(ip[4:])) != len(ip)-40 {
				t.Fatalf("fragment %d: %d bytes, next header %d, payload length %d", i, len(ip), ip[6], binary.BigEndian.Uint16(ip[4:]))
			}
			fh := ip[40:48]
			off, more := int(binary.BigEndian.Uint16(fh[2:])&^7), fh[3]&1 == 1
			if fh[0] != 17 || fh[1] != 0 || binary.BigEndian.Uint32(fh[4:]) != 0x01020304 || off != len(data) || more != (i < len(frags)-1) {
				t.Fatalf("fragment %d: header % x, data so far %d", i, fh, len(data))
			}
			if more && (len(ip)-48)%8 != 0 {
				t.Fatalf("fragment %d: %d data bytes, not a multiple of 8", i, len(ip)-48)
			}
			data = append(data, ip[48:]...)
		}
		if !bytes.Equal(data, frame[54:]) {
			t.Fatal("the fragments' data is not the packet's payload")
		}
	}
	if _, err := FragmentIPv6(ipv6Frame(2000), 14, 1200, 1); err == nil {
		t.Error("MTU below 1280 accepted")
	}
	hbh := ipv6Frame(2000)
	hbh[14+6] = 0
	if _, err := FragmentIPv6(hbh, 14, 1500, 1); err == nil {
		t.Error("a packet with an extension header accepted")
	}
	short := ipv6Frame(2000)[:1000]
	if _, err := FragmentIPv6(short, 14, 1500, 1); err == nil {
		t.Error("a packet longer than its frame accepted")
	}
}
