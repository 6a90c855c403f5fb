package testsupport_test

// testsupport_test.go: the packet builders write what the output oracle (internal/pktcheck) accepts,
// and FakeEnv is a state.Env.

import (
	"bytes"
	"encoding/binary"
	"net/netip"
	"testing"

	"github.com/seg6x/seg6x/internal/pktcheck"
	"github.com/seg6x/seg6x/internal/state"
	"github.com/seg6x/seg6x/internal/testsupport"
)

var _ state.Env = testsupport.FakeEnv{}

func TestBuildersMakeWellFormedPackets(t *testing.T) {
	a := netip.MustParseAddr
	src4, dst4, src6, dst6 := a("198.18.0.2"), a("198.19.1.5"), a("fc00:a0::2"), a("fc00:e::1")
	udp := testsupport.UDP(1000, 2000, []byte("payload"))
	binary.BigEndian.PutUint16(udp[6:], testsupport.L4Checksum(src4, dst4, 17, udp))
	ip4 := testsupport.IPv4{Src: src4, Dst: dst4, TTL: 64, Proto: 17, ID: 7}.Packet(udp)
	if err := pktcheck.IPv4(ip4, false); err != nil {
		t.Errorf("IPv4: %v", err)
	}
	pseudo := append(append(src4.AsSlice(), dst4.AsSlice()...), 0, 17, 0, byte(len(udp)))
	if pktcheck.Checksum(append(pseudo, udp...)) != 0 {
		t.Errorf("UDP checksum does not verify: %x", udp)
	}
	srh := testsupport.SRH(4, []netip.Addr{a("fc00:e::2"), dst6}, 1) // segments left 1: dst6 is active
	ip6 := testsupport.IPv6{Src: src6, Dst: dst6, NextHeader: 43, HopLimit: 64, FlowLabel: 0x01234}.Packet(append(srh, ip4...))
	if _, err := pktcheck.IPv6(ip6, false, pktcheck.ToSRH); err != nil {
		t.Errorf("IPv6 with SRH: %v", err)
	}
	if !bytes.Equal(ip6[:4], []byte{0x60, 0, 0x12, 0x34}) {
		t.Errorf("first word %x, want 60001234", ip6[:4])
	}
	eth := testsupport.Ethernet([]byte{2, 0, 0, 0, 0, 1}, []byte{2, 0, 0, 0, 0, 2}, 100, 0x86dd)
	if want := []byte{2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2, 0x81, 0, 0, 100, 0x86, 0xdd}; !bytes.Equal(eth, want) {
		t.Errorf("Ethernet %x, want %x", eth, want)
	}
	if _, err := (testsupport.FakeEnv{"eth1": 7}).Ifindex("eth2"); err == nil {
		t.Error("FakeEnv resolved a name it does not hold")
	}
}
