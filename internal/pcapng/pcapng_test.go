// Tests of the pcapng writer: a small file compared byte for byte with one laid out by hand from the
// spec, refused packets, and a file with SRv6 frames read back by tshark field by field.
package pcapng

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// t0 is 1700000000.123456789 s: 1700000000123456789 ns = 0x17979cfe_3d85cd15, so the timestamp's
// high word is not zero.
var t0 = time.Unix(1700000000, 123456789)

// TestSmallFileBytes writes SHB + IDB + EPB (5 of 60 bytes captured, a comment) and compares the
// file with bytes written out here from the spec's block layouts.
func TestSmallFileBytes(t *testing.T) {
	var out bytes.Buffer
	w, err := NewWriter(&out, "seg6x")
	if err != nil {
		t.Fatal(err)
	}
	idx, err := w.AddInterface(Interface{Name: "rx ta0", Description: "frames as received on ta0", LinkType: 1, SnapLen: 262144})
	if err != nil || idx != 0 {
		t.Fatalf("AddInterface = %d, %v; want 0, nil", idx, err)
	}
	err = w.WritePacket(Packet{Interface: 0, Time: t0, Data: []byte{0xde, 0xad, 0xbe, 0xef, 0x01}, OrigLen: 60, Comment: "seg6x: DROP"})
	if err != nil {
		t.Fatal(err)
	}
	if out.Len() != 0 {
		t.Fatalf("%d bytes reached the writer before Flush; want 0 (buffered)", out.Len())
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}

	shb := cat(
		[]byte{0x0a, 0x0d, 0x0d, 0x0a},                         // block type SHB
		[]byte{44, 0, 0, 0},                                    // block total length: 24 fixed + 16 options + 4 trailer
		[]byte{0x4d, 0x3c, 0x2b, 0x1a},                         // byte-order magic 0x1A2B3C4D, little-endian
		[]byte{1, 0, 0, 0},                                     // major 1, minor 0
		[]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, // section length -1
		[]byte{4, 0, 5, 0}, []byte("seg6x"), []byte{0, 0, 0},   // shb_userappl, len 5, 3 padding
		[]byte{0, 0, 0, 0},  // opt_endofopt
		[]byte{44, 0, 0, 0}, // block total length again
	)
	idb := cat(
		[]byte{1, 0, 0, 0},                                 // block type IDB
		[]byte{76, 0, 0, 0},                                // 16 fixed + 12 + 32 + 8 + 4 options + 4 trailer
		[]byte{1, 0, 0, 0},                                 // link type 1 (Ethernet), reserved
		[]byte{0x00, 0x00, 0x04, 0},                        // snaplen 262144 = 0x40000
		[]byte{2, 0, 6, 0}, []byte("rx ta0"), []byte{0, 0}, // if_name, len 6, 2 padding
		[]byte{3, 0, 25, 0}, []byte("frames as received on ta0"), []byte{0, 0, 0}, // if_description, len 25
		[]byte{9, 0, 1, 0}, []byte{9, 0, 0, 0}, // if_tsresol, len 1: 9 (nanoseconds), 3 padding
		[]byte{0, 0, 0, 0},  // opt_endofopt
		[]byte{76, 0, 0, 0}, // block total length again
	)
	epb := cat(
		[]byte{6, 0, 0, 0},                                 // block type EPB
		[]byte{60, 0, 0, 0},                                // 28 fixed + 8 data + 16 comment + 4 end + 4 trailer
		[]byte{0, 0, 0, 0},                                 // interface 0
		[]byte{0xfe, 0x9c, 0x97, 0x17},                     // timestamp high 0x17979cfe
		[]byte{0x15, 0xcd, 0x85, 0x3d},                     // timestamp low 0x3d85cd15
		[]byte{5, 0, 0, 0},                                 // captured length 5
		[]byte{60, 0, 0, 0},                                // original length 60
		[]byte{0xde, 0xad, 0xbe, 0xef, 1}, []byte{0, 0, 0}, // data, 3 padding
		[]byte{1, 0, 11, 0}, []byte("seg6x: DROP"), []byte{0}, // opt_comment, len 11, 1 padding
		[]byte{0, 0, 0, 0},  // opt_endofopt
		[]byte{60, 0, 0, 0}, // block total length again
	)
	want := cat(shb, idb, epb)
	if len(want) != 44+76+60 {
		t.Fatalf("hand-built file is %d bytes; the test itself is wrong", len(want))
	}
	if got := out.Bytes(); !bytes.Equal(got, want) {
		t.Fatalf("file differs\n got % x\nwant % x", got, want)
	}
}

