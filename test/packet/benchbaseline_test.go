package packet

// benchbaseline_test.go: `bench micro --baseline` runs another build's object against the same pinned
// maps and frames in paired rounds. Here the baseline is this build's own object file: every case
// must get its rounds, with the same actions (pairedRounds refuses differing ones).

import (
	"testing"

	"github.com/seg6x/seg6x/tools/benchrig"
)

func TestBenchBaselineRunsPairedRounds(t *testing.T) {
	res, err := benchrig.MicroCases(rig, 200, "../../internal/dataplane/seg6x_bpfel.o")
	if err != nil {
		t.Fatal(err)
	}
	if len(res) < 10 {
		t.Fatalf("%d cases", len(res))
	}
	for _, r := range res[1:] { // [0] is the bare redirect
		if len(r.BaselineRatios) != benchrig.BaselineRounds || r.BaselineNsPerPkt <= 0 || r.VsBaseline <= 0 {
			t.Errorf("%s: baseline %.1f ns, median ratio %.3f, rounds %v: want %d rounds measured", r.Case,
				r.BaselineNsPerPkt, r.VsBaseline, r.BaselineRatios, benchrig.BaselineRounds)
		}
	}
	if _, err := benchrig.MicroCases(rig, 10, "no-such-object.o"); err == nil {
		t.Error("a baseline file that does not exist was accepted")
	}
}
