package lab

// inject.go: what a hostile tenant host does in the boundary test: build IPv6 frames addressed to
// SIDs and into the domain's locators (with or without an SRH, carrying an IPv4 packet a victim
// host would accept), send them raw on its access port, and watch every host for them. A canary
// (plain tenant IPv4 carrying CanaryMarker) proves the watch sees what the overlay does deliver.

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"time"

	"github.com/seg6x/seg6x/tools/testsupport"
	"golang.org/x/sys/unix"
)

// AttackMarker starts the payload of every attack frame; a host that receives one has been reached.
const AttackMarker = "S6X-ATTACK"

// CanaryMarker starts the payload of canary frames: ordinary tenant traffic the overlay delivers.
const CanaryMarker = "S6X-CANARY"

// CanaryPort is where canaries go: no server listens there (the echo server would log them).
const CanaryPort = 7001

// Attack is one frame a tenant host sends towards the domain.
type Attack struct {
	From   string       // host name
	Src    netip.Addr   // outer IPv6 source
	Dst    netip.Addr   // outer IPv6 destination
	Segs   []netip.Addr // SRH segment list (segment[0] last); none: no SRH
	SL     uint8        // segments left
	Victim netip.Addr   // inner IPv4 destination, at EchoPort (from the victim's peer on the other site)
	Reason string       // the drop reason the host's PE must count
}

// Frame builds the Ethernet frame (untagged: the host's access port pushes its tag) from h to its PE.
func (a Attack) Frame(h Host, n int) ([]byte, error) {
	inner := ipv4UDP(peerOf(a.Victim), a.Victim, EchoPort, []byte(fmt.Sprintf("%s-%d %s->%s", AttackMarker, n, a.From, a.Dst)))
	payload, nh := inner, uint8(4)
	if len(a.Segs) > 0 {
		payload, nh = append(testsupport.SRH(4, a.Segs, a.SL), inner...), 43
	}
	return ether(h, 0x86DD, testsupport.IPv6{Src: a.Src, Dst: a.Dst, NextHeader: nh, HopLimit: 64}.Packet(payload))
}

// CanaryFrame is tenant IPv4/UDP from h to dst:CanaryPort with CanaryMarker: the overlay delivers it.
func CanaryFrame(h Host, dst netip.Addr, n int) ([]byte, error) {
	src4 := netip.MustParsePrefix(h.Addr).Addr()
	return ether(h, 0x0800, ipv4UDP(src4, dst, CanaryPort, []byte(fmt.Sprintf("%s-%d %s->%s", CanaryMarker, n, h.Name, dst))))
}

// ether puts an untagged Ethernet header from h to its PE in front of an L3 packet.
func ether(h Host, ethertype uint16, l3 []byte) ([]byte, error) {
	hostMAC, err := net.ParseMAC(h.MAC)
	if err != nil {
		return nil, err
	}
	peMAC, err := net.ParseMAC(h.PEMAC)
	if err != nil {
		return nil, err
	}
	return append(testsupport.Ethernet(peMAC, hostMAC, 0, ethertype), l3...), nil
}

// peerOf is a host address on the victim's other site: a source the victim's stack accepts (its own
// address, which the attacker shares, would be a martian) and answers through its gateway.
func peerOf(victim netip.Addr) netip.Addr {
	for _, h := range hosts {
		if p := netip.MustParsePrefix(h.Addr); !p.Contains(victim) {
			return p.Addr()
		}
	}
	return victim
}

// ipv4UDP is a complete IPv4/UDP packet (TTL 64, from port 40000) with valid checksums.
func ipv4UDP(src, dst netip.Addr, port uint16, data []byte) []byte {
	udp := testsupport.UDP(40000, port, data)
	binary.BigEndian.PutUint16(udp[6:], testsupport.L4Checksum(src, dst, 17, udp))
	return testsupport.IPv4{Src: src, Dst: dst, TTL: 64, Proto: 17}.Packet(udp)
}

// SendRaw writes frames on dev with an AF_PACKET socket (through the device's tc egress, like all of
// the host's traffic), count times each, pausing gap between frames.
func SendRaw(dev string, frames [][]byte, count int, gap time.Duration) error {
	it, err := net.InterfaceByName(dev)
	if err != nil {
		return err
	}
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	to := &unix.SockaddrLinklayer{Ifindex: it.Index, Halen: 6}
	for i := 0; i < count; i++ {
		for _, f := range frames {
			copy(to.Addr[:], f[:6])
			if err := unix.Sendto(fd, f, 0, to); err != nil {
				return fmt.Errorf("send on %s: %w", dev, err)
			}
			time.Sleep(gap)
		}
	}
	return nil
}

// Sniffed is what Sniff saw arrive on a device.
type Sniffed struct {
	Frames  int      `json:"frames"`  // every frame received (not sent) on the device
	Marked  int      `json:"marked"`  // of which carried the attack marker
	Canary  int      `json:"canary"`  // of which carried the canary marker
	Samples []string `json:"samples"` // the first marked ones, as text around the marker
}

// Sniff counts, for duration, the frames arriving on dev and those that carry the attack or the
// canary marker (anywhere: tagged or not, encapsulated or not). ready is called once the socket
// is bound, before the window starts. Closing stop ends the window early; what the socket already
// holds is still counted.
func Sniff(dev string, duration time.Duration, ready func(), stop <-chan struct{}) (Sniffed, error) {
	var s Sniffed
	it, err := net.InterfaceByName(dev)
	if err != nil {
		return s, err
	}
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW, int(htons(unix.ETH_P_ALL)))
	if err != nil {
		return s, err
	}
	defer unix.Close(fd)
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ALL), Ifindex: it.Index}); err != nil {
		return s, err
	}
	tv := unix.NsecToTimeval((200 * time.Millisecond).Nanoseconds())
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		return s, err
	}
	buf := make([]byte, 65536)
	ready()
	for end := time.Now().Add(duration); time.Now().Before(end); {
		select {
		case <-stop:
			end = time.Time{}
		default:
			if n, from, err := unix.Recvfrom(fd, buf, 0); err == nil { // else a timeout: look again
				s.note(buf[:n], from)
			}
		}
	}
	for i := 0; i < 100000; i++ { // drain what arrived before the window closed
		n, from, err := unix.Recvfrom(fd, buf, unix.MSG_DONTWAIT)
		if err != nil {
			break
		}
		s.note(buf[:n], from)
	}
	return s, nil
}

// note counts one frame the socket received.
func (s *Sniffed) note(b []byte, from unix.Sockaddr) {
	if ll, ok := from.(*unix.SockaddrLinklayer); ok && ll.Pkttype == unix.PACKET_OUTGOING {
		return
	}
	s.Frames++
	if i := bytes.Index(b, []byte(AttackMarker)); i >= 0 {
		s.Marked++
		if len(s.Samples) < 5 {
			s.Samples = append(s.Samples, string(b[i:min(len(b), i+64)]))
		}
	}
	if bytes.Contains(b, []byte(CanaryMarker)) {
		s.Canary++
	}
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }
