package benchtest

// applyfile_test.go: `seg6x-bench apply` on a small file: every step runs and says what it did (the
// objects added, nothing, the objects removed), so the measured command is the one operators run.

import (
	"testing"

	"github.com/seg6x/seg6x/tools/benchrig"
	"github.com/seg6x/seg6x/tools/testsupport"
)

func TestBenchApplyFileSteps(t *testing.T) {
	res, err := benchrig.RunApplyFile(testsupport.BuildSeg6x(t), 20, 30)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"apply":       "routes:       600 added\ntenants:      20 added",
		"apply again": "no changes",
		"remove":      "routes:       600 removed\ntenants:      20 removed",
	}
	if len(res) != 3 {
		t.Fatalf("%d steps: %+v", len(res), res)
	}
	for _, r := range res {
		if r.Output != want[r.Step] || r.Objects != 620 || r.Seconds <= 0 {
			t.Errorf("step %q: %d objects, %.2f s, output %q; want %q", r.Step, r.Objects, r.Seconds, r.Output, want[r.Step])
		}
	}
}
