package benchrig

// rounds_test.go: a run of rounds pools the repetitions and keeps each round's own capacity ratio.

import (
	"math"
	"slices"
	"testing"
)

func TestMergeRoundsPoolsRunsAndPairsRatios(t *testing.T) {
	round := func(kernel, seg6x []float64, bad uint64) []Point {
		ps := []Point{
			{Scenario: "kernel_vxlan_both", FrameSize: 64, Flows: "single", CapacityRuns: kernel, CapacityMpps: median(kernel),
				DUTNsRuns: []float64{1000}, DUTNsPerFrame: 1000, DUTBusy: 0.97},
			{Scenario: "seg6x_vxlan_both", FrameSize: 64, Flows: "single", CapacityRuns: seg6x, CapacityMpps: median(seg6x),
				DUTNsRuns: []float64{300}, DUTNsPerFrame: 300, DUTBusy: 0.95, BadFrames: bad},
		}
		fillRatios(ps)
		return ps
	}
	// A slow round (the host's phase) and a fast one: the kernel is 1.0 then 0.5 Mpps.
	got := mergeRounds([][]Point{round([]float64{1.0, 1.0, 1.1}, []float64{3.0, 3.1, 3.2}, 1), round([]float64{0.5, 0.5, 0.6}, []float64{2.0, 2.0, 2.1}, 2)})
	k, s := got[0], got[1]
	if !slices.Equal(s.CapacityRuns, []float64{3.0, 3.1, 3.2, 2.0, 2.0, 2.1}) || s.CapacityMpps != (2.1+3.0)/2 || s.BadFrames != 3 {
		t.Fatalf("pooled seg6x point: runs %v median %v bad %d", s.CapacityRuns, s.CapacityMpps, s.BadFrames)
	}
	if k.CapacityMpps != (0.6+1.0)/2 || len(k.CapacityVsKernelRounds) != 0 {
		t.Fatalf("pooled kernel point: %+v", k)
	}
	// Each round's own ratio (3.1 / 1.0, 2.0 / 0.5), their median, and the pooled medians' ratio.
	want := []float64{3.1, 4.0}
	if len(s.CapacityVsKernelRounds) != 2 || math.Abs(s.CapacityVsKernelRounds[0]-want[0]) > 1e-9 || math.Abs(s.CapacityVsKernelRounds[1]-want[1]) > 1e-9 {
		t.Fatalf("per-round ratios %v, want %v", s.CapacityVsKernelRounds, want)
	}
	if math.Abs(s.CapacityVsKernelPaired-3.55) > 1e-9 || math.Abs(s.CapacityVsKernel-2.55/0.8) > 1e-9 {
		t.Fatalf("paired %v (want 3.55), pooled %v (want %v)", s.CapacityVsKernelPaired, s.CapacityVsKernel, 2.55/0.8)
	}
	if s.DUTNsPerFrame != 300 || s.DUTBusy != 0.95 || len(s.DUTNsRuns) != 2 {
		t.Fatalf("pooled profile: %+v", s)
	}
}
