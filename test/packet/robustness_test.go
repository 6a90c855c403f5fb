package packet

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/seg6x/seg6x/internal/dataplane"
	"github.com/seg6x/seg6x/tools/fixtures"
)

// TestTruncatedAndMutatedFrames feeds every fixture cut at every length, and with random bytes
// flipped (fixed seed), through the program: it must never abort, and every drop must be counted
// under a drop reason.
func TestTruncatedAndMutatedFrames(t *testing.T) {
	cutAndMutate(t, 1, 14, func(f *fixtures.Fixture, k int, _ *rand.Rand) (bool, string) {
		res, err := rig.Run(nil, f, 1)
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		switch dataplane.Actions[res.Action] {
		case "XDP_ABORTED":
			return false, "XDP_ABORTED"
		case "XDP_DROP":
			return true, ""
		}
		return false, ""
	})
}

// TestTruncatedAndMutatedFramesTC does the same through the tc program, half the mutated frames
// claiming to be GSO aggregates (random gso_size): it returns only TC_ACT_OK, TC_ACT_SHOT or
// TC_ACT_REDIRECT, and every TC_ACT_SHOT is counted under a drop reason.
func TestTruncatedAndMutatedFramesTC(t *testing.T) {
	cutAndMutate(t, 2, 0, func(f *fixtures.Fixture, k int, rng *rand.Rand) (bool, string) {
		gso := uint32(0)
		if k%2 == 1 {
			gso = uint32(1 + rng.Intn(9000))
		}
		res, err := rig.RunTC(f, gso, min(gso, 1)*2)
		if err != nil {
			t.Fatalf("%s (%d bytes, gso_size %d): %v", f.Name, len(f.Input), gso, err)
		}
		switch res.Action {
		case fixtures.TCActOK, fixtures.TCActRedirect:
			return false, ""
		case fixtures.TCActShot:
			return true, ""
		}
		return false, fmt.Sprintf("tc returned %d (gso_size %d)", res.Action, gso)
	})
}

// cutAndMutate runs every fixture cut at every length from minCut (0: the shortest frame the test run
// takes, testRunMinLen) and 40 mutations of each (random bytes flipped, seed) through run, which says
// whether the program dropped the frame and what was wrong with its verdict; every drop must be
// counted under a drop reason. k is the mutation's number (-1 for a cut).
func cutAndMutate(t *testing.T, seed int64, minCut int, run func(f *fixtures.Fixture, k int, rng *rand.Rand) (bool, string)) {
	fs, err := fixtures.Load()
	if err != nil {
		t.Fatal(err)
	}
	dropsBefore := totalDrops(t)
	drops, runs := uint64(0), 0
	rng := rand.New(rand.NewSource(seed))
	check := func(f *fixtures.Fixture, in []byte, k int, what string) {
		g := *f
		g.Input = in
		dropped, bad := run(&g, k, rng)
		runs++
		if dropped {
			drops++
		}
		if bad != "" {
			t.Errorf("%s %s: %s", f.Name, what, bad)
		}
	}
	for i := range fs {
		f := &fs[i]
		from := minCut
		if from == 0 {
			from = testRunMinLen(f.Input)
		}
		for n := from; n < len(f.Input); n++ {
			check(f, f.Input[:n], -1, "cut")
		}
		for k := 0; k < 40; k++ {
			in := append([]byte(nil), f.Input...)
			for j := 0; j < 1+rng.Intn(4); j++ {
				in[14+rng.Intn(len(in)-14)] ^= byte(1 + rng.Intn(255))
			}
			check(f, in, k, "mutated")
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
