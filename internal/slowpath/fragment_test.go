package slowpath

// fragment_test.go: FragmentIPv4 against RFC 791's rules, checked field by field and by reassembly
// (the packet-level bytes are also checked against scapy's fragments in test/packet).

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
)

// ipv4Frame builds Ethernet (+ one VLAN tag) + an IPv4 header (with opts) + n bytes of data.
func ipv4Frame(opts []byte, n int, flags uint16) ([]byte, int) {
	l2 := []byte{2, 0, 0, 0, 0x99, 0x99, 2, 0, 0, 0, 0xa, 2, 0x81, 0, 0, 10, 8, 0}
	ihl := 20 + len(opts)
	ip := make([]byte, ihl+n)
	ip[0] = 0x40 | byte(ihl/4)
	binary.BigEndian.PutUint16(ip[2:], uint16(ihl+n))
	binary.BigEndian.PutUint16(ip[4:], 0x1234)
	binary.BigEndian.PutUint16(ip[6:], flags)
	ip[8], ip[9] = 64, 17
	copy(ip[12:], []byte{198, 18, 1, 2, 198, 18, 2, 2})
	copy(ip[20:], opts)
	for i := ihl; i < len(ip); i++ {
		ip[i] = byte(i * 7)
	}
	binary.BigEndian.PutUint16(ip[10:], checksum(ip[:ihl]))
	return append(l2, ip...), len(l2)
}

func TestFragmentIPv4(t *testing.T) {
	frame, l3 := ipv4Frame(nil, 1480, 0)
	frags, err := FragmentIPv4(append(frame, 0, 0, 0, 0), l3, 1436) // trailing padding is dropped
	if err != nil {
		t.Fatal(err)
	}
	if len(frags) != 2 {
		t.Fatalf("%d fragments, want 2", len(frags))
	}
	var data []byte
	for i, f := range frags {
		if !bytes.Equal(f[:l3], frame[:l3]) {
			t.Errorf("fragment %d: L2 header % x, want % x", i, f[:l3], frame[:l3])
		}
		ip := f[l3:]
		tot := int(binary.BigEndian.Uint16(ip[2:]))
		fl := binary.BigEndian.Uint16(ip[6:])
		if tot != len(ip) || tot > 1436 {
			t.Errorf("fragment %d: total length %d in %d bytes (MTU 1436)", i, tot, len(ip))
		}
		if checksum(ip[:20]) != 0 {
			t.Errorf("fragment %d: header checksum wrong", i)
		}
		if int(fl&ipv4Offset)*8 != len(data) {
			t.Errorf("fragment %d: offset %d, want %d", i, int(fl&ipv4Offset)*8, len(data))
		}
		if wantMF := i < len(frags)-1; (fl&ipv4FlagMF != 0) != wantMF {
			t.Errorf("fragment %d: MF %v, want %v", i, fl&ipv4FlagMF != 0, wantMF)
		}
		if i < len(frags)-1 && (tot-20)%8 != 0 {
			t.Errorf("fragment %d: %d data bytes, not a multiple of 8", i, tot-20)
		}
		if !bytes.Equal(ip[4:6], frame[l3+4:l3+6]) || !bytes.Equal(ip[8:10], frame[l3+8:l3+10]) {
			t.Errorf("fragment %d: identification, TTL or protocol changed", i)
		}
		data = append(data, ip[20:]...)
	}
	if !bytes.Equal(data, frame[l3+20:]) {
		t.Error("the fragments' data is not the packet's")
	}
	if got := len(frags[0]) - l3; got != 20+1416 {
		t.Errorf("first fragment %d bytes of IP, want 1436 (1416 of data: 1436-20 rounded down to 8)", got)
	}
}

func TestFragmentIPv4Refragments(t *testing.T) {
	// A first fragment (MF set) of a larger packet, fragmented again: the last piece keeps MF.
	frame, l3 := ipv4Frame(nil, 1000, ipv4FlagMF|100)
	frags, err := FragmentIPv4(frame, l3, 500)
	if err != nil {
		t.Fatal(err)
	}
	if len(frags) != 3 {
		t.Fatalf("%d fragments, want 3", len(frags))
	}
	want := []uint16{ipv4FlagMF | 100, ipv4FlagMF | (100 + 480/8), ipv4FlagMF | (100 + 960/8)}
	for i, f := range frags {
		if fl := binary.BigEndian.Uint16(f[l3+6:]); fl != want[i] {
			t.Errorf("fragment %d: flags/offset %#04x, want %#04x", i, fl, want[i])
		}
	}
}

func TestFragmentIPv4Options(t *testing.T) {
	// Record route (7, not copied) and a copied option (0x94, router alert): later fragments keep the
	// header length, the copied option, and NOPs where record route was.
	opts := []byte{7, 7, 4, 0, 0, 0, 0, 0x94, 4, 0, 0, 0}
	frame, l3 := ipv4Frame(opts, 200, 0)
	frags, err := FragmentIPv4(frame, l3, 120)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(frags[0][l3+20:l3+32], opts) {
		t.Errorf("first fragment options % x, want % x", frags[0][l3+20:l3+32], opts)
	}
	later := []byte{1, 1, 1, 1, 1, 1, 1, 0x94, 4, 0, 0, 0}
	for i, f := range frags[1:] {
		if !bytes.Equal(f[l3+20:l3+32], later) {
			t.Errorf("fragment %d options % x, want % x", i+1, f[l3+20:l3+32], later)
		}
		if checksum(f[l3:l3+32]) != 0 {
			t.Errorf("fragment %d: header checksum wrong", i+1)
		}
	}
}

func TestFragmentIPv4Refuses(t *testing.T) {
	frame, l3 := ipv4Frame(nil, 1480, ipv4FlagDF)
	if _, err := FragmentIPv4(frame, l3, 1400); !errors.Is(err, ErrDontFragment) {
		t.Errorf("DF packet: %v, want ErrDontFragment", err)
	}
	frame, l3 = ipv4Frame(nil, 1480, 0)
	if _, err := FragmentIPv4(frame, l3, 60); err == nil {
		t.Error("MTU 60: no error")
	}
	if _, err := FragmentIPv4(frame[:l3+30], l3, 1400); err == nil {
		t.Error("truncated packet: no error")
	}
	if _, err := FragmentIPv4(frame, l3+2, 1400); err == nil {
		t.Error("not an IPv4 header at l3off: no error")
	}
	// A fragment at offset 65528 with 1000 bytes of data reaches beyond 65535.
	frame, l3 = ipv4Frame(nil, 1000, 0x1FFF)
	if _, err := FragmentIPv4(frame, l3, 500); !errors.Is(err, ErrBeyondMax) {
		t.Errorf("fragment beyond the maximum: %v, want ErrBeyondMax", err)
	}
	small, l3 := ipv4Frame(nil, 100, 0)
	frags, err := FragmentIPv4(small, l3, 1400)
	if err != nil || len(frags) != 1 || !bytes.Equal(frags[0], small) {
		t.Errorf("a packet that fits: %d fragments, %v; want itself", len(frags), err)
	}
}
