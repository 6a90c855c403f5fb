package packet

// multibuf_test.go: jumbo frames larger than a page, which reach XDP as multi-buffer frames (the
// programs are xdp.frags; BPF_PROG_TEST_RUN puts what exceeds its first buffer in fragments, as a
// multi-buffer driver does). Fixtures are grown to jumbo size (their innermost payload lengthened, every
// length and checksum on the way made right again, in the input and the expected output alike) and must
// come out byte for byte, or reach the kernel untouched under their own reason.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"testing"

	"github.com/seg6x/seg6x/tools/fixtures"
	"golang.org/x/sys/unix"
)

// jumboLinks raises the MTU of the rig's fabric and tenant links to 9000 for the test's duration, and
// updates which of them take multi-buffer frames (rx_frags) as the daemon does when links change.
func jumboLinks(t *testing.T) {
	t.Helper()
	restore, err := fixtures.JumboLinks()
	t.Cleanup(func() {
		if err := restore(); err != nil {
			t.Error(err)
		}
		refreshRxFrags(t)
		bumpNhGen(t)
	})
	if err != nil {
		t.Fatal(err)
	}
	refreshRxFrags(t)
	bumpNhGen(t)
}

// grow returns frame with n more payload bytes at its end (a pattern, not zeros), the lengths of every
// IP header on the way in and the innermost IPv4 header checksum and UDP/TCP/ICMP checksum made right
// again.
// The innermost transport header must end the frame's headers and its payload the frame (no padding).
func grow(t *testing.T, frame []byte, n int) []byte {
	t.Helper()
	b := append([]byte(nil), frame...)
	for i := 0; i < n; i++ {
		b = append(b, byte(i*7+3))
	}
	off := 12
	for et := binary.BigEndian.Uint16(b[off:]); et == 0x8100 || et == 0x88a8; et = binary.BigEndian.Uint16(b[off:]) {
		off += 4
	}
	proto := map[uint16]uint8{0x0800: 4, 0x86dd: 41}[binary.BigEndian.Uint16(b[off:])]
	off += 2
	var src, dst []byte // the innermost IP addresses (the transport checksum's pseudo header)
	for {
		switch proto {
		case 4:
			ihl := int(b[off]&0xF) * 4
			binary.BigEndian.PutUint16(b[off+2:], binary.BigEndian.Uint16(b[off+2:])+uint16(n))
			binary.BigEndian.PutUint16(b[off+10:], 0)
			binary.BigEndian.PutUint16(b[off+10:], csum16(b[off:off+ihl]))
			src, dst, proto = b[off+12:off+16], b[off+16:off+20], b[off+9]
			off += ihl
		case 41:
			binary.BigEndian.PutUint16(b[off+4:], binary.BigEndian.Uint16(b[off+4:])+uint16(n))
			src, dst, proto = b[off+8:off+24], b[off+24:off+40], b[off+6]
			off += 40
			for proto == 0 || proto == 43 || proto == 60 {
				proto, off = b[off], off+(int(b[off+1])+1)*8
			}
		case 1: // ICMP: its checksum covers the message only
			binary.BigEndian.PutUint16(b[off+2:], 0)
			binary.BigEndian.PutUint16(b[off+2:], csum16(b[off:]))
			return b
		case 17, 6, 58:
			l4 := b[off:]
			ck := 2
			if proto == 17 {
				binary.BigEndian.PutUint16(l4[4:], uint16(len(l4)))
				if len(src) == 4 && binary.BigEndian.Uint16(l4[6:]) == 0 {
					return b // IPv4 UDP without a checksum
				}
				ck = 6
			} else if proto == 6 {
				ck = 16
			}
			binary.BigEndian.PutUint16(l4[ck:], 0)
			pseudo := append(append(append([]byte(nil), src...), dst...), 0, proto, byte(len(l4)>>8), byte(len(l4)))
			sum := csum16(pseudo, l4)
			if sum == 0 && proto == 17 {
				sum = 0xFFFF
			}
			binary.BigEndian.PutUint16(l4[ck:], sum)
			return b
		default:
			t.Fatalf("grow: protocol %d at offset %d: not a frame this helper grows", proto, off)
		}
	}
}

// runJumbo runs a grown fixture (as a multi-buffer frame whose first buffer holds linear bytes, or as
// the kernel splits it when 0) and checks the action, the output bytes and the reason counter.
func runJumbo(t *testing.T, f *fixtures.Fixture, action, reason string, linear int) {
	t.Helper()
	out := f.Output
	if action == "XDP_DROP" {
		out = nil
	}
	runSplit(t, vxCase{fmt.Sprintf("%s (%d bytes)", f.Name, len(f.Input)), f.Dev, f.Input, out, action, reason}, linear)
}

