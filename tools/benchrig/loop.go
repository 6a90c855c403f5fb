package benchrig

// loop.go: closed-loop trials. The generator seeds a fixed population of frames; from then on the
// sink checks each frame the DUT sends, rewrites it into a template and sends it into the DUT again
// (tools/bpf/bench.bpf.c, loop_cfg). The rig's CPU then does per frame what a bare redirect does (one
// receive, one program, one send) and no page allocation, so the DUT, on its own CPU, is the
// slowest stage even for a bare redirect: the rate the loop settles at is the DUT's capacity. With
// fewer frames in flight than a veth ring holds, the loop cannot overflow a ring: it runs without
// loss, at the pace of its slowest stage. It measures capacity, not loss under an offered rate (the
// searches of trial.go do that).

import (
	"fmt"
	"math"
	"time"

	"github.com/cilium/ebpf"
	"github.com/seg6x/seg6x/tools/benchrig/rigbpf"
)

// loopPopulation is how many frames circulate one way: enough for every stage to find a batch
// waiting, well below a veth ring's 256 slots. Both directions loaded, the frames spread over four
// rings instead of two, and loopPopulationBoth keeps about as many per ring: with the DUT the
// slowest stage, they wait in its two input rings, about half in each.
const (
	loopPopulation     = 128
	loopPopulationBoth = 224
)

// LoopPopulation is how many frames a closed loop of the loaded scenario circulates.
func (r *Rig) LoopPopulation() int {
	if r.bidir {
		return loopPopulationBoth
	}
	return loopPopulation
}

// Loops reports whether the loaded scenario can run closed-loop trials: every frame the DUT sends is
// one frame of a template rewritten at its front (not a frame split in fragments), and each
// direction's templates have at most lengthClasses lengths. The sink puts a frame's start back by what
// the DUT changed its length by, which is right only when the template it rewrites it into is as long
// as the one the frame came from: it picks one of the frame's length class (the class whose length is
// nearest the frame's), so IMIX loops too, with the mix it was seeded with.
func (r *Rig) Loops() bool { return !r.pairs && r.loopClass != nil }

// groupByLength groups template indices by direction (back[i]: template i goes into the DUT's egress)
// and length: what the sinks rewrite frames into (tools/bpf/bench.bpf.c, loop_class).
func groupByLength(frames [][]byte, back []bool) ([]rigbpf.BenchLoopClasses, error) {
	cs := make([]rigbpf.BenchLoopClasses, 2)
	for i, f := range frames {
		dir := 0
		if back != nil && back[i] {
			dir = 1
		}
		c := &cs[dir]
		k := 0
		for k < lengthClasses && c.Len[k] != 0 && int(c.Len[k]) != len(f) {
			k++
		}
		if k == lengthClasses {
			return nil, fmt.Errorf("more than %d frame lengths one way: cannot loop", lengthClasses)
		}
		c.Len[k] = uint32(len(f))
		c.Idx[k][c.N[k]] = uint8(i)
		c.N[k]++
	}
	// Nearest-length matching needs the classes further apart than the DUT changes a frame's length.
	for _, c := range cs {
		for a := 0; a < lengthClasses && c.Len[a] != 0; a++ {
			for b := a + 1; b < lengthClasses && c.Len[b] != 0; b++ {
				if d := int(c.Len[a]) - int(c.Len[b]); d > -2*maxLengthChange && d < 2*maxLengthChange {
					return nil, fmt.Errorf("frame lengths %d and %d too close to tell apart after the DUT: cannot loop", c.Len[a], c.Len[b])
				}
			}
		}
	}
	return cs, nil
}

const (
	lengthClasses = 4 // LOOP_CLASSES in tools/bpf/bench.bpf.c
	// maxLengthChange bounds what a scenario's DUT adds to or removes from a frame (an outer IPv6
	// header with an SRH of a few SIDs, or VXLAN's 70 bytes).
	maxLengthChange = 200
)

