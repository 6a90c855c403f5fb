package packet

// tc_test.go: the tc build of the same pipeline (bpf/seg6x_tc.bpf.c) against every fixture, and the GSO
// decisions only skbs have. The tc program differs from the XDP one in three ways, and only these:
// its return codes are tc's; the tenant's VLAN tag lives in the skb's metadata (the stack moves it there
// before tc, the program moves a test frame's tag there itself, and a tag it pushes is not in the output
// bytes); and a packet too big for its next link is handed to the kernel as it arrived
// (PASS_FIB_FRAG_NEEDED) instead of answered or fragmented here.

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/seg6x/seg6x/internal/dataplane"
	"github.com/seg6x/seg6x/tools/fixtures"
)

// tooBigAnswered are the reasons of the XDP program's answers to packets too big for their next link.
var tooBigAnswered = map[string]bool{
	"ICMP_TOO_BIG": true, "DROP_TOO_BIG": true, "DROP_TOO_BIG_RATELIMIT": true, "DROP_DECAP_TOO_BIG": true,
	"SLOW_FRAGMENT": true, "SLOW_DECAP_ICMP": true,
}

// untagged is frame without its first 802.1Q tag (as the tc program sees and leaves it), or frame.
func untagged(frame []byte) []byte {
	if len(frame) < 18 || binary.BigEndian.Uint16(frame[12:]) != 0x8100 {
		return frame
	}
	return append(append([]byte(nil), frame[:12]...), frame[16:]...)
}

// tcExpect is what the tc program must do with f: its return code, output bytes and reason.
func tcExpect(f *fixtures.Fixture) (uint32, []byte, string) {
	if tooBigAnswered[f.Reason] {
		return fixtures.TCActOK, untagged(f.Input), "PASS_FIB_FRAG_NEEDED"
	}
	code := map[string]uint32{"XDP_PASS": fixtures.TCActOK, "XDP_DROP": fixtures.TCActShot,
		"XDP_REDIRECT": fixtures.TCActRedirect}[f.Action]
	return code, untagged(f.Output), f.Reason
}

func TestTCFixtures(t *testing.T) {
	fs, err := fixtures.Load()
	if err != nil {
		t.Fatal(err)
	}
	for i := range fs {
		f := &fs[i]
		t.Run(f.Name, func(t *testing.T) {
			if f.Reason == "DROP_NO_ROOM" || f.Reason == "PASS_NO_ROOM" {
				checkTCGrows(t, f)
				return
			}
			code, out, reason := tcExpect(f)
			checkTC(t, f, 0, 0, code, out, reason)
		})
	}
}

// The NO_ROOM fixtures are frames XDP cannot grow by a 16-segment header (their tail and head room are
// too small); an skb grows as needed: the tc program encapsulates them. The output is the 304-byte
// outer header in front of the tenant's packet, whose TTL (and header checksum) alone changed.
func checkTCGrows(t *testing.T, f *fixtures.Fixture) {
	const hdr = 40 + 8 + 16*16
	in := untagged(f.Input)
	res, err := rig.RunTC(f, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if res.Action != fixtures.TCActRedirect {
		t.Fatalf("%s: tc returned %d, want %d (redirect)", f.Name, res.Action, fixtures.TCActRedirect)
	}
	out := res.Output
	if len(out) != len(in)+hdr || binary.BigEndian.Uint16(out[12:]) != 0x86DD || out[14+6] != 43 {
		t.Fatalf("%s: output is not IPv6 + SRH + %d bytes: %x", f.Name, len(in)-14, out[:min(len(out), 64)])
	}
	inner, want := out[14+hdr:], in[14:]
	if inner[8] != want[8]-1 || !bytes.Equal(inner[:8], want[:8]) || !bytes.Equal(inner[12:], want[12:]) {
		t.Fatalf("%s: the inner packet changed beyond its TTL\n got %x\nwant %x", f.Name, inner[:40], want[:40])
	}
}

// checkTC runs f through the tc program (as a GSO aggregate when gsoSize is set) and checks the
// return code, the output bytes and that reason counted it once.
func checkTC(t *testing.T, f *fixtures.Fixture, gsoSize, gsoSegs uint32, code uint32, out []byte, reason string) {
	t.Helper()
	var before uint64
	var err error
	if reason != "" {
		if before, err = rig.ReasonCount(reason); err != nil {
			t.Fatal(err)
		}
	}
	res, err := rig.RunTC(f, gsoSize, gsoSegs)
	if err != nil {
		t.Fatal(err)
	}
	if res.Action != code {
		t.Errorf("%s: tc returned %d, want %d (%s)", f.Name, res.Action, code, reason)
	}
	if !bytes.Equal(res.Output, out) {
		t.Errorf("%s: output differs\n got %x\nwant %x", f.Name, res.Output, out)
	}
	if reason != "" {
		if after, _ := rig.ReasonCount(reason); after != before+1 {
			t.Errorf("%s: %s counted %d times, want 1", f.Name, reason, after-before)
		}
	}
}

// A GSO aggregate is judged by its segments: one whose segments would not fit the tunnel goes to the kernel untouched, though the aggregate in the test is small; one that
// is neither TCP nor UDP cannot be sized and goes to the kernel too. Decapsulation judges the inner
// segments against the tenant port the same way. A binding SID leaves every aggregate to the kernel.
func TestTCGSOAggregates(t *testing.T) {
	tcp := fixtures.Get(t, "encap2_v4_tcp_tos") // to 198.18.3.2 through fab0, MTU 3500
	checkTC(t, tcp, 3400, 3, fixtures.TCActOK, untagged(tcp.Input), "PASS_FIB_FRAG_NEEDED")
	icmp := fixtures.Get(t, "encap_red1_icmp")
	checkTC(t, icmp, 100, 2, fixtures.TCActOK, untagged(icmp.Input), "PASS_GSO_UNSIZED")
	dx4 := fixtures.Get(t, "end_dx4")
	checkTC(t, dx4, 1500, 2, fixtures.TCActOK, dx4.Input, "PASS_FIB_FRAG_NEEDED")
	// A binding SID takes no GSO aggregate (a tunnel in a tunnel): the kernel gets it as it came.
	b6 := fixtures.Get(t, "b6_encaps")
	checkTC(t, b6, 100, 2, fixtures.TCActOK, b6.Input, "PASS_GSO_NESTED")
	for _, r := range []string{"PASS_GSO_UNSIZED", "PASS_GSO_NESTED"} {
		if dataplane.ReasonIndex(r) < 0 {
			t.Fatalf("%s is not a reason of the program", r)
		}
	}
}