// fixture is the named fixture, its input and output grown by n bytes (output: the input, for a pass).
func fixture(t *testing.T, name string, n int) *fixtures.Fixture {
	t.Helper()
	fs, err := fixtures.Load()
	if err != nil {
		t.Fatal(err)
	}
	for i := range fs {
		if f := &fs[i]; f.Name == name {
			f.Input = grow(t, f.Input, n)
			if f.Action == "XDP_PASS" {
				f.Output = f.Input
			} else if f.Action == "XDP_REDIRECT" {
				f.Output = grow(t, f.Output, n)
			}
			return f
		}
	}
	t.Fatalf("no fixture %s", name)
	return nil
}

// Every behavior that forwards carries a 9000-byte frame whole: the headend (IPv4 and IPv6 tenants,
// H.Encaps.Red), End, End.X, End.T, uN, uA, PSP (the SRH popped in front of the fragments), USD,
// End.B6.Encaps, and decapsulation (DX4, DX6, DT4 and DT6 into a tenant VLAN, DT46).
func TestJumboFramesForwarded(t *testing.T) {
	jumboLinks(t)
	for _, c := range []struct {
		name string
		n    int
	}{
		{"encap1_v4_udp", 8800}, {"encap2_v4_tcp_tos", 8800}, {"encap1_v6", 8800}, {"encap_red2", 8800},
		{"end", 8800}, {"end_x", 8800}, {"end_psp", 8800}, {"usid_un_shift", 8800}, {"b6_encaps", 8700},
		{"end_dt4_vlan", 8800}, {"end_dt6_vlan", 8800}, {"end_then_dx4_chain", 8800}, {"end_t", 8800},
		{"end_dt46_v4", 8800}, {"end_dx4", 8800}, {"end_dx6", 8800}, {"usid_ua", 8800}, {"end_usd_sl0", 8800},
	} {
		f := fixture(t, c.name, c.n)
		if len(f.Input) <= 4096 {
			t.Fatalf("%s: %d bytes is not a multi-buffer frame", c.name, len(f.Input))
		}
		runJumbo(t, f, f.Action, f.Reason, 0)
	}
}

// A frame larger than its tunnel gets the ICMP error built from its first bytes (read across the
// buffers, the rest trimmed away): the fixture's answer with the grown packet's quote.
func TestJumboFrameTooBigAnswered(t *testing.T) {
	f := fixture(t, "too_big_v4_df", 6000) // the tunnel's MTU stays 1436 (tf0)
	fs, _ := fixtures.Load()
	for _, g := range fs {
		if g.Name == "too_big_v4_df" {
			f.Output = requote(t, g.Output, f.Input)
		}
	}
	runJumbo(t, f, "XDP_REDIRECT", "ICMP_TOO_BIG", 0)
}

// requote is the ICMP (IPv4) error answer with its quoted packet replaced by the same number of bytes
// of frame's IPv4 packet, and its checksum made right again.
func requote(t *testing.T, answer, frame []byte) []byte {
	t.Helper()
	b := append([]byte(nil), answer...)
	off, in := 14, 14
	for binary.BigEndian.Uint16(b[off-2:]) == 0x8100 {
		off += 4
	}
	for binary.BigEndian.Uint16(frame[in-2:]) == 0x8100 {
		in += 4
	}
	if b[off+9] != 1 {
		t.Fatal("requote: not an ICMP answer")
	}
	icmp := b[off+int(b[off]&0xF)*4:]
	copy(icmp[8:], frame[in:])
	binary.BigEndian.PutUint16(icmp[2:], 0)
	binary.BigEndian.PutUint16(icmp[2:], csum16(icmp))
	return b
}

// What the fast path does not take whole reaches the kernel untouched, counted: an outer header too
// long for the headroom of a frame that cannot be moved through the scratch buffer (16 SIDs; the
// 3.4 kB frame of drop_no_room fits a page and keeps its own reason).
func TestJumboFramesPassedWhole(t *testing.T) {
	jumboLinks(t)
	f := fixture(t, "encap16", 7000)
	f.Action, f.Output = "XDP_PASS", f.Input
	runJumbo(t, f, "XDP_PASS", "PASS_MULTIBUF", 0)
}

// A multi-buffer frame whose first buffer is too short to hold every header cannot be checked in place:
// dropped, counted, whatever port it came in on (the kernel would take it past the boundary's checks).
func TestJumboHeadersBeyondFirstBuffer(t *testing.T) {
	jumboLinks(t)
	f := fixture(t, "encap1_v4_udp", 8800)
	if _, err := rig.RunSplit(nil, f, 4000); errors.Is(err, unix.EINVAL) {
		t.Skip("this kernel's BPF_PROG_TEST_RUN takes no first-buffer size (data_end below the data)")
	}
	runJumbo(t, f, "XDP_REDIRECT", "", 1024) // 1 KB holds the headers: forwarded
	f = fixture(t, "encap1_v4_udp", 8800)
	runJumbo(t, f, "XDP_DROP", "DROP_MULTIBUF_HEADERS", 256)
	f = fixture(t, "end", 8800)
	runJumbo(t, f, "XDP_DROP", "DROP_MULTIBUF_HEADERS", 128)
}