// TestNoOptionsWhenEmpty: without app and comment the SHB and EPB carry no option list at all (not even
// opt_endofopt), and interfaces without name or description still get if_tsresol.
func TestNoOptionsWhenEmpty(t *testing.T) {
	var out bytes.Buffer
	w, err := NewWriter(&out, "")
	must(t, err)
	_, err = w.AddInterface(Interface{LinkType: 1})
	must(t, err)
	must(t, w.WritePacket(Packet{Time: time.Unix(0, 1), Data: []byte{1, 2, 3, 4}}))
	must(t, w.Flush())
	want := cat(
		[]byte{0x0a, 0x0d, 0x0d, 0x0a, 28, 0, 0, 0, 0x4d, 0x3c, 0x2b, 0x1a, 1, 0, 0, 0},
		[]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 28, 0, 0, 0},
		[]byte{1, 0, 0, 0, 32, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0}, // IDB, snaplen 0
		[]byte{9, 0, 1, 0, 9, 0, 0, 0, 0, 0, 0, 0, 32, 0, 0, 0}, // if_tsresol 9, opt_endofopt
		[]byte{6, 0, 0, 0, 36, 0, 0, 0, 0, 0, 0, 0},             // EPB, interface 0
		[]byte{0, 0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0, 4, 0, 0, 0},  // 1 ns; OrigLen 0 means len(Data)
		[]byte{1, 2, 3, 4, 36, 0, 0, 0},
	)
	if !bytes.Equal(out.Bytes(), want) {
		t.Fatalf("file differs\n got % x\nwant % x", out.Bytes(), want)
	}
}

// TestRefusedPackets: each bad packet is refused with its reason and adds nothing to the file.
func TestRefusedPackets(t *testing.T) {
	var out bytes.Buffer
	w, err := NewWriter(&out, "seg6x")
	must(t, err)
	_, err = w.AddInterface(Interface{Name: "rx", LinkType: 1, SnapLen: 8})
	must(t, err)
	must(t, w.Flush())
	size := out.Len()
	for _, c := range []struct {
		p    Packet
		want string
	}{
		{Packet{Interface: 1, Time: t0, Data: []byte{1}}, "pcapng: packet on interface 1, but 1 interfaces were added"},
		{Packet{Interface: -1, Time: t0, Data: []byte{1}}, "pcapng: packet on interface -1, but 1 interfaces were added"},
		{Packet{Time: t0, Data: []byte{1, 2, 3}, OrigLen: 2}, "pcapng: 3 captured bytes, original length 2"},
		{Packet{Time: t0, Data: make([]byte, 9)}, "pcapng: 9 captured bytes exceed interface 0's snaplen 8"},
		{Packet{Time: time.Unix(-1, 0), Data: []byte{1}}, "pcapng: packet time " + time.Unix(-1, 0).String() + " is before 1970"},
		{Packet{Time: t0, Data: []byte{1}, Comment: strings.Repeat("x", 65536)}, "pcapng: packet comment: option value longer than 65535 bytes"},
	} {
		err := w.WritePacket(c.p)
		if err == nil || err.Error() != c.want {
			t.Errorf("WritePacket = %v; want %q", err, c.want)
		}
	}
	must(t, w.Flush())
	if out.Len() != size {
		t.Fatalf("refused packets wrote %d bytes", out.Len()-size)
	}
}

// TestWriteErrorSticks: once the underlying writer fails, every later call returns its error.
func TestWriteErrorSticks(t *testing.T) {
	broken := errors.New("disk full")
	w, err := NewWriter(failWriter{broken}, "seg6x")
	must(t, err) // buffered: the SHB has not reached the writer yet
	if err := w.Flush(); !errors.Is(err, broken) {
		t.Fatalf("Flush = %v; want %v", err, broken)
	}
	if _, err := w.AddInterface(Interface{Name: "rx"}); !errors.Is(err, broken) {
		t.Fatalf("AddInterface = %v; want %v", err, broken)
	}
	if err := w.WritePacket(Packet{}); !errors.Is(err, broken) {
		t.Fatalf("WritePacket = %v; want %v", err, broken)
	}
}

type failWriter struct{ err error }

func (f failWriter) Write([]byte) (int, error) { return 0, f.err }

