package gsoprobe

// probe_test.go: the observer on hand-made frames (BPF_PROG_TEST_RUN, with gso_size/gso_segs set in
// the context) and on a real TCP transfer over a veth pair between two namespaces.

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/seg6x/seg6x/tools/testsupport"
)

func needRoot(t *testing.T) {
	t.Helper()
	testsupport.NeedRoot(t, "loading BPF programs")
}

// loadUnattached loads the object as Load does, without attaching it.
func loadUnattached(t *testing.T) *Probe {
	t.Helper()
	mask, err := TunnelMask()
	if err != nil {
		t.Fatal(err)
	}
	spec, err := LoadGsoprobe()
	if err != nil {
		t.Fatal(err)
	}
	if err := spec.Variables[GsoprobeVarTunnelGsoMask].Set(mask); err != nil {
		t.Fatal(err)
	}
	p := &Probe{}
	if err := spec.LoadAndAssign(&p.objs, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.objs.Close() })
	return p
}

// skbCtx is a struct __sk_buff (192 bytes) as BPF_PROG_TEST_RUN takes it, with only gso_segs (byte 164)
// and gso_size (byte 176) set.
func skbCtx(gsoSegs, gsoSize uint32) []byte {
	b := make([]byte, 192)
	binary.LittleEndian.PutUint32(b[164:], gsoSegs)
	binary.LittleEndian.PutUint32(b[176:], gsoSize)
	return b
}

func TestCountsFramesAndReturnsUnspec(t *testing.T) {
	needRoot(t)
	p := loadUnattached(t)
	mac := []byte{2, 0, 0, 0, 0, 1}
	v4 := testsupport.IPv4{Src: netip.MustParseAddr("198.18.1.1"), Dst: netip.MustParseAddr("198.18.2.1"), TTL: 64, Proto: 6}
	tcp4 := v4.Packet(make([]byte, 20))
	udp4 := testsupport.IPv4{Src: v4.Src, Dst: v4.Dst, TTL: 64, Proto: 17}.Packet(testsupport.UDP(1, 2, nil))
	srh := testsupport.SRH(4, []netip.Addr{netip.MustParseAddr("fc00:2::100")}, 0)
	srv6 := testsupport.IPv6{Src: netip.MustParseAddr("fc00:1::1"), Dst: netip.MustParseAddr("fc00:2::100"), NextHeader: 43, HopLimit: 64}.Packet(append(srh, tcp4...))
	frames := []struct {
		name             string
		frame            []byte
		gsoSegs, gsoSize uint32
	}{
		{"tcp4", append(testsupport.Ethernet(mac, mac, 0, 0x0800), tcp4...), 0, 0},
		{"udp4", append(testsupport.Ethernet(mac, mac, 0, 0x0800), udp4...), 0, 0},
		{"srv6 tcp4 aggregate", append(testsupport.Ethernet(mac, mac, 0, 0x86DD), srv6...), 3, 1400},
	}
	var bytesSent uint64
	for _, f := range frames {
		ret, err := p.objs.Gsoprobe.Run(&ebpf.RunOptions{Data: f.frame, Context: skbCtx(f.gsoSegs, f.gsoSize)})
		if err != nil {
			t.Fatalf("%s: %v", f.name, err)
		}
		if int32(ret) != -1 {
			t.Errorf("%s: returned %d, want TC_ACT_UNSPEC (-1)", f.name, int32(ret))
		}
		bytesSent += uint64(len(f.frame))
	}
	s, err := p.Read()
	if err != nil {
		t.Fatal(err)
	}
	last := frames[2]
	want := Stats{
		SKBs: 3, Bytes: bytesSent, TCP: 2, SRH: 1, Aggregates: 1, AggBytes: uint64(len(last.frame)), GSOSegs: 3,
		MaxLen: uint64(len(last.frame)), MaxGSOSize: 1400, MaxGSOSegs: 3,
		LastAgg: Aggregate{Len: uint64(len(last.frame)), GSOSize: 1400, GSOSegs: 3},
	}
	if s != want {
		t.Errorf("stats\n got %+v\nwant %+v", s, want)
	}
	if err := p.Reset(); err != nil {
		t.Fatal(err)
	}
	if s, err := p.Read(); err != nil || s != (Stats{}) {
		t.Errorf("after Reset: %+v, %v", s, err)
	}
}

