package interoptest

// wire_test.go: the decoder of wire.go on an UPDATE seg6x sent (captured through ExaBGP's packets API)
// and on the Prefix-SID values the malformed cases are built from. Needs no root.

import (
	"encoding/hex"
	"net/netip"
	"slices"
	"testing"
)

// A VPNv4 UPDATE from seg6x with transposition on: 198.18.1.0/24, RD 198.18.255.1:100, RT
// 65000:100, next hop RD 0 + fc00:ee:2::1 (24 bytes), label 16 (function 0x0001 in its top 16 bits),
// SID fc00:11:: with End.DT46 (0x14) and structure 32/16/16/0, transposition 16 bits at 48.
const capturedUpdate = "000000704001010040020040050400000064800E2C000180180000000000000000FC0000EE000200000000000000" +
	"00000100700001010001C612FF010064C61201C010080002FDE800000064C028250500220001001E00FC000011000000" +
	"00000000000000000000001400010006201010001030"

func TestDecodeCapturedUpdate(t *testing.T) {
	b, _ := hex.DecodeString(capturedUpdate)
	u, err := decodeUpdate(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(u.Reach) != 1 || len(u.Unreach) != 0 || u.NextHopLen[afiIPv4] != 24 {
		t.Fatalf("decoded %+v", u)
	}
	r := u.Reach[0]
	if r.AFI != afiIPv4 || r.RD != "198.18.255.1:100" || r.Prefix != netip.MustParsePrefix("198.18.1.0/24") || r.Label != 16 ||
		!slices.Equal(r.RTs, []string{"65000:100"}) || r.SRv6 == nil || r.SRv6.Behavior != 0x14 ||
		r.SRv6.SID != netip.MustParseAddr("fc00:11::") || !slices.Equal(r.SRv6.Structure, []byte{32, 16, 16, 0, 16, 48}) {
		t.Fatalf("route %+v (SRv6 %+v)", r, r.SRv6)
	}
	if sid, err := r.FullSID(); err != nil || sid != netip.MustParseAddr("fc00:11:0:1::") {
		t.Fatalf("full SID %v %v", sid, err)
	}
}

func TestPrefixSIDBuilders(t *testing.T) {
	good := l3Service(sidInfo(netip.MustParseAddr("fc00:22::"), 0x13, sidStructure(40, 24, 12, 0, 12, 64)))
	s, err := decodePrefixSID(good)
	if err != nil || s == nil || s.SID != netip.MustParseAddr("fc00:22::") || s.Behavior != 0x13 ||
		!slices.Equal(s.Structure, []byte{40, 24, 12, 0, 12, 64}) {
		t.Fatalf("decoded %+v %v", s, err)
	}
	r := vpnRoute{Label: 0xa5b00, SRv6: s}
	if sid, err := r.FullSID(); err != nil || sid != netip.MustParseAddr("fc00:22:0:0:a5b0::") {
		t.Fatalf("full SID %v %v", sid, err)
	}
	if _, err := decodePrefixSID(withLength(good, len(good))); err == nil {
		t.Fatal("a TLV length beyond the attribute was decoded")
	}
}
