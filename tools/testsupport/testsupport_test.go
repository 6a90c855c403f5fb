package testsupport_test

// testsupport_test.go: the packet builders write what the output oracle (tools/pktcheck) accepts;
// FakeEnv serves a store, whose routes a Daemon's client reads back.

import (
	"bytes"
	"context"
	"encoding/binary"
	"net/netip"
	"testing"

	pb "github.com/seg6x/seg6x/api/seg6xv1"
	"github.com/seg6x/seg6x/internal/api"
	"github.com/seg6x/seg6x/internal/dataplane"
	"github.com/seg6x/seg6x/internal/state"
	"github.com/seg6x/seg6x/tools/pktcheck"
	"github.com/seg6x/seg6x/tools/testsupport"
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

// A store on FakeEnv served in-process: Daemon.Routes reads back what was committed.
func TestFakeEnvStoreAndDaemonRoutes(t *testing.T) {
	testsupport.NeedRoot(t, "bpffs, BPF maps")
	dir := t.TempDir()
	st, err := dataplane.OpenStore(dir, testsupport.FakeEnv{"eth1": 7}, state.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close(); testsupport.UnmountInstance(dir) })
	c, stop, err := api.Local(api.NewServer(st, true))
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	ops := []*pb.Op{
		{Kind: pb.Op_ADD, Object: &pb.Op_Tenant{Tenant: &pb.Tenant{Name: "A", Table: 100, Ports: []*pb.Port{{Dev: "eth1", Vlan: 10}}}}},
		{Kind: pb.Op_ADD, Object: &pb.Op_Route{Route: &pb.Route{Tenant: "A", Prefix: "198.18.2.0/24", Segs: []string{"fc00:2::1"}}}},
	}
	if _, err := c.Commit(context.Background(), &pb.CommitRequest{Ops: ops}); err != nil {
		t.Fatal(err)
	}
	routes, err := (&testsupport.Daemon{Client: c}).Routes()
	if err != nil {
		t.Fatal(err)
	}
	if len(routes) != 1 || routes[0].Prefix != "198.18.2.0/24" || routes[0].UsedSrc != "fc00:1::1" {
		t.Fatalf("routes %v, want 198.18.2.0/24 from FakeEnv's source fc00:1::1", routes)
	}
}
