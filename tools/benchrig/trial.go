package benchrig

// trial.go: one trial (generate at a rate for a duration, count what the sink accepted) and the
// RFC 2544-style searches built on it.

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/cilium/ebpf"
	"github.com/seg6x/seg6x/tools/benchrig/rigbpf"
	"github.com/seg6x/seg6x/tools/testsupport"
	"golang.org/x/sys/unix"
)

const (
	tplFlows = 256 // TPL_FLOWS in tools/bpf/bench.bpf.c
	genBurst = 16  // GEN_BURST in tools/bpf/bench.bpf.c
	// Frames per live-frames batch when it takes at most genBatchTime: the test run's page pool
	// holds one batch of pages, so a small batch makes pages the DUT and the sink return overflow it
	// (freed, allocated and initialised again: a cost on the generator's CPU per frame). Longer
	// batches are genBurst frames: a batch runs with the generator's CPU closed to the sink's thread,
	// whose receive ring (256 frames) must not fill meanwhile.
	genBatch     = 64
	genBatchTime = 50 * time.Microsecond
)

type xdpMd struct {
	Data, DataEnd, DataMeta, IngressIfindex, RxQueueIndex, EgressIfindex uint32
}

// Load writes the generator templates (picked at random among len(frames); one frame = one flow)
// and the sink's pattern. It returns the largest frame length (the live-frames buffer size).
func (r *Rig) Load(frames [][]byte, p pattern) (int, error) {
	r.bidir, r.pairs = false, false
	return r.loadTemplates(frames, nil, p)
}

// LoadBoth loads a bidirectional scenario: the generator sends fwd (one template each) into the
// DUT's ingress and rev into its egress (through the sink's interface), the templates interleaved so
// that a random pick goes either way with equal odds; the sink checks pf, the generator's side pr.
// PinNAPI after LoadBoth also places the threads of the way back.
func (r *Rig) LoadBoth(fwd, rev [][]byte, pf, pr pattern) (int, error) {
	if len(fwd) != len(rev) {
		return 0, fmt.Errorf("%d templates one way, %d the other", len(fwd), len(rev))
	}
	r.bidir = true
	var frames [][]byte
	var back []bool
	for i := range fwd {
		frames, back = append(frames, fwd[i], rev[i]), append(back, false, true)
	}
	n, err := r.loadTemplates(frames, back, pf)
	if err != nil {
		return 0, err
	}
	return n, setPattern(r.rev, pr)
}

// loadTemplates writes frames as the generator's templates (back[i]: frame i goes the other way).
func (r *Rig) loadTemplates(frames [][]byte, back []bool, p pattern) (int, error) {
	if len(frames) > tplFlows {
		return 0, fmt.Errorf("%d templates, at most %d", len(frames), tplFlows)
	}
	longest := 0
	classes, err := groupByLength(frames, back)
	r.loopClass = classes
	if err != nil {
		r.loopClass = nil // the open-loop generator only (Loops)
	}
	// Both objects hold the templates: the generator's, and both sinks' for closed loops (loop.go).
	for _, o := range []rigbpf.BenchObjects{r.objs, r.rev} {
		for i := 0; i < tplFlows; i++ {
			f := frames[i%len(frames)]
			var t rigbpf.BenchFrameTpl
			t.Len = uint32(len(f))
			if back != nil && back[i%len(frames)] {
				t.Redirect = 1
			}
			copy(t.Data[:], f)
			if err := o.GenTpl.Update(uint32(i), &t, ebpf.UpdateAny); err != nil {
				return 0, err
			}
			longest = max(longest, len(f))
		}
		if err := o.GenCfg.Update(uint32(1), uint32(len(frames)), ebpf.UpdateAny); err != nil {
			return 0, err
		}
		for dir, c := range r.loopClass {
			if err := o.LoopClass.Update(uint32(dir), &c, ebpf.UpdateAny); err != nil {
				return 0, err
			}
		}
	}
	return longest, r.Accept(p)
}

// CountFragmentPairs makes trials count a frame as delivered when both its fragments arrived
// (Scenario.Fragments), until the next Load.
func (r *Rig) CountFragmentPairs(on bool) { r.pairs = on }

// setPattern makes the sink of objects o accept frames matching any of ps (one or two).
func setPattern(o rigbpf.BenchObjects, ps ...pattern) error {
	if len(ps) < 1 || len(ps) > 2 {
		return fmt.Errorf("the sink takes 1 or 2 patterns, not %d", len(ps))
	}
	for i := uint32(0); i < 2; i++ {
		var sp rigbpf.BenchSinkPattern // entry 1 unused: min_len 0
		if int(i) < len(ps) {
			p := ps[i]
			sp = rigbpf.BenchSinkPattern{Value: p.value, Mask: p.mask, MinLen: uint32(max(p.minLen, 1))}
		}
		if err := o.SinkPat.Update(i, &sp, ebpf.UpdateAny); err != nil {
			return err
		}
	}
	return nil
}

