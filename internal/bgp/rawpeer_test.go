package bgp

// rawpeer_test.go: a BGP peer written out by hand for tests, the way a strict implementation (ExaBGP,
// a vendor's) behaves: it listens, answers the speaker's OPEN with one carrying exactly the
// capabilities a test gives it (even malformed ones), keeps the session up, sends what the test says,
// and records every message it receives, in order, with the connection it came on.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	gobgp "github.com/osrg/gobgp/v4/pkg/packet/bgp"
)

type rawPeer struct {
	t    *testing.T
	ln   net.Listener
	port uint16
	asn  uint16
	caps []gobgp.ParameterCapabilityInterface

	mu    sync.Mutex
	conn  net.Conn
	conns int           // connections accepted
	msgs  []rawMessage  // received, in order
	wake  chan struct{} // a message arrived
}

type rawMessage struct {
	conn int // which connection (1: the first)
	msg  *gobgp.BGPMessage
}

// newRawPeer listens on [::1] for the speaker (configure it as neighbor ::1 on the returned port).
func newRawPeer(t *testing.T, asn uint16, caps ...gobgp.ParameterCapabilityInterface) *rawPeer {
	t.Helper()
	ln, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &rawPeer{t: t, ln: ln, port: uint16(ln.Addr().(*net.TCPAddr).Port), asn: asn, caps: caps, wake: make(chan struct{}, 1)}
	t.Cleanup(func() {
		ln.Close()
		p.mu.Lock()
		if p.conn != nil {
			p.conn.Close()
		}
		p.mu.Unlock()
	})
	go p.accept()
	return p
}

// vpnCaps are the capabilities of a VPNv4 and VPNv6 peer with 4-byte ASNs; with enh, Extended Next
// Hop for VPNv4 with IPv6 next hops (RFC 8950).
func vpnCaps(asn uint32, enh bool) []gobgp.ParameterCapabilityInterface {
	caps := []gobgp.ParameterCapabilityInterface{gobgp.NewCapMultiProtocol(gobgp.RF_IPv4_VPN),
		gobgp.NewCapMultiProtocol(gobgp.RF_IPv6_VPN), gobgp.NewCapRouteRefresh(), gobgp.NewCapFourOctetASNumber(asn)}
	if enh {
		caps = append(caps, gobgp.NewCapExtendedNexthop([]*gobgp.CapExtendedNexthopTuple{
			gobgp.NewCapExtendedNexthopTuple(gobgp.RF_IPv4_VPN, gobgp.AFI_IP6)}))
	}
	return caps
}

func (p *rawPeer) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.conn != nil {
			p.conn.Close()
		}
		p.conn = c
		p.conns++
		n := p.conns
		p.mu.Unlock()
		p.serve(c, n)
	}
}

// serve runs one connection: the OPEN exchange, then keepalives, recording everything received.
func (p *rawPeer) serve(c net.Conn, n int) {
	defer c.Close()
	open, err := gobgp.NewBGPOpenMessage(p.asn, 90, netip.MustParseAddr("198.18.255.99"),
		[]gobgp.OptionParameterInterface{gobgp.NewOptionParameterCapability(p.caps)})
	if err != nil {
		p.t.Errorf("raw peer: OPEN: %v", err)
		return
	}
	if err := p.write(c, open); err != nil {
		return
	}
	if err := p.write(c, gobgp.NewBGPKeepAliveMessage()); err != nil {
		return
	}
	done := make(chan struct{})
	defer close(done)
	go func() {
		tick := time.NewTicker(10 * time.Second)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				if p.write(c, gobgp.NewBGPKeepAliveMessage()) != nil {
					return
				}
			}
		}
	}()
	for {
		m, err := readMessage(c)
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) && !strings.Contains(err.Error(), "reset") {
				p.t.Logf("raw peer: connection %d: %v", n, err)
			}
			return
		}
		p.mu.Lock()
		p.msgs = append(p.msgs, rawMessage{conn: n, msg: m})
		p.mu.Unlock()
		select {
		case p.wake <- struct{}{}:
		default:
		}
	}
}

func readMessage(c net.Conn) (*gobgp.BGPMessage, error) {
	hdr := make([]byte, gobgp.BGP_HEADER_LENGTH)
	if _, err := io.ReadFull(c, hdr); err != nil {
		return nil, err
	}
	n := int(binary.BigEndian.Uint16(hdr[16:18]))
	if n < gobgp.BGP_HEADER_LENGTH {
		return nil, fmt.Errorf("message length %d", n)
	}
	buf := make([]byte, n)
	copy(buf, hdr)
	if _, err := io.ReadFull(c, buf[gobgp.BGP_HEADER_LENGTH:]); err != nil {
		return nil, err
	}
	return gobgp.ParseBGPMessage(buf)
}

