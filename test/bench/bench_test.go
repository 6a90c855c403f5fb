// Package benchtest checks the throughput rig itself: for every scenario the DUT's correct output
// is accepted by the sink at a low rate with no loss, and a wrong expectation accepts nothing, so a
// broken DUT (or a broken pattern) cannot score. The tests share one rig, each scenario set up on the
// one before's where it can be (benchrig.RigOrder), else on the rig reset.
package benchtest

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seg6x/seg6x/tools/benchrig"
	"github.com/seg6x/seg6x/tools/testsupport"
)

// shared is the rig the package's tests share, one scenario after another (one rig at a time: it
// pins threads at real-time priority); TestMain removes it.
var shared = &seqRig{prefix: fmt.Sprintf("s6bt%d", os.Getpid()%10000)}

func TestMain(m *testing.M) {
	code := m.Run()
	shared.down()
	os.Exit(code)
}

// seqRig is a rig and the scenario last set up on it (nil: none, or not known to be whole).
type seqRig struct {
	prefix string
	r      *benchrig.Rig
	sc     *benchrig.Scenario
}

// get returns the rig with sc set up: the rig as it is, when the scenario last set up on it set the
// DUT up as sc does; after sc's Setup, when sc's replaces that one's (Scenario.After); else the rig
// reset (or a new one) with sc set up. A failed subtest takes the rig down, so nothing it left
// behind carries on.
func (s *seqRig) get(t *testing.T, bin string, sc *benchrig.Scenario) *benchrig.Rig {
	t.Helper()
	t.Cleanup(func() {
		if t.Failed() {
			s.down()
		}
	})
	ok, setup := sc.After(s.sc)
	switch {
	case s.r == nil:
		r, err := benchrig.Up(s.prefix, bin)
		if err != nil {
			t.Fatal(err)
		}
		s.r, setup = r, true
	case !ok:
		s.sc = nil
		if err := s.r.Reset(); err != nil {
			s.down()
			t.Fatal(err)
		}
		setup = true
	}
	s.r.Bin = bin // a binary built for this test (testsupport.BuildSeg6x)
	if setup {
		s.sc = nil
		if err := sc.Setup(s.r); err != nil {
			t.Fatal(err)
		}
	}
	s.sc = sc
	return s.r
}

func (s *seqRig) down() {
	if s.r != nil {
		s.r.Down()
		s.r, s.sc = nil, nil
	}
}

// forScenarios runs test on each of scs as a subtest named after it, with the scenario set up on the
// shared rig, in an order that lets most go on from the one before (benchrig.RigOrder).
func forScenarios(t *testing.T, scs []*benchrig.Scenario, test func(t *testing.T, r *benchrig.Rig, sc *benchrig.Scenario)) {
	bin := testsupport.BuildSeg6x(t)
	for _, sc := range benchrig.RigOrder(scs, shared.sc) {
		t.Run(sc.Name, func(t *testing.T) { test(t, shared.get(t, bin, sc), sc) })
	}
}

// named returns the scenarios of the given names, in report order.
func named(names ...string) []*benchrig.Scenario {
	var out []*benchrig.Scenario
	for _, sc := range benchrig.Scenarios() {
		if slices.Contains(names, sc.Name) {
			out = append(out, sc)
		}
	}
	return out
}