// Accept makes the sink accept frames matching any of ps (one or two) from now on; Trial.First counts
// the ones that matched the first.
func (r *Rig) Accept(ps ...pattern) error { return setPattern(r.objs, ps...) }

// sinkStats returns the sink's counters (both ways summed when both directions are loaded).
func (r *Rig) sinkStats() (rigbpf.BenchSinkCount, error) {
	var sum rigbpf.BenchSinkCount
	sinks := []rigbpf.BenchObjects{r.objs}
	if r.bidir {
		sinks = append(sinks, r.rev)
	}
	for _, o := range sinks {
		var per []rigbpf.BenchSinkCount
		if err := o.SinkStats.Lookup(uint32(0), &per); err != nil {
			return sum, err
		}
		for _, c := range per {
			sum.Good += c.Good
			sum.GoodBytes += c.GoodBytes
			sum.Bad += c.Bad
			sum.First += c.First
			sum.Second += c.Second
			sum.Multicast += c.Multicast
			sum.Looped += c.Looped
			sum.LoopErr += c.LoopErr
		}
	}
	return sum, nil
}

// Trial is the outcome of generating at one rate for one duration.
type Trial struct {
	OfferedPPS float64 // frames the generator sent per second
	GoodPPS    float64 // correct frames the sink counted per second
	Sent, Good uint64
	GoodBytes  uint64 // bytes of the good frames (closed loops: RunLoop)
	Bad        uint64 // frames that reached the sink but were wrong
	First      uint64 // good frames that matched the sink's first pattern
	Loss       float64
	KernelIn   uint64 // IPv4 + IPv6 packets the DUT's kernel stack received during the trial
}

// kernelReceived reads IpInReceives + Ip6InReceives of the DUT's network namespace.
func (r *Rig) kernelReceived() (uint64, error) {
	var total uint64
	err := testsupport.InNetns(r.ns("dut"), func() error {
		for _, f := range []struct{ file, key string }{{"snmp", "Ip:"}, {"snmp6", "Ip6InReceives"}} {
			b, err := os.ReadFile("/proc/thread-self/net/" + f.file)
			if err != nil {
				return err
			}
			lines := strings.Split(string(b), "\n")
			for i, l := range lines {
				switch {
				case f.key == "Ip:" && strings.HasPrefix(l, "Ip: ") && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "Ip: "):
					names, vals := strings.Fields(l), strings.Fields(lines[i+1])
					for j := range names {
						if names[j] == "InReceives" && j < len(vals) {
							n, _ := strconv.ParseUint(vals[j], 10, 64)
							total += n
						}
					}
				case f.key == "Ip6InReceives" && strings.HasPrefix(l, "Ip6InReceives"):
					if fs := strings.Fields(l); len(fs) == 2 {
						n, _ := strconv.ParseUint(fs[1], 10, 64)
						total += n
					}
				}
			}
		}
		return nil
	})
	return total, err
}

// maxGenPPS bounds how many frames an unpaced trial asks for (above what the generator reaches).
const maxGenPPS = 8e6

// Run generates frames (the templates; frameLen is the longest) at rate frames/s (0 = as fast as the generator goes) for about
// d. Pacing happens inside the generator program (it waits for each frame's slot), because every
// live-frames syscall costs tens of milliseconds of set-up; one syscall is one trial. The offered
// rate is what the generator measured between its first and last frame.
func (r *Rig) Run(frameLen int, rate float64, d time.Duration) (Trial, error) {
	s0, err := r.sinkStats()
	if err != nil {
		return Trial{}, err
	}
	k0, err := r.kernelReceived()
	if err != nil {
		return Trial{}, err
	}
	gap, frames := uint32(0), uint64(maxGenPPS*d.Seconds())
	if rate > 0 {
		gap, frames = uint32(1e9/rate), uint64(rate*d.Seconds())
	}
	if frames < 1000 {
		frames = 1000
	}
	if err := r.generate(frameLen, gap, frames); err != nil {
		return Trial{}, err
	}
	var gs rigbpf.BenchGenState
	if err := r.objs.GenStats.Lookup(uint32(0), &gs); err != nil {
		return Trial{}, err
	}
	s1, err := r.drain(s0, gs.Count)
	if err != nil {
		return Trial{}, err
	}
	k1, err := r.kernelReceived()
	if err != nil {
		return Trial{}, err
	}
	t := Trial{Sent: gs.Count, Good: s1.Good - s0.Good, Bad: s1.Bad - s0.Bad, First: s1.First - s0.First, KernelIn: k1 - k0}
	if r.pairs { // first and second fragments: a frame arrived when both did
		t.Good = min(t.First, s1.Second-s0.Second)
	}
	// first_ns and last_ns are the starts of the first and the last burst of genBurst frames.
	secs := float64(gs.LastNs-gs.FirstNs) / 1e9
	if secs <= 0 || gs.Count <= genBurst {
		return t, fmt.Errorf("generator sent %d frames", gs.Count)
	}
	t.OfferedPPS = float64((gs.Count-1)/genBurst*genBurst) / secs
	t.GoodPPS = float64(t.Good) / secs
	if t.Sent > 0 && t.Good < t.Sent {
		t.Loss = float64(t.Sent-t.Good) / float64(t.Sent)
	}
	return t, nil
}

