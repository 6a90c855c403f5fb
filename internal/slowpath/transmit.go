package slowpath

// transmit.go: frames the slow path sends out of an interface as they are (the fragments of a VXLAN
// encapsulation: their Ethernet header already names the next hop), through a packet socket per
// interface: the interface's own transmit path, not the IP stack.

import (
	"fmt"
	"sync"

	"golang.org/x/sys/unix"
)

// transmitter holds one AF_PACKET socket per egress interface.
type transmitter struct {
	mu    sync.Mutex
	socks map[uint32]int
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

// send writes frame out of ifindex.
func (t *transmitter) send(ifindex uint32, frame []byte) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.socks == nil {
		t.socks = map[uint32]int{}
	}
	fd, ok := t.socks[ifindex]
	if !ok {
		// Protocol 0 and never bound: the socket only sends (bound to a protocol, it would get a
		// copy of every such frame the interface receives).
		s, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("packet socket: %w", err)
		}
		fd, t.socks[ifindex] = s, s
	}
	to := &unix.SockaddrLinklayer{Ifindex: int(ifindex), Protocol: htons(unix.ETH_P_IPV6), Halen: 6}
	if len(frame) >= 6 {
		copy(to.Addr[:], frame[:6])
	}
	if err := unix.Sendto(fd, frame, 0, to); err != nil {
		// The interface may have gone: the next frame opens a new socket.
		unix.Close(fd)
		delete(t.socks, ifindex)
		return fmt.Errorf("sending %d bytes out of ifindex %d: %w", len(frame), ifindex, err)
	}
	return nil
}

func (t *transmitter) close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for k, fd := range t.socks {
		unix.Close(fd)
		delete(t.socks, k)
	}
}