func (p *rawPeer) write(c net.Conn, m *gobgp.BGPMessage) error {
	b, err := m.Serialize()
	if err != nil {
		p.t.Errorf("raw peer: %v", err)
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	_, err = c.Write(b)
	return err
}

// send writes m on the current connection.
func (p *rawPeer) send(m *gobgp.BGPMessage) {
	p.t.Helper()
	p.mu.Lock()
	c := p.conn
	p.mu.Unlock()
	if c == nil {
		p.t.Fatal("raw peer: no connection")
	}
	if err := p.write(c, m); err != nil {
		p.t.Fatalf("raw peer: sending: %v", err)
	}
}

// received is every message so far.
func (p *rawPeer) received() []rawMessage {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]rawMessage(nil), p.msgs...)
}

// waitFor waits until cond holds for the messages received.
func (p *rawPeer) waitFor(what string, d time.Duration, cond func([]rawMessage) bool) []rawMessage {
	p.t.Helper()
	deadline := time.After(d)
	for {
		ms := p.received()
		if cond(ms) {
			return ms
		}
		select {
		case <-p.wake:
		case <-time.After(100 * time.Millisecond):
		case <-deadline:
			p.t.Fatalf("raw peer: %s: not within %v; received:\n%s", what, d, describe(ms))
		}
	}
}

// vpnUpdate is what one UPDATE says about VPN routes.
type vpnUpdate struct {
	family   gobgp.Family
	withdraw bool
	eor      bool
	nexthop  netip.Addr
	prefixes map[string]uint32 // prefix -> label
}

// vpnUpdates reads an UPDATE's MP_REACH and MP_UNREACH attributes (an MP_UNREACH without NLRI is an
// end-of-RIB).
func vpnUpdates(m *gobgp.BGPMessage) []vpnUpdate {
	u, ok := m.Body.(*gobgp.BGPUpdate)
	if !ok {
		return nil
	}
	var out []vpnUpdate
	for _, a := range u.PathAttributes {
		switch a := a.(type) {
		case *gobgp.PathAttributeMpReachNLRI:
			v := vpnUpdate{family: gobgp.NewFamily(a.AFI, a.SAFI), nexthop: a.Nexthop, prefixes: map[string]uint32{}}
			for _, n := range a.Value {
				if l, ok := n.NLRI.(*gobgp.LabeledVPNIPAddrPrefix); ok {
					label := uint32(0)
					if len(l.Labels.Labels) > 0 {
						label = l.Labels.Labels[0]
					}
					v.prefixes[l.Prefix.String()] = label
				}
			}
			out = append(out, v)
		case *gobgp.PathAttributeMpUnreachNLRI:
			v := vpnUpdate{family: gobgp.NewFamily(a.AFI, a.SAFI), withdraw: true, eor: len(a.Value) == 0, prefixes: map[string]uint32{}}
			for _, n := range a.Value {
				if l, ok := n.NLRI.(*gobgp.LabeledVPNIPAddrPrefix); ok {
					v.prefixes[l.Prefix.String()] = 0
				}
			}
			out = append(out, v)
		}
	}
	if len(u.WithdrawnRoutes) > 0 || len(u.NLRI) > 0 {
		out = append(out, vpnUpdate{family: gobgp.RF_IPv4_UC, withdraw: len(u.WithdrawnRoutes) > 0, prefixes: map[string]uint32{}})
	}
	return out
}

func describe(ms []rawMessage) string {
	var b strings.Builder
	for i, m := range ms {
		fmt.Fprintf(&b, "  %d (connection %d): type %d", i, m.conn, m.msg.Header.Type)
		if n, ok := m.msg.Body.(*gobgp.BGPNotification); ok {
			fmt.Fprintf(&b, " NOTIFICATION %d/%d %x", n.ErrorCode, n.ErrorSubcode, n.Data)
		}
		for _, u := range vpnUpdates(m.msg) {
			fmt.Fprintf(&b, " [%s withdraw=%t eor=%t nh=%s %v]", familyName(u.family), u.withdraw, u.eor, u.nexthop, u.prefixes)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// notifications are the NOTIFICATIONs among ms.
func notifications(ms []rawMessage) []*gobgp.BGPNotification {
	var out []*gobgp.BGPNotification
	for _, m := range ms {
		if n, ok := m.msg.Body.(*gobgp.BGPNotification); ok {
			out = append(out, n)
		}
	}
	return out
}