// setLoop turns the closed loop on or off on the sink (and, both directions loaded, on the
// generator's side, each rewriting into the other direction's templates). While it runs, the sinks'
// threads keep their CPU busy: they are ordinary threads then, so that this process, which shares
// that CPU, still gets to read the counters on time (a real-time thread would leave it 5% of it).
func (r *Rig) setLoop(on bool) error {
	var v uint32
	prio := rtPrio
	if on {
		v, prio = 1, 0
	}
	for _, tid := range r.sinkNAPI {
		if err := setFIFO(tid, prio); err != nil {
			return fmt.Errorf("scheduling of the sink's thread %d: %w", tid, err)
		}
	}
	// The generator seeds the loop picking templates in turn: the population's mix is the templates'.
	for _, o := range []rigbpf.BenchObjects{r.objs, r.rev} {
		if err := o.GenCfg.Update(uint32(0), v, ebpf.UpdateAny); err != nil {
			return err
		}
	}
	if !r.bidir {
		return r.objs.LoopCfg.Update(uint32(0), rigbpf.BenchLoopConf{On: v, Dir: 0, Redirect: 1}, ebpf.UpdateAny)
	}
	// The sink rewrites what went forward into the way back's templates, the generator's side the
	// other way round (LoadBoth).
	if err := r.objs.LoopCfg.Update(uint32(0), rigbpf.BenchLoopConf{On: v, Dir: 1}, ebpf.UpdateAny); err != nil {
		return err
	}
	return r.rev.LoopCfg.Update(uint32(0), rigbpf.BenchLoopConf{On: v, Dir: 0}, ebpf.UpdateAny)
}

// drainLoop waits, the loop stopped, until the frames that circulated have drained into the sinks:
// as many have left the loop (counted, good or bad, and not sent around again) since s0, before the
// loop was seeded, as were seeded; or drainTime has passed (frames were lost).
func (r *Rig) drainLoop(s0 rigbpf.BenchSinkCount, seeded uint64) {
	deadline := time.Now().Add(drainTime)
	for {
		s, err := r.sinkStats()
		if err != nil || s.Good+s.Bad-s.Looped-(s0.Good+s0.Bad-s0.Looped) >= seeded || time.Now().After(deadline) {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// RunLoop runs a closed-loop trial of about d and returns what the sink counted over it and how long
// that was; Sent is what the loop sent into the DUT, OfferedPPS its rate. begin and end, when set,
// run right before the first and after the last counter read of the measured span (the loop running).
func (r *Rig) RunLoop(frameLen int, d time.Duration, begin, end func() error) (Trial, time.Duration, error) {
	if !r.Loops() {
		return Trial{}, 0, fmt.Errorf("this scenario's frames cannot loop")
	}
	seed, err := r.sinkStats()
	if err != nil {
		return Trial{}, 0, err
	}
	// How many frames circulate: not known until the generator returns (drainLoop then waits all
	// of drainTime).
	seeded := uint64(math.MaxUint64)
	defer func() { // also after a half-done setLoop(true): the sinks' threads get their priority back
		_ = r.setLoop(false)
		r.drainLoop(seed, seeded)
	}()
	if err := r.setLoop(true); err != nil {
		return Trial{}, 0, err
	}
	if err := r.generate(frameLen, 0, uint64(r.LoopPopulation())); err != nil {
		return Trial{}, 0, err
	}
	var gs rigbpf.BenchGenState
	if err := r.objs.GenStats.Lookup(uint32(0), &gs); err != nil {
		return Trial{}, 0, err
	}
	seeded = gs.Count
	time.Sleep(20 * time.Millisecond) // settle
	if begin != nil {
		if err := begin(); err != nil {
			return Trial{}, 0, err
		}
	}
	s0, err := r.sinkStats()
	if err != nil {
		return Trial{}, 0, err
	}
	t0 := time.Now()
	time.Sleep(d)
	s1, err := r.sinkStats()
	if err != nil {
		return Trial{}, 0, err
	}
	wall := time.Since(t0)
	if end != nil {
		if err := end(); err != nil {
			return Trial{}, 0, err
		}
	}
	t := Trial{Sent: s1.Looped - s0.Looped, Good: s1.Good - s0.Good, GoodBytes: s1.GoodBytes - s0.GoodBytes, Bad: s1.Bad - s0.Bad, First: s1.First - s0.First}
	t.OfferedPPS = float64(t.Sent) / wall.Seconds()
	t.GoodPPS = float64(t.Good) / wall.Seconds()
	if t.Good == 0 {
		return t, wall, fmt.Errorf("nothing came back in the closed loop (%d bad, %d not rewritten)", t.Bad, s1.LoopErr-s0.LoopErr)
	}
	return t, wall, nil
}
