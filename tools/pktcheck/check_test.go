package pktcheck_test

// check_test.go: the oracle accepts every expected output of the packet fixtures (built by scapy,
// independently of the data plane) and rejects each kind of damage the fuzz harness looks for.

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/seg6x/seg6x/tools/fixtures"
	"github.com/seg6x/seg6x/tools/pktcheck"
)

func TestFixtureOutputsAreWellFormed(t *testing.T) {
	fs, err := fixtures.Load()
	if err != nil {
		t.Fatal(err)
	}
	checked, answers := 0, 0
	for _, f := range fs {
		switch {
		case f.Reason == "ICMP_TOO_BIG":
			if err := pktcheck.Answered(f.Input, f.Output); err != nil {
				t.Errorf("%s: %v", f.Name, err)
			}
			answers++
		case f.Action == "XDP_REDIRECT" || f.Action == "XDP_TX":
			if err := pktcheck.Leaving(f.Input, f.Output); err != nil {
				t.Errorf("%s: %v", f.Name, err)
			}
			checked++
		case f.Action == "XDP_PASS":
			if err := pktcheck.Passed(f.Input, f.Output); err != nil {
				t.Errorf("%s: %v", f.Name, err)
			}
		}
	}
	if checked < 20 || answers < 2 {
		t.Fatalf("only %d fixtures leave seg6x, %d are answered", checked, answers)
	}
}

// fixture returns a copy of the named fixture's input and output.
func fixture(t *testing.T, name string) ([]byte, []byte) {
	t.Helper()
	f := fixtures.Get(t, name)
	return f.Input, f.Output
}

func TestDamageIsFound(t *testing.T) {
	const l3 = 14 // the fixtures below leave untagged; encap1 carries an SRH of one segment (24 bytes)
	cases := []struct {
		fixture, want string
		damage        func(out []byte) []byte
	}{
		{"encap1_v4_udp", "payload length", func(o []byte) []byte { o[l3+5]++; return o }},
		{"encap1_v4_udp", "payload length", func(o []byte) []byte { return append(o, 0) }},
		{"encap1_v4_udp", "version", func(o []byte) []byte { o[l3] = 0x40; return o }},
		{"encap1_v4_udp", "hop limit 0", func(o []byte) []byte { o[l3+7] = 0; return o }},
		{"encap1_v4_udp", "inner IPv4 header checksum", func(o []byte) []byte { o[l3+64+10] ^= 1; return o }},
		{"encap1_v4_udp", "inner IPv4 TTL 0", func(o []byte) []byte {
			ip := o[l3+64 : l3+64+20]
			ip[8], ip[10], ip[11] = 0, 0, 0
			binary.BigEndian.PutUint16(ip[10:], pktcheck.Checksum(ip))
			return o
		}},
		{"encap1_v4_udp", "inner IPv4 IHL", func(o []byte) []byte { o[l3+64] = 0x44; return o }},
		{"encap1_v4_udp", "EtherType", func(o []byte) []byte { o[12] = 0x08; o[13] = 0x06; return o }},
		{"encap2_v4_tcp_tos", "segments left", func(o []byte) []byte { o[l3+40+3] = 5; return o }},
		{"encap2_v4_tcp_tos", "is not segment", func(o []byte) []byte { o[l3+39] ^= 1; return o }},
		{"encap2_v4_tcp_tos", "does not fit", func(o []byte) []byte { o[l3+40+4] = 9; return o }},
		{"end", "transit changed byte", func(o []byte) []byte { o[len(o)-1] ^= 1; return o }},
		{"end_psp", "next header", func(o []byte) []byte { o[l3+6] = 41; return o }},
		{"end_psp", "what followed it changed", func(o []byte) []byte { o[len(o)-1] ^= 1; return o }},
		{"end_psp", "payload length", func(o []byte) []byte { o[l3+5] -= 8; return o }},
		{"end_dx4", "IPv4 total length", func(o []byte) []byte {
			binary.BigEndian.PutUint16(o[l3+2:], binary.BigEndian.Uint16(o[l3+2:])+1)
			return o
		}},
		{"encap1_v4_udp", "more than", func(o []byte) []byte { return append(o, make([]byte, pktcheck.MaxGrowth)...) }},
	}
	for _, c := range cases {
		in, out := fixture(t, c.fixture)
		if err := pktcheck.Leaving(in, out); err != nil {
			t.Fatalf("%s undamaged: %v", c.fixture, err)
		}
		err := pktcheck.Leaving(in, c.damage(out))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s damaged (%s): got %v", c.fixture, c.want, err)
		}
	}
}

func TestDamagedAnswerIsFound(t *testing.T) {
	const l3 = 18 // the answers leave with the VLAN tag of the port
	cases := []struct {
		fixture, want string
		damage        func(out []byte) []byte
	}{
		{"too_big_v4_df", "ICMP checksum", func(o []byte) []byte { o[l3+24] ^= 1; return o }},
		{"too_big_v4_df", "quotes", func(o []byte) []byte { o[l3+28+100] ^= 1; return o }},
		{"too_big_v4_df", "total length", func(o []byte) []byte { return o[:len(o)-4] }},
		{"too_big_v4_df", "MTU", func(o []byte) []byte { binary.BigEndian.PutUint16(o[l3+26:], 1480); return o }},
		{"too_big_v4_df", "type 3 code 3", func(o []byte) []byte { o[l3+21] = 3; return o }},
		{"too_big_v4_df", "VLAN", func(o []byte) []byte { o[15] ^= 1; return o }},
		{"too_big_v4_df", "MAC", func(o []byte) []byte { o[0] ^= 2; return o }},
		{"too_big_v4_df", "header checksum", func(o []byte) []byte { o[l3+16] ^= 1; return o }},
		{"too_big_v6", "ICMPv6 checksum", func(o []byte) []byte { o[l3+8] ^= 1; return o }},
		{"too_big_v6", "from", func(o []byte) []byte { o[l3+24] ^= 1; return o }},
		{"too_big_v6", "payload length", func(o []byte) []byte { return append(o, 0, 0) }},
	}
	for _, c := range cases {
		in, out := fixture(t, c.fixture)
		if err := pktcheck.Answered(in, out); err != nil {
			t.Fatalf("%s undamaged: %v", c.fixture, err)
		}
		err := pktcheck.Answered(in, c.damage(out))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s damaged (%s): got %v", c.fixture, c.want, err)
		}
	}
}