// drainTime is how long a trial waits, after its last frame left, for the frames still in flight.
const drainTime = 50 * time.Millisecond

// drain waits until the sinks have counted, since s0, as many good frames as the generator sent
// (twice as many with CountFragmentPairs: two fragments each) or as many bad ones, or drainTime has
// passed, and returns their counters: frames counted later would count in the next trial. A trial
// that lost frames, or whose frames were some good and some wrong, waits all of drainTime.
func (r *Rig) drain(s0 rigbpf.BenchSinkCount, sent uint64) (rigbpf.BenchSinkCount, error) {
	want := sent
	if r.pairs {
		want *= 2
	}
	deadline := time.Now().Add(drainTime)
	for {
		s, err := r.sinkStats()
		if err != nil || s.Good-s0.Good >= want || s.Bad-s0.Bad >= want || time.Now().After(deadline) {
			return s, err
		}
		time.Sleep(time.Millisecond)
	}
}

// generate runs the generator for frames frames (frameLen: the longest template), gap ns apart (0:
// as fast as it goes); it returns when the last one left.
func (r *Rig) generate(frameLen int, gap uint32, frames uint64) error {
	if err := r.objs.GenCfg.Update(uint32(2), gap, ebpf.UpdateAny); err != nil {
		return err
	}
	if err := r.objs.GenStats.Update(uint32(0), rigbpf.BenchGenState{}, ebpf.UpdateAny); err != nil {
		return err
	}
	return testsupport.InNetns(r.ns("gen"), func() error {
		var prev, set unix.CPUSet
		if err := unix.SchedGetaffinity(0, &prev); err != nil {
			return err
		}
		set.Set(genCPU)
		if err := unix.SchedSetaffinity(0, &set); err != nil {
			return err
		}
		// The thread goes back to the runtime afterwards: not left on one CPU, where processes
		// started from it later (a daemon) would inherit the pin.
		defer func() { _ = unix.SchedSetaffinity(0, &prev) }()
		ctx := xdpMd{DataEnd: uint32(frameLen), IngressIfindex: uint32(r.genIdx)}
		// Live-frame mode reports no per-frame verdicts; what left is counted by gen_stats and the sink.
		_, err := r.objs.BenchGen.Run(&ebpf.RunOptions{Data: make([]byte, frameLen), Repeat: uint32(frames),
			Flags: unix.BPF_F_TEST_XDP_LIVE_FRAMES, Context: ctx, BatchSize: batchFor(gap, frames)})
		if err != nil {
			return fmt.Errorf("generator: %w", err)
		}
		return nil
	})
}

// batchFor returns the live-frames batch size for frames frames gap ns apart (genBatch).
func batchFor(gap uint32, frames uint64) uint32 {
	b := uint64(genBatch)
	if time.Duration(gap)*genBatch > genBatchTime {
		b = genBurst
	}
	return uint32(min(b, frames))
}

// Search finds the highest offered rate whose loss is at most maxLoss (0 for NDR), by binary search
// between 0 and hi over steps rates, each tried once (twice if the first trial fails) for d. It
// returns the best passing trial.
func (r *Rig) Search(frameLen int, hi float64, maxLoss float64, steps int, d time.Duration) (Trial, error) {
	lo := 0.0
	var best Trial
	for i := 0; i < steps; i++ {
		mid := (lo + hi) / 2
		t, err := r.Run(frameLen, mid, d)
		if err != nil {
			return best, err
		}
		if t.Loss > maxLoss {
			// One retry: on a shared VM a single scheduling hiccup of the veth NAPI threads loses
			// frames at any rate; a rate fails only when two trials in a row fail.
			if t, err = r.Run(frameLen, mid, d); err != nil {
				return best, err
			}
		}
		if t.Loss <= maxLoss {
			lo, best = mid, t
		} else {
			hi = mid
		}
	}
	return best, nil
}

// LastBad returns the first bytes of the last frame the sink rejected (or, in a bidirectional
// scenario whose sink rejected none, the generator's side).
func (r *Rig) LastBad() []byte {
	var t rigbpf.BenchFrameTpl
	if err := r.objs.SinkLastBad.Lookup(uint32(0), &t); err != nil {
		return nil
	}
	if r.bidir && t.Data == ([len(t.Data)]byte{}) {
		if err := r.rev.SinkLastBad.Lookup(uint32(0), &t); err != nil {
			return nil
		}
	}
	return t.Data[:128]
}
