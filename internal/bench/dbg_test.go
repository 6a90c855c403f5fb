package bench

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

func TestDbg(t *testing.T) {
	for _, name := range strings.Split(os.Getenv("SC"), ",") {
		r, err := Up("s6q", "/work/main/bin/seg6x")
		if err != nil {
			t.Fatal(err)
		}
		var sc *Scenario
		for _, s := range Scenarios() {
			if s.Name == name {
				sc = s
			}
		}
		if err := sc.Setup(r); err != nil {
			r.Down()
			t.Fatal(err)
		}
		if err := r.PinNAPI(); err != nil {
			r.Down()
			t.Fatal(err)
		}
		n := len(sc.Frame(60, 0))
		r.Load([][]byte{sc.Frame(n, 0)}, sc.Expect(n))
		line := name + ":"
		for _, rate := range []float64{0.5e6, 1e6, 1.5e6, 2e6, 2.5e6, 3e6, 0, 0} {
			tr, _ := r.Run(n, rate, 500*time.Millisecond)
			line += fmt.Sprintf(" %.2f->%.2f", tr.OfferedPPS/1e6, tr.GoodPPS/1e6)
		}
		t.Log(line)
		r.Down()
	}
}
