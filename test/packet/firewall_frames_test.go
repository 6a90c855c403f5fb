package packet

// firewall_frames_test.go: the firewall tests' packets: End.DT46 fixtures whose inner packet is
// changed (its protocol and payload, IPv4 fragment fields, IPv6 extension headers), each with the
// output End.DT46 makes of it, and the firewall loaded and configured through the store.

import (
	"bytes"
	"encoding/binary"
	"net/netip"
	"strings"
	"testing"

	"github.com/seg6x/seg6x/internal/dataplane"
	"github.com/seg6x/seg6x/internal/model"
	"github.com/seg6x/seg6x/internal/state"
	"github.com/seg6x/seg6x/tools/fixtures"
	"github.com/seg6x/seg6x/tools/testsupport"
)

// fwName is the firewall's plugin name here (no other test loads a plugin by it).
const fwName = "fwtest"

// fwObject is plugins/firewall.c built (once per test binary).
var fwObject []byte

// fwCommit commits ops to the rig's store.
func fwCommit(t *testing.T, ops ...state.Op) {
	t.Helper()
	if _, err := rig.Store.Commit(ops, false); err != nil {
		t.Fatal(err)
	}
}

// fwSettings are settings written as on the CLI: "rules=1 rule.0.proto=6".
func fwSettings(t *testing.T, words string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, w := range strings.Fields(words) {
		k, v, ok := strings.Cut(w, "=")
		if !ok {
			t.Fatalf("setting %q: want key=value", w)
		}
		out[k] = v
	}
	return out
}

func fwSIDOp(t *testing.T, sid, settings string) state.Op {
	return state.Op{Kind: model.OpReplace, SID: &model.SID{SID: netip.MustParseAddr(sid), Action: "plugin", Plugin: fwName,
		Tenant: "blue", Config: fwSettings(t, settings)}}
}

// fwLoad loads the firewall as fwName and makes sid a SID of tenant blue running it with settings;
// the test's cleanup removes both.
func fwLoad(t *testing.T, sid, settings string) {
	t.Helper()
	if fwObject == nil {
		fwObject = testsupport.BuildPlugin(t, "../../plugins/firewall.c")
	}
	fwCommit(t, state.Op{Kind: model.OpReplace, Plugin: &model.Plugin{Name: fwName, File: "firewall.o", Object: fwObject}},
		fwSIDOp(t, sid, settings))
	t.Cleanup(func() {
		fwCommit(t, state.Op{Kind: model.OpDelete, SID: &model.SID{SID: netip.MustParseAddr(sid)}},
			state.Op{Kind: model.OpDelete, Plugin: &model.Plugin{Name: fwName}})
	})
}

// fwConfigure gives sid new settings.
func fwConfigure(t *testing.T, sid, settings string) {
	t.Helper()
	fwCommit(t, fwSIDOp(t, sid, settings))
}

// fwPacket is End.DT46 fixture name (an inner IPv4 or IPv6 packet) sent to sid, its inner packet
// changed by edit (nil: none), with End.DT46's output for it: the fixture's output with the same
// change made to the inner packet it carries. An edited packet's output is checked against what the
// built-in End.DT46 SID (fc00:1::68) makes of the same frame.
func fwPacket(t *testing.T, name, sid string, edit func(ip []byte) []byte) *fixtures.Fixture {
	t.Helper()
	f := toSID(t, name, sid)
	if edit == nil {
		return f
	}
	inner := 14 + 40 + 8 + 16*int(f.Input[14+40+4]+1) // after the SRH (its last entry + 1 segments)
	f.Input = append(bytes.Clone(f.Input[:inner]), edit(bytes.Clone(f.Input[inner:]))...)
	binary.BigEndian.PutUint16(f.Input[14+4:], uint16(len(f.Input)-14-40))
	f.Output = append(bytes.Clone(f.Output[:14]), edit(bytes.Clone(f.Output[14:]))...)

	builtin := *f
	builtin.Input = bytes.Clone(f.Input)
	setDst(t, builtin.Input, "fc00:1::68")
	res, err := rig.Run(nil, &builtin, 1)
	if err != nil {
		t.Fatal(err)
	}
	if dataplane.Actions[res.Action] != f.Action || !bytes.Equal(res.Output, f.Output) {
		t.Fatalf("%s edited: the built-in End.DT46 gives %s %x\nthe test expects %s %x", name,
			dataplane.Actions[res.Action], res.Output, f.Action, f.Output)
	}
	return f
}

