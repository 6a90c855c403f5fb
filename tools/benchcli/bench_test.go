package benchcli

// bench_test.go: the bench tables print "-" where a ratio does not apply, never "0.00x"; the count
// lists of bench control.

import (
	"io"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/seg6x/seg6x/tools/benchrig"
)

func stdoutOf(t *testing.T, f func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stdout
	os.Stdout = w
	f()
	os.Stdout = old
	w.Close()
	b, _ := io.ReadAll(r)
	return string(b)
}

func TestBenchTablesHaveNoZeroRatios(t *testing.T) {
	pts := []benchrig.Point{
		{Scenario: "bare_redirect", FrameSize: 64, Flows: "single", NDRRuns: []float64{1}, VsBare: 1, DUTBusy: 1},
		// No kernel reference in the run, no bare point at 128 bytes.
		{Scenario: "seg6x_end", FrameSize: 128, Flows: "single", NDRRuns: []float64{1}, KernelRef: "kernel_ipv4", DUTBusy: 1},
		{Scenario: "seg6x_encap_1sid", FrameSize: 64, Flows: "single", NDRRuns: []float64{1}, VsBare: 0.5, VsKernel: 2.5,
			KernelRef: "kernel_encap_1sid", CPUSpeedupVsKernel: 3, DUTBusy: 1},
	}
	for i := range pts { // every rate set: a 0.00 in the table can only be a ratio
		p := &pts[i]
		p.NDRMpps, p.NDRSpread, p.PDRMpps, p.PDRSpread, p.OverloadMpps, p.NDRGbps, p.DUTNsPerFrame, p.ProgNsPerFrame = 1, 0.1, 1, 0.1, 1, 1, 300, 100
		p.DUTNsRuns = []float64{300}
	}
	out := stdoutOf(t, func() { printBench(pts) })
	if strings.Contains(out, "0.00") {
		t.Errorf("a ratio that does not apply printed as 0.00:\n%s", out)
	}
	if !strings.Contains(out, "2.50 (kernel_encap_1sid)") || !strings.Contains(out, "3.00x") {
		t.Errorf("ratios that apply are missing:\n%s", out)
	}
	for i := range pts {
		pts[i].NDRRuns = nil // a --profile-only run
	}
	if out := stdoutOf(t, func() { printBench(pts) }); strings.Contains(out, "0.00x") || !strings.Contains(out, "3.00x") {
		t.Errorf("profile table:\n%s", out)
	}
}

func TestParseCounts(t *testing.T) {
	for in, want := range map[string][]int{"10000,100000": {10000, 100000}, "0": nil, "": nil, "5,0,7": {5, 7}} {
		if got, err := parseCounts(in); err != nil || !slices.Equal(got, want) {
			t.Errorf("parseCounts(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"-1", "x", "1e6"} {
		if got, err := parseCounts(in); err == nil {
			t.Errorf("parseCounts(%q) = %v, want an error", in, got)
		}
	}
}