func TestGSOTypeNames(t *testing.T) {
	bits, err := GSOBits()
	if err != nil {
		t.Skip("no kernel BTF:", err)
	}
	got := GSOTypeNames(uint64(bits["TCPV4"] | bits["IPXIP6"] | 1<<29))
	if want := []string{"TCPV4", "IPXIP6", "0x20000000"}; !slices.Equal(got, want) {
		t.Errorf("GSOTypeNames = %v, want %v", got, want)
	}
	if _, err := TunnelMask(); err != nil {
		t.Error(err)
	}
}

// TestSeesTSOAggregatesOverVeth sends 4 MB over TCP from namespace a to b over a veth pair and
// expects the probes on a's egress and b's ingress to see TSO aggregates without tunnel bits.
func TestSeesTSOAggregatesOverVeth(t *testing.T) {
	needRoot(t)
	a, b := fmt.Sprintf("gp-%d-a", os.Getpid()), fmt.Sprintf("gp-%d-b", os.Getpid())
	if err := testsupport.AddNetns(a, b); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { testsupport.DelNetns(a, b) })
	if err := testsupport.IPLines(a,
		"link add va type veth peer name vb netns "+b,
		"addr add 198.18.0.1/30 dev va", "link set va up", "link set lo up"); err != nil {
		t.Fatal(err)
	}
	if err := testsupport.IPLines(b, "addr add 198.18.0.2/30 dev vb", "link set vb up", "link set lo up"); err != nil {
		t.Fatal(err)
	}
	attach := func(ns, dev string, egress bool) *Probe {
		var p *Probe
		err := testsupport.InNetns(ns, func() error {
			it, err := net.InterfaceByName(dev)
			if err != nil {
				return err
			}
			p, err = Load(it.Index, egress)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.Close() })
		return p
	}
	out, in := attach(a, "va", true), attach(b, "vb", false)

	var ln net.Listener
	if err := testsupport.InNetns(b, func() (err error) { ln, err = net.Listen("tcp4", "198.18.0.2:5201"); return }); err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	const total = 4 << 20
	got := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- err
			return
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(20 * time.Second))
		n, err := io.Copy(io.Discard, c)
		if err == nil && n != total {
			err = fmt.Errorf("received %d bytes, want %d", n, total)
		}
		got <- err
	}()
	var c net.Conn
	if err := testsupport.InNetns(a, func() (err error) {
		c, err = net.DialTimeout("tcp4", "198.18.0.2:5201", 5*time.Second)
		return
	}); err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(20 * time.Second))
	chunk := bytes.Repeat([]byte{0x5a}, 64<<10)
	for sent := 0; sent < total; sent += len(chunk) {
		if _, err := c.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
	c.Close()
	if err := <-got; err != nil {
		t.Fatal(err)
	}

	bits, err := GSOBits()
	if err != nil {
		t.Fatal(err)
	}
	for name, p := range map[string]*Probe{"a egress": out, "b ingress": in} {
		s, err := p.Read()
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %+v gso_type_or %v", name, s, GSOTypeNames(s.GSOTypeOr))
		if s.Aggregates == 0 || s.MaxGSOSize == 0 || s.MaxLen <= 1514 || s.TCP == 0 {
			t.Errorf("%s: no TSO aggregates seen: %+v", name, s)
		}
		if s.Encapsulation != 0 || s.TunnelGSO != 0 || s.KernReadErrors != 0 {
			t.Errorf("%s: tunnel state on plain TCP: %+v", name, s)
		}
		if s.GSOTypeOr&uint64(bits["TCPV4"]) == 0 {
			t.Errorf("%s: gso_type_or %v lacks TCPV4", name, GSOTypeNames(s.GSOTypeOr))
		}
	}
}