// ipv4Payload makes an inner IPv4 packet carry l4 as protocol proto, its checksum (at csum) written.
func ipv4Payload(proto uint8, l4 []byte, csum int) func([]byte) []byte {
	return func(ip []byte) []byte {
		ip = append(ip[:20:20], l4...)
		ip[9] = proto
		binary.BigEndian.PutUint16(ip[2:], uint16(len(ip)))
		testsupport.FixIPv4Checksum(ip)
		src, dst := netip.AddrFrom4([4]byte(ip[12:16])), netip.AddrFrom4([4]byte(ip[16:20]))
		binary.BigEndian.PutUint16(ip[20+csum:], testsupport.L4Checksum(src, dst, proto, ip[20:]))
		return ip
	}
}

// ipv6Payload makes an inner IPv6 packet carry l4 as next header nh, its checksum (at csum) written.
func ipv6Payload(nh uint8, l4 []byte, csum int) func([]byte) []byte {
	return func(ip []byte) []byte {
		ip = append(ip[:40:40], l4...)
		ip[6] = nh
		binary.BigEndian.PutUint16(ip[4:], uint16(len(l4)))
		src, dst := netip.AddrFrom16([16]byte(ip[8:24])), netip.AddrFrom16([16]byte(ip[24:40]))
		binary.BigEndian.PutUint16(ip[40+csum:], testsupport.L4Checksum(src, dst, nh, ip[40:]))
		return ip
	}
}

// Upper-layer payloads, checksums 0 (ipv4Payload and ipv6Payload write them).
var (
	icmpEcho  = []byte{8, 0, 0, 0, 0, 1, 0, 1, 'p', 'i', 'n', 'g'}   // ICMP echo request
	icmp6Echo = []byte{128, 0, 0, 0, 0, 1, 0, 1, 'p', 'i', 'n', 'g'} // ICMPv6 echo request
	tcpTo22   = tcpSegment(2000, 22)
)

// Where the checksum is in a TCP segment, and in an ICMP or ICMPv6 message.
const tcpCsum, icmpCsum = 16, 2

// tcpSegment is a TCP segment (PSH+ACK) from sport to dport with 4 bytes of data.
func tcpSegment(sport, dport uint16) []byte {
	b := make([]byte, 20, 24)
	binary.BigEndian.PutUint16(b[0:], sport)
	binary.BigEndian.PutUint16(b[2:], dport)
	binary.BigEndian.PutUint32(b[4:], 1)
	b[12], b[13] = 5<<4, 0x18
	binary.BigEndian.PutUint16(b[14:], 8192)
	return append(b, 'd', 'a', 't', 'a')
}

// ipv4Fragment makes an inner IPv4 packet a fragment at offset (8-byte units), with more fragments
// following when more.
func ipv4Fragment(offset uint16, more bool) func([]byte) []byte {
	field := offset
	if more {
		field |= 0x2000
	}
	return func(ip []byte) []byte {
		binary.BigEndian.PutUint16(ip[6:], field)
		testsupport.FixIPv4Checksum(ip)
		return ip
	}
}

// ext6 is an 8-byte IPv6 extension header: its type and its bytes after the next header field.
type ext6 struct {
	typ  uint8
	rest [7]byte
}

var (
	hopByHop = ext6{0, [7]byte{0, 1, 4}}  // a PadN option of 4 bytes
	destOpts = ext6{60, [7]byte{0, 1, 4}} // the same, as destination options
)

// fragment6 is a fragment header at offset (8-byte units), more fragments following when more.
func fragment6(offset uint16, more bool) ext6 {
	v := offset << 3
	if more {
		v |= 1
	}
	return ext6{44, [7]byte{0, byte(v >> 8), byte(v), 0, 0, 0, 7}}
}

// ipv6Ext puts hdrs, in order, between an inner IPv6 packet's fixed header and its payload.
func ipv6Ext(hdrs ...ext6) func([]byte) []byte {
	return func(ip []byte) []byte {
		out := bytes.Clone(ip[:40])
		out[6] = hdrs[0].typ
		for i, h := range hdrs {
			next := ip[6]
			if i+1 < len(hdrs) {
				next = hdrs[i+1].typ
			}
			out = append(append(out, next), h.rest[:]...)
		}
		out = append(out, ip[40:]...)
		binary.BigEndian.PutUint16(out[4:], uint16(len(out)-40))
		return out
	}
}
