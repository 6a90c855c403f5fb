package fabrictest

// jumbo_test.go: a 9000-byte fabric under the daemon: tenant packets of 8,000 bytes and of the tunnel's
// whole MTU reach the XDP program as multi-buffer frames, are encapsulated whole, byte for byte, and
// spread over both uplinks; also when the links were raised to 9000 while the daemon ran, and when an
// uplink's driver cannot send multi-buffer frames redirected to it.

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/seg6x/seg6x/tools/testsupport"
)

func TestJumboFramesOverUplinks(t *testing.T) {
	sendJumbo(t, shared(t, jumboMTU))
}

// Links raised from 1500 to 9000 under the daemon: it sees the MTUs change and marks the attached
// interfaces as taking multi-buffer frames (rx_frags, logged), and jumbo frames then cross whole.
func TestJumboAfterMTURaised(t *testing.T) {
	f := take(t, 0)
	m := " mtu 9000"
	for ns, lines := range map[string][]string{
		f.h:  {"link set h0" + m},
		f.pe: {"link set a0" + m, "link set u1a" + m, "link set u2a" + m},
		f.p:  {"link set u1b" + m, "link set u2b" + m},
	} {
		if err := testsupport.IPLines(ns, lines...); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, dev := range []string{"a0", "u1a", "u2a"} {
		want := dev + ": MTU 9000: frames may span buffers"
		for !strings.Contains(f.logs.String(), want) {
			if time.Now().After(deadline) {
				t.Fatalf("the daemon did not log %q within 10 s", want)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	sendJumbo(t, f)
}

// An uplink whose driver stops sending multi-buffer frames redirected to it (u2a: its far end turns
// GRO off, so the veth is no redirect target at all): the daemon sees it and sends the jumbo frames the
// fast path chose that uplink for; every frame still arrives, over both uplinks.
func TestJumboToEgressWithoutSG(t *testing.T) {
	f := take(t, jumboMTU)
	if _, err := testsupport.NetnsExec(f.p, "ethtool", "-K", "u2b", "gro", "off"); err != nil {
		t.Fatal(err)
	}
	want := "u2a: MTU 9000: frames may span buffers, the fast path reads each frame's whole length; its driver cannot send a multi-buffer frame redirected to it"
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(f.logs.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("the daemon did not log %q within 10 s", want)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// What `show interfaces` says of the uplinks.
	out, err := testsupport.NetnsExec(f.pe, f.bin, "--dir", f.dir, "show", "interfaces", "--json")
	if err != nil {
		t.Fatalf("show interfaces: %v: %s", err, out)
	}
	var shown struct {
		Interfaces []struct {
			Name        string `json:"name"`
			MultiBuffer string `json:"multi_buffer"`
		} `json:"interfaces"`
	}
	if err := json.Unmarshal([]byte(out), &shown); err != nil {
		t.Fatalf("show interfaces --json: %v: %s", err, out)
	}
	got := map[string]string{}
	for _, it := range shown.Interfaces {
		got[it.Name] = it.MultiBuffer
	}
	if got["u1a"] != "rx-whole" || got["u2a"] != "rx-whole,tx-via-daemon" {
		t.Errorf("show interfaces: multi_buffer u1a %q, u2a %q; want rx-whole and rx-whole,tx-via-daemon", got["u1a"], got["u2a"])
	}
	sendJumbo(t, f)
}

// sendJumbo sends 64 flows x 2 tenant packets of 8,000 bytes, then of the tunnel's whole MTU, and
// checks that every one arrives whole at p, and over both uplinks.
func sendJumbo(t *testing.T, f *fabric) {
	t.Helper()
	const flows, perFlow = 64, 2
	// The largest tenant packet the tunnel takes (MTU 9000 less 64 bytes of IPv6 + one-SID SRH), and
	// 8,000 bytes: UDP payloads of those less the IPv4 and UDP headers.
	for _, payload := range []int{8000 - 28, jumboMTU - 64 - 28} {
		f.drain(50 * time.Millisecond)
		for seq := 0; seq < perFlow; seq++ {
			for flow := 0; flow < flows; flow++ {
				if err := f.sendFrame(f.frameSized(flow, seq, payload)); err != nil {
					t.Fatal(err)
				}
				time.Sleep(200 * time.Microsecond) // paced: p's receive buffers are not what is tested
			}
		}
		got := f.drainUntil(flows * perFlow)
		per := map[string]int{}
		for _, a := range got {
			per[a.uplink]++
			if a.payloadN != payload || a.size != 14+64+20+8+payload {
				t.Fatalf("payload %d: a frame of %d bytes with %d of payload arrived, want %d and %d", payload, a.size,
					a.payloadN, 14+64+20+8+payload, payload)
			}
		}
		t.Logf("payload %d: %d of %d frames arrived, u1 %d, u2 %d", payload, len(got), flows*perFlow, per["u1"], per["u2"])
		if len(got) != flows*perFlow {
			t.Fatalf("payload %d: %d of %d frames arrived intact", payload, len(got), flows*perFlow)
		}
		for _, u := range uplinks {
			if per[u] < flows*perFlow/8 {
				t.Fatalf("payload %d: %s carried %d of %d frames", payload, u, per[u], len(got))
			}
		}
	}
}
