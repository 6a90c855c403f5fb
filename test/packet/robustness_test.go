package packet

import (
	"math/rand"
	"testing"

	"github.com/seg6x/seg6x/internal/dataplane"
	"github.com/seg6x/seg6x/internal/fixtures"
)

// TestTruncatedAndMutatedFrames feeds every fixture cut at every length, and with random bytes
// flipped (fixed seed), through the program: it must never abort, and every drop must be counted
// under a drop reason.
func TestTruncatedAndMutatedFrames(t *testing.T) {
	fs, err := fixtures.Load()
	if err != nil {
		t.Fatal(err)
	}
	dropsBefore := totalDrops(t)
	drops := uint64(0)
	rng := rand.New(rand.NewSource(1))
	runs := 0
	check := func(f *fixtures.Fixture, in []byte, what string) {
		g := *f
		g.Input = in
		res, err := rig.Run(nil, &g, 1)
		if err != nil {
			t.Fatalf("%s %s: %v", f.Name, what, err)
		}
		runs++
		switch dataplane.Actions[res.Action] {
		case "XDP_ABORTED":
			t.Errorf("%s %s: XDP_ABORTED", f.Name, what)
		case "XDP_DROP":
			drops++
		}
	}
	for i := range fs {
		f := &fs[i]
		for n := 14; n < len(f.Input); n++ {
			check(f, f.Input[:n], "cut")
		}
		for k := 0; k < 40; k++ {
			in := append([]byte(nil), f.Input...)
			for j := 0; j < 1+rng.Intn(4); j++ {
				in[14+rng.Intn(len(in)-14)] ^= byte(1 + rng.Intn(255))
			}
			check(f, in, "mutated")
		}
	}
	if got := totalDrops(t) - dropsBefore; got != drops {
		t.Errorf("%d frames dropped, %d counted under a drop reason", drops, got)
	}
	t.Logf("%d runs, %d drops, all counted", runs, drops)
}

func totalDrops(t *testing.T) uint64 {
	var n uint64
	for _, r := range dataplane.ReasonTable {
		if r.Action == dataplane.XDPDrop {
			c, err := rig.ReasonCount(r.Name)
			if err != nil {
				t.Fatal(err)
			}
			n += c
		}
	}
	return n
}

// TestTruncatedAndMutatedFramesTC does the same through the tc program, half the mutated frames
// claiming to be GSO aggregates (random gso_size): it returns only TC_ACT_OK, TC_ACT_SHOT or
// TC_ACT_REDIRECT, and every TC_ACT_SHOT is counted under a drop reason.
func TestTruncatedAndMutatedFramesTC(t *testing.T) {
	fs, err := fixtures.Load()
	if err != nil {
		t.Fatal(err)
	}
	dropsBefore := totalDrops(t)
	drops := uint64(0)
	rng := rand.New(rand.NewSource(2))
	runs := 0
	check := func(f *fixtures.Fixture, in []byte, gso uint32, what string) {
		g := *f
		g.Input = in
		res, err := rig.RunTC(&g, gso, min(gso, 1)*2)
		if err != nil {
			t.Fatalf("%s %s (%d bytes, gso_size %d): %v", f.Name, what, len(in), gso, err)
		}
		runs++
		switch res.Action {
		case fixtures.TCActOK, fixtures.TCActRedirect:
		case fixtures.TCActShot:
			drops++
		default:
			t.Errorf("%s %s (gso_size %d): tc returned %d", f.Name, what, gso, res.Action)
		}
	}
	for i := range fs {
		f := &fs[i]
		for n := 14; n < len(f.Input); n++ {
			if n < testRunMinLen(f.Input) {
				continue
			}
			check(f, f.Input[:n], 0, "cut")
		}
		for k := 0; k < 40; k++ {
			in := append([]byte(nil), f.Input...)
			for j := 0; j < 1+rng.Intn(4); j++ {
				in[14+rng.Intn(len(in)-14)] ^= byte(1 + rng.Intn(255))
			}
			gso := uint32(0)
			if k%2 == 1 {
				gso = uint32(1 + rng.Intn(9000))
			}
			check(f, in, gso, "mutated")
		}
	}
	if got := totalDrops(t) - dropsBefore; got != drops {
		t.Errorf("%d skbs dropped, %d counted under a drop reason", drops, got)
	}
	t.Logf("%d runs, %d drops, all counted", runs, drops)
}

// testRunMinLen is the shortest untagged IPv4 / IPv6 frame the kernel's BPF_PROG_TEST_RUN builds an
// skb of (it refuses one without the whole network header; the stack would not, and the program
// bounds-checks every read, but shorter frames cannot be run here).
func testRunMinLen(frame []byte) int {
	switch {
	case frame[12] == 0x08 && frame[13] == 0x00:
		return 14 + 20
	case frame[12] == 0x86 && frame[13] == 0xDD:
		return 14 + 40
	}
	return 14
}
