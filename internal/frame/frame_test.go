package frame

// frame_test.go: frames built from specs carry valid checksums and the exact headers asked for;
// Describe prints each header, an SRv6 packet with its segment list and inner packet included.

import (
	"encoding/binary"
	"encoding/hex"
	"net"
	"reflect"
	"testing"
)

var (
	srcMAC = net.HardwareAddr{0x02, 0, 0, 0, 0, 0x01}
	dstMAC = net.HardwareAddr{0x02, 0, 0, 0, 0, 0x02}
)

func TestBuildChecksums(t *testing.T) {
	for _, spec := range []string{
		"vlan 100 ipv4 198.18.1.2>198.18.2.2 udp 1000>2000",
		"ipv4 198.18.1.2>198.18.2.2 tcp 1000>80 syn len 0",
		"ipv4 198.18.1.2>198.18.2.2 icmp len 3",
		"ipv6 2001:db8:1::2>2001:db8:2::2 udp 53>53 len 7",
		"ipv6 2001:db8:1::2>2001:db8:2::2 icmpv6",
	} {
		f, err := Build(spec, srcMAC, dstMAC)
		if err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		off := 14
		if binary.BigEndian.Uint16(f[12:]) == 0x8100 {
			off = 18
		}
		var l4 []byte
		var pseudo uint32
		if f[off]>>4 == 4 {
			if c := sum(f[off:off+20], 0); c != 0xFFFF {
				t.Errorf("%s: IPv4 header sum %#x", spec, c)
			}
			l4 = f[off+20:]
			if f[off+9] != 1 {
				pseudo = uint32(sum(f[off+12:off+20], 0)) + uint32(f[off+9]) + uint32(len(l4))
			}
		} else {
			l4 = f[off+40:]
			pseudo = uint32(sum(f[off+8:off+40], 0)) + uint32(f[off+6]) + uint32(len(l4))
		}
		if c := sum(l4, pseudo); c != 0xFFFF {
			t.Errorf("%s: layer 4 checksum does not verify (sum %#x)\n%s", spec, c, hex.EncodeToString(f))
		}
	}
}

func TestBuildExact(t *testing.T) {
	f, err := Build("vlan 100 ipv4 198.18.1.2>198.18.2.2 ttl 9 udp 1000>2000 len 2", srcMAC, dstMAC)
	if err != nil {
		t.Fatal(err)
	}
	want := "020000000002" + "020000000001" + "81000064" + "0800" +
		"4500001e0000400009" + "11" + "0000" + "c6120102c6120202" + "03e807d0000a0000" + "0000"
	// The checksums are checked above; compare the rest.
	got := hex.EncodeToString(f)
	got = got[:56] + "0000" + got[60:88] + "0000" + got[92:]
	if got != want {
		t.Errorf("frame\n got %s\nwant %s", got, want)
	}
	for _, bad := range []string{"", "ipv4 198.18.1.2", "ipv4 198.18.1.2>2001:db8::1", "vlan 5000 ipv4 198.18.1.2>198.18.2.2",
		"ipv6 2001:db8::1>2001:db8::2 icmp", "ipv4 198.18.1.2>198.18.2.2 udp 1>70000", "ipv4 198.18.1.2>198.18.2.2 bogus"} {
		if _, err := Build(bad, srcMAC, dstMAC); err == nil {
			t.Errorf("Build(%q): no error", bad)
		}
	}
}

func TestDescribeSRv6(t *testing.T) {
	inner, err := Build("ipv4 198.18.1.2>198.18.2.2 udp 1000>2000 len 0", srcMAC, dstMAC)
	if err != nil {
		t.Fatal(err)
	}
	ip4 := inner[14:]
	srhdr := []byte{4, 4, 4, 1, 1, 0, 0, 0}
	srhdr = append(srhdr, net.ParseIP("fc00:3::64").To16()...)
	srhdr = append(srhdr, net.ParseIP("fc00:2::1").To16()...)
	ip6 := []byte{0x60, 0, 0, 0x2a, 0, byte(len(srhdr) + len(ip4)), 43, 63}
	ip6 = append(ip6, net.ParseIP("fc00:1::1").To16()...)
	ip6 = append(ip6, net.ParseIP("fc00:2::1").To16()...)
	f := append(append(append([]byte{}, inner[:12]...), 0x86, 0xdd), append(ip6, append(srhdr, ip4...)...)...)
	got := Describe(f)
	want := []string{
		"eth 02:00:00:00:00:01 > 02:00:00:00:00:02",
		"ipv6 fc00:1::1 > fc00:2::1 hlim 63 plen 68 flow 0x0002a",
		"srh segments left 1 [fc00:3::64, fc00:2::1]",
		"ipv4 198.18.1.2 > 198.18.2.2 ttl 64 len 28 DF",
		"udp 1000 > 2000",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Describe:\n got %q\nwant %q", got, want)
	}
	if d := Describe(f[:20]); len(d) != 2 || d[1] != "ipv6, truncated" {
		t.Errorf("truncated: %q", d)
	}
}

func TestDescribeTooBig(t *testing.T) {
	f, err := Build("ipv4 198.18.1.1>198.18.1.2 icmp len 0", srcMAC, dstMAC)
	if err != nil {
		t.Fatal(err)
	}
	icmp := f[34:]
	icmp[0], icmp[1], icmp[6], icmp[7] = 3, 4, 0x04, 0xc4 // frag needed, MTU 1220
	if d := Describe(f); d[len(d)-1] != "icmp type 3 code 4 (too big: mtu 1220)" {
		t.Errorf("Describe: %q", d)
	}
}

func TestProtoNames(t *testing.T) {
	for name, n := range map[string]uint8{"tcp": 6, "udp": 17, "icmpv6": 58, "47": 47, "255": 255} {
		if got, ok := ProtoNumber(name); !ok || got != n {
			t.Errorf("ProtoNumber(%q) = %d, %v; want %d", name, got, ok, n)
		}
	}
	for _, bad := range []string{"", "tcpx", "256", "-1"} {
		if _, ok := ProtoNumber(bad); ok {
			t.Errorf("ProtoNumber(%q): accepted", bad)
		}
	}
	if ProtoName(43) != "srh" || ProtoName(6) != "tcp" || ProtoName(99) != "proto 99" {
		t.Errorf("ProtoName: %s %s %s", ProtoName(43), ProtoName(6), ProtoName(99))
	}
}
