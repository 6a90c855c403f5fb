package daemontest

// vxlan_fastpath_test.go: the VXLAN fast path under the daemon, as an operator runs it.
// Node A runs `seg6x daemon --mirror-kernel` with its bridge port p0 and underlay u0
// attached; node B is the kernel's VXLAN alone. Both bridges learn (vx0 nolearning, one default
// remote each, as a static EVPN-less setup). Pings cross the overlay both ways; full 1514-byte frames
// (1500-byte tenant MTU) do not fit the 1500-byte underlay: seg6x carries them in outer IPv6
// fragments (its daemon cuts them, node B's kernel reassembles), where the kernel alone would answer
// with ICMP or drop. Datagrams of 1472 bytes and a bounded TCP transfer at full MSS must arrive
// whole, and the fast path (redirects, fragmentation) must carry the bulk.

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	pb "github.com/seg6x/seg6x/api/seg6xv1"
	"github.com/seg6x/seg6x/tools/testsupport"
)

func TestVXLANFastPathEndToEnd(t *testing.T) {
	testsupport.NeedRoot(t, "namespaces, BPF")
	bin := testsupport.BuildSeg6x(t)
	id := os.Getpid() % 10000
	nsA, nsB := fmt.Sprintf("s6xa%d", id), fmt.Sprintf("s6xb%d", id)
	h1, h2 := fmt.Sprintf("s6xh1%d", id), fmt.Sprintf("s6xh2%d", id)
	if err := testsupport.AddNetns(nsA, nsB, h1, h2); err != nil {
		t.Fatal(err)
	}
	defer testsupport.DelNetns(nsA, nsB, h1, h2)
	vtep := func(ns, self, peer, port, host string, hostAddr string) {
		t.Helper()
		if err := testsupport.Sysctl(ns, "net.ipv6.conf.all.forwarding=1"); err != nil {
			t.Fatal(err)
		}
		if err := testsupport.IPLines(ns,
			"link add "+port+" type veth peer name eth0 netns "+host,
			"link add br0 type bridge",
			"link add vx0 type vxlan id 100 local "+self+" dstport 4789 nolearning",
			"link set vx0 master br0", "link set "+port+" master br0",
			"link set br0 up", "link set vx0 up", "link set "+port+" up",
		); err != nil {
			t.Fatal(err)
		}
		if out, err := testsupport.Output("bridge", "-n", ns, "fdb", "append", "00:00:00:00:00:00", "dev", "vx0", "dst", peer); err != nil {
			t.Fatalf("%v %s", err, out)
		}
		if err := testsupport.IPLines(host, "addr add "+hostAddr+"/24 dev eth0", "link set eth0 up", "link set lo up"); err != nil {
			t.Fatal(err)
		}
		// A frame XDP redirects into a veth needs the peer's NAPI (GRO on) to be received; frames from a
		// host's stack carry finished checksums only with tx offload off (docs/hypervisor.md).
		testsupport.MustRun(t, "ip", "netns", "exec", host, "ethtool", "-K", "eth0", "gro", "on", "tx", "off")
	}
	if err := testsupport.IPLines(nsA, "link add u0 type veth peer name u1 netns "+nsB,
		"-6 addr add 2001:db8:1::a/64 dev u0 nodad", "link set u0 up"); err != nil {
		t.Fatal(err)
	}
	if err := testsupport.IPLines(nsB, "-6 addr add 2001:db8:1::b/64 dev u1 nodad", "link set u1 up"); err != nil {
		t.Fatal(err)
	}
	// B's VXLAN leaves its UDP checksum to offload unless tx is off on u1: a wire always carries a
	// finished one (the fast path hands an unfinished one to the kernel: PASS_VXLAN_CSUM).
	testsupport.MustRun(t, "ip", "netns", "exec", nsB, "ethtool", "-K", "u1", "gro", "on", "tx", "off")
	if err := testsupport.BridgeNetfilterOff(nsA); err != nil {
		t.Fatal(err)
	}
	vtep(nsA, "2001:db8:1::a", "2001:db8:1::b", "p0", h1, "198.18.0.1")
	vtep(nsB, "2001:db8:1::b", "2001:db8:1::a", "p1", h2, "198.18.0.2")

	dir := filepath.Join(t.TempDir(), "x")
	testsupport.ScratchInstance(t, dir)
	var logs testsupport.LogBuffer
	allCPUs()
	d, err := testsupport.StartDaemon(bin, nsA, dir, &logs, "--mirror-kernel")
	if err != nil {
		t.Fatalf("%v:\n%s", err, logs.String())
	}
	defer func() { d.Signal(os.Kill) }()
	ctx := context.Background()
	var attach []*pb.Op // one commit: the program is loaded once for both
	for _, dev := range []string{"p0", "u0"} {
		attach = append(attach, &pb.Op{Kind: pb.Op_ADD, Object: &pb.Op_Interface{Interface: &pb.Interface{Name: dev}}})
	}
	if _, err := d.Client.Commit(ctx, &pb.CommitRequest{Ops: attach}); err != nil {
		t.Fatalf("attach p0 and u0: %v", err)
	}
	stats := func() *pb.StatsReply {
		t.Helper()
		s, err := d.Client.Stats(ctx, &pb.StatsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	// The bridges learn the hosts from the first exchanges (ARP, through the kernel).
	// ping pings dst from ns n times and returns what went wrong (nil: every reply came back).
	ping := func(ns, dst string, n int) error {
		out, err := testsupport.NetnsExec(ns, "ping", "-c", fmt.Sprint(n), "-i", "0.02", "-W", "1", "-q", dst)
		if err != nil || !strings.Contains(out, fmt.Sprintf(" %d received", n)) {
			return fmt.Errorf("ping %s from %s: %v\n%s", dst, ns, err, out)
		}
		return nil
	}
	pingFailed := func(errs ...error) {
		t.Helper()
		if err := errors.Join(errs...); err != nil {
			s, _ := d.Client.Stats(ctx, &pb.StatsRequest{})
			k, _ := d.Client.Kernel(ctx, &pb.KernelRequest{})
			t.Fatalf("%v\nactions %v\nreasons %v\nfdb %v\n%s", err, s.GetActions(), s.GetReasons(), k.GetFdb(), logs.Tail(20))
		}
	}
	pingFailed(ping(h1, "198.18.0.2", 3))
	// The mirror follows what the bridge learned; then frames both ways are the fast path's.
	deadline := time.Now().Add(5 * time.Second)
	for {
		k, err := d.Client.Kernel(ctx, &pb.KernelRequest{})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, e := range k.Fdb {
			if e.Accelerated {
				n++
			}
		}
		if n >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the learned MACs never became accelerated entries: %v\n%s", k.Fdb, logs.Tail(20))
		}
		time.Sleep(50 * time.Millisecond)
	}
	before := stats()
	back := make(chan error, 1) // both ways at once
	go func() { back <- ping(h2, "198.18.0.1", 20) }()
	there := ping(h1, "198.18.0.2", 20)
	pingFailed(there, <-back)
	after := stats()
	redirected := after.Actions["XDP_REDIRECT"].GetPackets() - before.Actions["XDP_REDIRECT"].GetPackets()
	// 40 requests and 40 replies cross node A: every one of them, but for the learned MACs'
	// refreshes (one frame per MAC per 10 s), is redirected.
	if redirected < 70 {
		t.Errorf("%d of 80 ping frames through node A were the fast path's; reasons %v", redirected, after.Reasons)
	}

	// 1472-byte UDP datagrams (1500-byte IPv4, DF: what the kernel answers with "frag needed, MTU
	// 1430") from h1 to h2: each is carried in two outer fragments.
	var uc net.PacketConn
	if err := testsupport.InNetns(h2, func() (err error) { uc, err = net.ListenPacket("udp4", "198.18.0.2:5002"); return err }); err != nil {
		t.Fatal(err)
	}
	defer uc.Close()
	const datagrams = 50
	arrived := make(chan int, 1)
	go func() {
		n, buf := 0, make([]byte, 2048)
		_ = uc.SetReadDeadline(time.Now().Add(10 * time.Second))
		for n < datagrams {
			if k, _, err := uc.ReadFrom(buf); err != nil || k != 1472 {
				break
			}
			n++
		}
		arrived <- n
	}()
	if err := testsupport.InNetns(h1, func() error {
		c, err := net.Dial("udp4", "198.18.0.2:5002")
		if err != nil {
			return err
		}
		defer c.Close()
		for i := range datagrams {
			if _, err := c.Write(bytes.Repeat([]byte{byte(i)}, 1472)); err != nil {
				return err
			}
			time.Sleep(2 * time.Millisecond)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if n := <-arrived; n != datagrams {
		t.Errorf("%d of %d 1472-byte datagrams arrived; reasons %v", n, datagrams, stats().Reasons)
	}

	// A bounded TCP transfer h1 -> h2 at full MSS: its data frames are fragmented outside.
	const size = 4 << 20
	payload := make([]byte, size)
	if _, err := rand.Read(payload); err != nil {
		t.Fatal(err)
	}
	var ln net.Listener
	if err := testsupport.InNetns(h2, func() (err error) { ln, err = net.Listen("tcp4", "198.18.0.2:5001"); return err }); err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan []byte, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- nil
			return
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(30 * time.Second))
		b, _ := io.ReadAll(c)
		got <- b
	}()
	before = stats()
	var conn net.Conn
	if err := testsupport.InNetns(h1, func() (err error) {
		conn, err = net.DialTimeout("tcp4", "198.18.0.2:5001", 5*time.Second)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := conn.Write(payload); err != nil {
		t.Fatalf("sending: %v", err)
	}
	conn.Close()
	select {
	case b := <-got:
		if !bytes.Equal(b, payload) {
			t.Fatalf("received %d of %d bytes (or different ones); reasons %v", len(b), size, stats().Reasons)
		}
	case <-time.After(40 * time.Second):
		t.Fatal("the transfer did not finish in 40 s")
	}
	after = stats()
	redirected = after.Actions["XDP_REDIRECT"].GetPackets() - before.Actions["XDP_REDIRECT"].GetPackets()
	passed := after.Actions["XDP_PASS"].GetPackets() - before.Actions["XDP_PASS"].GetPackets()
	t.Logf("TCP %d MB: %d frames redirected by the fast path, %d to the kernel; reasons %v", size>>20, redirected, passed, after.Reasons)
	fragmented := after.Reasons["SLOW_VXLAN_FRAGMENT"].GetPackets() - before.Reasons["SLOW_VXLAN_FRAGMENT"].GetPackets()
	t.Logf("of which %d full-size frames fragmented by the daemon (%d outer fragments in all so far)", fragmented,
		after.SlowPath.GetVxlanFragments())
	if redirected < 500 || fragmented < 2000 || passed > (redirected+fragmented)/20 {
		t.Errorf("the fast path carried %d frames (%d of them fragmented) and the kernel %d: the bulk should be the fast path's",
			redirected, fragmented, passed)
	}
	if n := after.Reasons["PASS_FIB_FRAG_NEEDED"].GetPackets(); n != 0 {
		t.Errorf("%d frames too big for the underlay went to the kernel (it answers with ICMP): the daemon fragments them", n)
	}
}
