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