func TestRigAcceptsCorrectFramesOnly(t *testing.T) {
	forScenarios(t, benchrig.Scenarios(), func(t *testing.T, r *benchrig.Rig, sc *benchrig.Scenario) {
		n := len(sc.Frame(60, 0))
		if sc.Carried {
			n = 60
		}
		if len(sc.Sizes) > 0 {
			n = sc.Sizes[0] - 4
		}
		frames := [][]byte{sc.Frame(n, 0), sc.Frame(n, 1), sc.Frame(n, 2)}
		load := func(corrupt bool) int {
			t.Helper()
			p := sc.Expect(n)
			if corrupt {
				p = benchrig.Corrupt(p)
			}
			var longest int
			var err error
			if sc.RevFrame != nil {
				// Both ways: three flows each, the way back checked on the generator's side.
				rev := [][]byte{sc.RevFrame(n, 0), sc.RevFrame(n, 1), sc.RevFrame(n, 2)}
				pr := sc.RevExpect(n)
				if corrupt {
					pr = benchrig.Corrupt(pr)
				}
				longest, err = r.LoadBoth(frames, rev, p, pr)
			} else {
				longest, err = r.Load(frames, p)
			}
			if err != nil {
				t.Fatal(err)
			}
			return longest
		}
		longest := load(false)
		r.CountFragmentPairs(sc.Fragments)
		if sc.Alt != nil {
			if err := r.Accept(sc.Expect(n), sc.Alt(n)); err != nil {
				t.Fatal(err)
			}
		}
		// Let the kernel scenarios resolve what they need (short runs until one comes through whole,
		// for at most about a second), then count.
		for i := 0; i < 20; i++ {
			tr, err := r.Run(longest, 20000, 50*time.Millisecond)
			if err != nil {
				t.Fatal(err)
			}
			if tr.Good == tr.Sent {
				break
			}
		}
		var fast0 uint64
		daemon := strings.HasPrefix(sc.Name, "seg6x_vxlan")
		if daemon {
			var err error
			if fast0, err = r.FastPathFrames(); err != nil {
				t.Fatal(err)
			}
		}
		tr, err := r.Run(longest, 20000, 200*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		if tr.Sent < 1000 || tr.Good != tr.Sent {
			t.Fatalf("at 20 kpps: sent %d, sink accepted %d, rejected %d (last rejected: %x)", tr.Sent, tr.Good, tr.Bad, r.LastBad())
		}
		// Scenarios under seg6x's daemon: the fast path took every frame (not the kernel).
		if daemon {
			fast, err := r.FastPathFrames()
			if err != nil {
				t.Fatal(err)
			}
			if fast-fast0 < tr.Sent {
				t.Fatalf("seg6x's fast path took %d of %d frames", fast-fast0, tr.Sent)
			}
		}
		// Kernel scenarios: every frame reached the DUT's kernel stack (its IP counters; frames the
		// kernel bridges never reach IP, and the sink counted them).
		if strings.HasPrefix(sc.Name, "kernel") && !sc.Bridged && tr.KernelIn < tr.Sent {
			t.Fatalf("the DUT's kernel received %d of %d frames", tr.KernelIn, tr.Sent)
		}
		// The same traffic against an expectation with one byte wrong: nothing may count.
		load(true)
		r.CountFragmentPairs(sc.Fragments)
		if sc.Alt != nil {
			if err := r.Accept(benchrig.Corrupt(sc.Expect(n)), benchrig.Corrupt(sc.Alt(n))); err != nil {
				t.Fatal(err)
			}
		}
		tr, err = r.Run(longest, 20000, 100*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		if tr.Good != 0 || tr.Bad < tr.Sent {
			t.Fatalf("a wrong expectation accepted %d of %d frames (rejected %d)", tr.Good, tr.Sent, tr.Bad)
		}
	})
}

// TestWeightedScenariosSpread: the weighted-policy scenarios (lists weighted 2/1/1) carry 250 flows
// over every list, the weight-2 one about half of them, in seg6x and in the kernel alike; otherwise
// their comparison would measure one list only.
func TestWeightedScenariosSpread(t *testing.T) {
	var weighted []*benchrig.Scenario
	for _, sc := range benchrig.Scenarios() {
		if sc.Alt != nil && !sc.Fragments { // Fragments: Alt is the second fragment, not another list
			weighted = append(weighted, sc)
		}
	}
	forScenarios(t, weighted, func(t *testing.T, r *benchrig.Rig, sc *benchrig.Scenario) {
		n := len(sc.Frame(60, 0))
		var frames [][]byte
		for f := 0; f < 250; f++ {
			frames = append(frames, sc.Frame(n, f))
		}
		longest, err := r.Load(frames, sc.Expect(n))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Run(longest, 20000, 100*time.Millisecond); err != nil { // neighbors resolved
			t.Fatal(err)
		}
		// Only the first output: the other lists' frames are rejected.
		tr, err := r.Run(longest, 20000, 300*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		if tr.Good == 0 || tr.Bad == 0 {
			t.Fatalf("first list alone: %d accepted, %d rejected of %d: the flows do not spread", tr.Good, tr.Bad, tr.Sent)
		}
		if err := r.Accept(sc.Expect(n), sc.Alt(n)); err != nil {
			t.Fatal(err)
		}
		if tr, err = r.Run(longest, 20000, 500*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		share := float64(tr.First) / float64(tr.Good)
		t.Logf("sent %d, accepted %d, %.2f of them the weight-2 list", tr.Sent, tr.Good, share)
		if tr.Good != tr.Sent || share < 0.3 || share > 0.7 {
			t.Fatalf("sent %d, accepted %d (rejected %d), weight-2 list's share %.2f (want about 0.5)", tr.Sent, tr.Good, tr.Bad, share)
		}
	})
}

// TestProfileMeasuresTheDUT: the profile trials (closed loops) count the frames the DUT took in and
// split the DUT thread's CPU time; the program's share is part of the thread's time; what the loop
// sent into the DUT is what the DUT took in and what came back correct.
func TestProfileMeasuresTheDUT(t *testing.T) {
	forScenarios(t, named("bare_redirect", "seg6x_encap_1sid", "kernel_ipv4"), func(t *testing.T, r *benchrig.Rig, sc *benchrig.Scenario) {
		if err := r.PinNAPI(); err != nil {
			t.Fatal(err)
		}
		n := len(sc.Frame(60, 0))
		longest, err := r.Load([][]byte{sc.Frame(n, 0)}, sc.Expect(n))
		if err != nil {
			t.Fatal(err)
		}
		p, err := r.Profile(longest, 200*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%+v", p)
		// DUT CPU and program time come from two trials one after the other: on a busy machine
		// (go test runs packages side by side) one trial can be a quarter slower than the other.
		if !p.Loop || p.Frames == 0 || p.ProgNs <= 0 || 1.25*p.DUTNs <= p.ProgNs || p.DUTBusy <= 0 || p.DUTBusy > 1.05 || p.Steal < 0 || p.Steal > 1 {
			t.Fatalf("implausible profile: %+v", p)
		}
		// The DUT's counters are read just outside the sink's (a netlink request each side): they
		// may see a few more frames, never fewer than all the loop sent but the population.
		if p.Frames+256 < p.Sent || float64(p.Frames) > 1.05*float64(p.Sent)+1000 || p.Good < p.Sent || p.RingDrops != 0 {
			t.Fatalf("the DUT took %d frames, the loop sent %d, %d came back correct, rings refused %d",
				p.Frames, p.Sent, p.Good, p.RingDrops)
		}
		// A wrong frame is never sent around again: with the sink expecting something else,
		// nothing comes back.
		if err := r.Accept(benchrig.Corrupt(sc.Expect(n))); err != nil {
			t.Fatal(err)
		}
		tr, _, err := r.RunLoop(longest, 100*time.Millisecond, nil, nil)
		if err == nil || tr.Good != 0 || tr.Sent != 0 {
			t.Fatalf("closed loop with a sink that rejects everything: %+v, %v", tr, err)
		}
	})
}

// TestLoopKeepsEachFramesLength: with templates of several lengths (IMIX 7:4:1), a closed loop
// rewrites every frame into a template of its own length, so the population keeps the mix it was
// seeded with (the generator seeds it picking templates in turn): the mean length of what the sink
// accepted, less that of a loop of the smallest frames alone, is the seeded mix's mean less the
// smallest length. A loop that lost the frames' classes would drift (and empty) or change the mix.
func TestLoopKeepsEachFramesLength(t *testing.T) {
	imix := []int{64, 64, 64, 64, 64, 64, 64, 594, 594, 594, 594, 1518}
	forScenarios(t, named("bare_redirect", "seg6x_encap_1sid", "seg6x_vxlan_both"), func(t *testing.T, r *benchrig.Rig, sc *benchrig.Scenario) {
		if err := r.PinNAPI(); err != nil {
			t.Fatal(err)
		}
		// loop runs the frames of sizes (with FCS) closed-loop; it returns the mean length of the
		// good frames and the seeded population's mean forward template length.
		loop := func(sizes []int) (got, seeded float64) {
			t.Helper()
			var fwd, rev [][]byte
			for _, sz := range sizes {
				fwd = append(fwd, sc.Frame(sz-4, 0))
				if sc.RevFrame != nil {
					rev = append(rev, sc.RevFrame(sz-4, 0))
				}
			}
			var longest int
			var err error
			if sc.RevFrame != nil {
				longest, err = r.LoadBoth(fwd, rev, sc.Expect(0), sc.RevExpect(0))
			} else {
				longest, err = r.Load(fwd, sc.Expect(0))
			}
			if err != nil {
				t.Fatal(err)
			}
			if !r.Loops() {
				t.Fatalf("sizes %v: the rig says these frames cannot loop", sizes)
			}
			dirs := 1
			if sc.RevFrame != nil {
				dirs = 2
			}
			population := r.LoopPopulation()
			for i := 0; i < population; i++ {
				seeded += float64(len(fwd[i%(len(fwd)*dirs)/dirs]))
			}
			seeded /= float64(population)
			tr, _, err := r.RunLoop(longest, 300*time.Millisecond, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if tr.Bad != 0 || tr.Good < 10*uint64(r.LoopPopulation()) {
				t.Fatalf("sizes %v: %d good frames, %d bad (last %x)", sizes, tr.Good, tr.Bad, r.LastBad())
			}
			return float64(tr.GoodBytes) / float64(tr.Good), seeded
		}
		small, smallSeed := loop([]int{64})
		mixed, mixSeed := loop(imix)
		want, got := mixSeed-smallSeed, mixed-small
		t.Logf("mean good frame %.1f bytes alone, %.1f mixed: %.1f more, seeded mix %.1f more", small, mixed, got, want)
		if got < 0.99*want || got > 1.01*want {
			t.Fatalf("the loop changed the mix: its frames are %.1f bytes longer on average than the smallest alone, the seeded mix %.1f", got, want)
		}
	})
}
