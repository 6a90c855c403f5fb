package difftest

// capture.go: raw AF_PACKET sockets to put frames on the wire and collect what comes out.

import (
	"net"
	"sync"
	"time"

	"github.com/seg6x/seg6x/tools/testsupport"
	"golang.org/x/sys/unix"
)

type port struct {
	fd      int
	ifindex int
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

func openPort(ns, dev string) (*port, error) {
	p := &port{}
	err := testsupport.InNetns(ns, func() error {
		it, err := net.InterfaceByName(dev)
		if err != nil {
			return err
		}
		fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW, int(htons(unix.ETH_P_ALL)))
		if err != nil {
			return err
		}
		if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ALL), Ifindex: it.Index}); err != nil {
			unix.Close(fd)
			return err
		}
		p.fd, p.ifindex = fd, it.Index
		return nil
	})
	return p, err
}

func (p *port) send(frame []byte) error {
	return unix.Sendto(p.fd, frame, 0, &unix.SockaddrLinklayer{Ifindex: p.ifindex, Halen: 6})
}

// collect returns the unicast frames received within quiet of each other (at most 1 s in all).
func (p *port) collect(quiet time.Duration) [][]byte { return p.receive(quiet, 0) }

// drain returns the frames collect would keep that are queued now, without waiting for more.
func (p *port) drain() [][]byte { return p.receive(0, unix.MSG_DONTWAIT) }

// collectEach collects from every port at once (each as collect does): what each received, in order.
func collectEach(quiet time.Duration, ps ...*port) [][][]byte {
	out := make([][][]byte, len(ps))
	var wg sync.WaitGroup
	for i, p := range ps {
		wg.Go(func() { out[i] = p.collect(quiet) })
	}
	wg.Wait()
	return out
}

// receive is collect, or drain with flags MSG_DONTWAIT. A signal (a child of a test running in
// parallel exiting) breaks a receive with a timeout even under SA_RESTART: that one is made again.
func (p *port) receive(quiet time.Duration, flags int) [][]byte {
	var out [][]byte
	if flags&unix.MSG_DONTWAIT == 0 {
		tv := unix.NsecToTimeval(quiet.Nanoseconds())
		_ = unix.SetsockoptTimeval(p.fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
	}
	buf := make([]byte, 65536)
	deadline := time.Now().Add(time.Second)
	for time.Now().Before(deadline) {
		n, from, err := unix.Recvfrom(p.fd, buf, flags)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			break
		}
		if ll, ok := from.(*unix.SockaddrLinklayer); ok && ll.Pkttype == unix.PACKET_OUTGOING {
			continue
		}
		if n < 14 || buf[0]&1 == 1 {
			continue // multicast: the namespace's own ND / MLD
		}
		if unicastND(buf[:n]) {
			continue // neighbor upkeep (probes, answers): the daemon keeps its next hops probed, the kernel its own
		}
		out = append(out, append([]byte(nil), buf[:n]...))
	}
	return out
}

// unicastND reports whether frame is an untagged IPv6 neighbor solicitation or advertisement.
func unicastND(frame []byte) bool {
	return len(frame) >= 14+40+1 && frame[12] == 0x86 && frame[13] == 0xDD && frame[14+6] == 58 &&
		(frame[14+40] == 135 || frame[14+40] == 136)
}

func (p *port) close() { unix.Close(p.fd) }