// TestTsharkReadsFile writes two interfaces (the second added between packets) and four frames, then
// checks what tshark decodes from each: interface, comment, time to the nanosecond, lengths, the SRH's
// segments left and segment list, and the inner IPv4/UDP.
func TestTsharkReadsFile(t *testing.T) {
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Fatal("tshark is not installed: run scripts/deps.sh (as root) to install the test dependencies")
	}
	path := filepath.Join(t.TempDir(), "srv6.pcapng")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewWriter(f, "seg6x test")
	if err != nil {
		t.Fatal(err)
	}
	rx, err := w.AddInterface(Interface{Name: "rx ta0", Description: "frames as received on ta0", LinkType: LinkTypeEthernet, SnapLen: 262144})
	if err != nil {
		t.Fatal(err)
	}
	srv6In := srv6Frame(1, "fc00:0:2::1") // 127 bytes
	must(t, w.WritePacket(Packet{Interface: rx, Time: t0, Data: srv6In, OrigLen: len(srv6In),
		Comment: "seg6x: DROP_BOUNDARY_SID (access side: IPv6 packet addressed to a local SID)"}))
	tx, err := w.AddInterface(Interface{Name: "tx tb0", Description: "frames as sent on tb0", LinkType: LinkTypeEthernet, SnapLen: 262144})
	if err != nil {
		t.Fatal(err)
	}
	srv6Out := srv6Frame(0, "fc00:0:3::100")
	must(t, w.WritePacket(Packet{Interface: tx, Time: t0.Add(time.Millisecond + 1), Data: srv6Out,
		Comment: "seg6x: End → fc00:0:3::100"}))
	must(t, w.WritePacket(Packet{Interface: rx, Time: t0.Add(2*time.Millisecond + 2), Data: srv6In[:96], OrigLen: len(srv6In),
		Comment: "truncated: 96 of 127 bytes"}))
	plain := ipv4UDPFrame() // 47 bytes, no comment
	must(t, w.WritePacket(Packet{Interface: tx, Time: t0.Add(3 * time.Second), Data: plain}))
	must(t, w.Flush())
	must(t, f.Close())

	fields := tsharkFields(t,
		[]string{"frame.interface_name"},
		[]string{"frame.interface_description"},
		[]string{"frame.comment", "pkt_comment"},
		[]string{"frame.time_epoch"},
		[]string{"frame.len"},
		[]string{"frame.cap_len"},
		[]string{"ipv6.routing.segleft", "ipv6.routing.segments_left"},
		[]string{"ipv6.routing.srh.addr", "ipv6.routing.segment"},
		[]string{"ip.src"},
		[]string{"udp.dstport"},
	)
	args := []string{"-r", path, "-T", "fields", "-E", "separator=|", "-E", "occurrence=a", "-E", "aggregator=,"}
	for _, f := range fields {
		args = append(args, "-e", f)
	}
	cmd := exec.Command("tshark", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	got, err := cmd.Output()
	if err != nil {
		t.Fatalf("tshark %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	want := strings.Join([]string{
		"rx ta0|frames as received on ta0|seg6x: DROP_BOUNDARY_SID (access side: IPv6 packet addressed to a local SID)|1700000000.123456789|127|127|1|fc00:0:3::100,fc00:0:2::1|198.18.0.1|5678",
		"tx tb0|frames as sent on tb0|seg6x: End → fc00:0:3::100|1700000000.124456790|127|127|0|fc00:0:3::100,fc00:0:2::1|198.18.0.1|5678",
		"rx ta0|frames as received on ta0|truncated: 96 of 127 bytes|1700000000.125456791|127|96|1|fc00:0:3::100,fc00:0:2::1||",
		"tx tb0|frames as sent on tb0||1700000003.123456789|47|47|||198.18.0.2|5678",
	}, "\n") + "\n"
	if string(got) != want {
		t.Fatalf("tshark fields (%s):\n got:\n%s\nwant:\n%s", strings.Join(fields, " "), got, want)
	}
}

// tsharkFields picks, for each field, the first of its names that this tshark knows (names changed
// between Wireshark versions), and fails when it knows none.
func tsharkFields(t *testing.T, candidates ...[]string) []string {
	out, err := exec.Command("tshark", "-G", "fields").Output()
	if err != nil {
		t.Fatalf("tshark -G fields: %v", err)
	}
	known := map[string]bool{}
	for _, line := range strings.Split(string(out), "\n") {
		if cols := strings.Split(line, "\t"); len(cols) > 2 {
			known[cols[2]] = true
		}
	}
	var names []string
	for _, c := range candidates {
		i := 0
		for i < len(c) && !known[c[i]] {
			i++
		}
		if i == len(c) {
			t.Fatalf("tshark knows none of the fields %v", c)
		}
		names = append(names, c[i])
	}
	return names
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func cat(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}
