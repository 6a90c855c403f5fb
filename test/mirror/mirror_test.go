// Package mirrortest runs the kernel mirror end to end: kernel route changes one by one and in a
// flood (with a netlink receive buffer small enough to overrun, forcing resyncs) must end in exactly
// the kernel's state, nothing stale; and detaching seg6x under traffic hands forwarding back to the
// kernel. Timings are printed, not asserted (`seg6x-bench mirror` reports them).
package mirrortest

import (
	"testing"

	"github.com/seg6x/seg6x/tools/benchrig"
	"github.com/seg6x/seg6x/tools/testsupport"
)

func TestMirrorFollowsTheKernel(t *testing.T) {
	bin := testsupport.BuildSeg6x(t)
	t.Setenv("SEG6X_MIRROR_RCVBUF", "4096") // overrun on purpose during the flood
	res, err := benchrig.RunMirror(bin, 5, 2000, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("add %+v replace %+v delete %+v", res.Add, res.Replace, res.Delete)
	t.Logf("flood of %d: in %.2f s, out %.2f s, %d resyncs, %d stale", res.FloodRoutes, res.FloodAddSeconds,
		res.FloodDeleteSeconds, res.Resyncs, res.Stale)
	if res.Add.Count != 5 || res.Replace.Count != 5 || res.Delete.Count != 5 {
		t.Fatalf("changes seen: %+v %+v %+v", res.Add, res.Replace, res.Delete)
	}
	if res.Stale != 0 {
		t.Fatalf("%d mirrored routes left after the kernel deleted them", res.Stale)
	}
	s := res.Switchover
	t.Logf("switchover: sent %d, via seg6x %d, via the kernel %d, wrong %d", s.Sent, s.Matched[0], s.Matched[1], s.Bad)
	if s.Matched[0] == 0 || s.Matched[1] == 0 || s.Bad != 0 {
		t.Fatalf("both seg6x and then the kernel must have forwarded, correctly: %+v", s)
	}
	if lost := s.Sent - min(s.Good, s.Sent); lost*100 > s.Sent {
		t.Fatalf("the switch back to the kernel lost %d of %d frames", lost, s.Sent)
	}
}
