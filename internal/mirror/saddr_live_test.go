package mirror

// saddr_live_test.go: the outer source of the kernel's own End.B6.Encaps, read from its output,
// against the one readHostAddrs and source compute, for address sets that exercise each rule
// (root only). A sender encapsulates towards the binding SID; the node under test has the
// seg6local route on d0 while its first segment is routed out of d1; a receiver reads the frames.

import (
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/seg6x/seg6x/tools/testsupport"
	"golang.org/x/sys/unix"
)

func htons(v uint16) uint16 { return v<<8 | v>>8 }

func TestKernelSourceAsTheKernel(t *testing.T) {
	testsupport.NeedRoot(t, "network namespaces")
	p := fmt.Sprintf("s6sa%d", os.Getpid()%10000)
	snd, dut, rcv := p+"-a", p+"-d", p+"-r"
	if err := testsupport.AddNetns(snd, dut, rcv); err != nil {
		t.Fatal(err)
	}
	defer testsupport.DelNetns(snd, dut, rcv)
	const macD0, macR0 = "02:5a:00:00:00:01", "02:5a:00:00:00:02"
	seg := netip.MustParseAddr("2001:db8:e::a")
	if err := testsupport.IPLines(dut,
		"link add d0 address "+macD0+" type veth peer name s0 netns "+snd,
		"link add d1 type veth peer name r0 address "+macR0+" netns "+rcv,
		"link set lo up", "link set d0 up", "link set d1 up",
		"-6 addr add 2001:db8:0::1/64 dev d0 nodad", "-6 addr add 2001:db8:1::1/64 dev d1 nodad",
		"-6 route add 2001:db8:e::/48 dev d1",
		"-6 neigh add "+seg.String()+" lladdr "+macR0+" dev d1 nud permanent",
		"-6 route add 2001:db8:d::8/128 encap seg6local action End.B6.Encaps srh segs 2001:db8:e::a,2001:db8:e::b dev d0",
	); err != nil {
		t.Fatal(err)
	}
	if err := testsupport.Sysctl(dut, "net.ipv6.conf.all.forwarding=1", "net.ipv6.conf.all.seg6_enabled=1", "net.ipv6.conf.d0.seg6_enabled=1"); err != nil {
		t.Fatal(err)
	}
	if err := testsupport.IPLines(snd, "link set lo up", "link set s0 up", "-6 addr add 2001:db8:a::2/64 dev s0 nodad",
		"-6 route add 2001:db8:d::/48 dev s0", "-6 neigh add 2001:db8:d::8 lladdr "+macD0+" dev s0 nud permanent",
		"-6 route add 2001:db8:f::/48 encap seg6 mode encap segs 2001:db8:d::8,2001:db8:e::7 dev s0"); err != nil {
		t.Fatal(err)
	}
	if err := testsupport.IPLines(rcv, "link set r0 up"); err != nil {
		t.Fatal(err)
	}
	var fd, r0 int
	if err := testsupport.InNetns(rcv, func() error {
		it, err := net.InterfaceByName("r0")
		if err != nil {
			return err
		}
		r0 = it.Index
		fd, err = unix.Socket(unix.AF_PACKET, unix.SOCK_RAW, int(htons(unix.ETH_P_IPV6)))
		if err != nil {
			return err
		}
		return unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_IPV6), Ifindex: r0})
	}); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	tv := unix.NsecToTimeval((100 * time.Millisecond).Nanoseconds())
	_ = unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)

	// kernelSource sends one packet to the binding SID and returns the outer source of what comes out.
	kernelSource := func() (netip.Addr, error) {
		err := testsupport.InNetns(snd, func() error {
			c, err := net.Dial("udp6", "[2001:db8:f::1]:9")
			if err != nil {
				return err
			}
			defer c.Close()
			_, err = c.Write([]byte("b6"))
			return err
		})
		if err != nil {
			return netip.Addr{}, err
		}
		buf := make([]byte, 2048)
		for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); {
			n, _, err := unix.Recvfrom(fd, buf, 0)
			if err != nil {
				continue
			}
			f := buf[:n]
			if n >= 14+40 && binary.BigEndian.Uint16(f[12:]) == unix.ETH_P_IPV6 && f[14+6] == 43 &&
				netip.AddrFrom16([16]byte(f[14+24:14+40])) == seg {
				return netip.AddrFrom16([16]byte(f[14+8 : 14+24])), nil
			}
		}
		return netip.Addr{}, fmt.Errorf("no End.B6.Encaps output towards %s", seg)
	}
	// ours is the source the mirror would write.
	ours := func() (netip.Addr, string) {
		var got netip.Addr
		var why string
		if err := testsupport.InNetns(dut, func() error {
			it, err := net.InterfaceByName("d0")
			if err != nil {
				return err
			}
			got, why = readHostAddrs().source(it.Index, seg)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return got, why
	}

	for i, c := range []struct {
		name  string
		lines []string
	}{
		{"d0's address, not the one of d1 the segment is routed out of", nil},
		{"d0 with a link-local address only", []string{"-6 addr del 2001:db8:0::1/64 dev d0"}},
		{"a tie: the first address met", []string{"-6 addr add 2001:db8:0::1/128 dev lo"}},
		{"the longest shared prefix", []string{"-6 addr add 2001:db8:e:1::1/64 dev d1 nodad"}},
		{"the outgoing device before the label", []string{"-6 addr add fc00:a::1/64 dev d0 nodad"}},
		{"the longest shared prefix on the outgoing device", []string{"-6 addr add 2001:db8:e:5::1/64 dev d0 nodad",
			"-6 addr add 2001:db8:0::1/64 dev d0 nodad"}},
		{"deprecated addresses last", []string{"-6 addr change 2001:db8:e:5::1/64 dev d0 preferred_lft 0",
			"-6 addr change fc00:a::1/64 dev d0 preferred_lft 0", "-6 addr change 2001:db8:0::1/64 dev d0 preferred_lft 0"}},
		{"a label of the operator's", []string{"addrlabel add prefix 2001:db8:e::/64 label 50",
			"addrlabel add prefix 2001:db8:1::/64 label 50"}},
		{"use_oif_addrs_only", nil},
	} {
		if err := testsupport.IPLines(dut, c.lines...); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if c.name == "use_oif_addrs_only" {
			if err := testsupport.Sysctl(dut, "net.ipv6.conf.d0.use_oif_addrs_only=1"); err != nil {
				t.Fatal(err)
			}
		}
		want, err := kernelSource()
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got, why := ours()
		if got != want {
			t.Errorf("%s: seg6x would write %v (%s), the kernel wrote %s", c.name, got, why, want)
		}
		if i == 0 {
			// The premise: the route lookup's source for the segment is another address.
			out, err := testsupport.IP(dut, "-6", "route", "get", seg.String())
			if err != nil || !strings.Contains(out, "src 2001:db8:1::1") || want != netip.MustParseAddr("2001:db8:0::1") {
				t.Fatalf("route get %s: %q %v; the kernel's End.B6.Encaps wrote %s", seg, out, err, want)
			}
		}
		t.Logf("%s: %s", c.name, want)
	}
}
