package packet

// icmp_test.go: the per-CPU rate limit of the ICMP errors the fast path sends (bpf/icmp.h: a burst of
// 50, then one per millisecond, as the kernel's icmp_msgs_burst / icmp_msgs_per_sec defaults).

import (
	"testing"
	"time"

	"github.com/seg6x/seg6x/internal/dataplane"
	"github.com/seg6x/seg6x/tools/fixtures"
	"github.com/seg6x/seg6x/tools/testsupport"
)

const icmpBurst = 50 // icmp_burst in bpf/icmp.h

func TestICMPRateLimit(t *testing.T) {
	f := fixtures.Get(t, "too_big_v4_df")
	defer testsupport.OnOneCPU(t)() // one CPU, so one bucket
	counts := func() (answered, limited uint64) {
		a, err := rig.ReasonCount("ICMP_TOO_BIG")
		if err != nil {
			t.Fatal(err)
		}
		l, err := rig.ReasonCount("DROP_TOO_BIG_RATELIMIT")
		if err != nil {
			t.Fatal(err)
		}
		return a, l
	}
	time.Sleep(2 * icmpBurst * time.Millisecond) // a full bucket, whatever ran before
	const runs = 400
	a0, l0 := counts()
	start := time.Now()
	var tx, drop int
	for i := 0; i < runs; i++ {
		res, err := rig.Run(nil, f, 1)
		if err != nil {
			t.Fatal(err)
		}
		switch res.Action {
		case dataplane.XDPRedirect:
			tx++
		case dataplane.XDPDrop:
			drop++
		default:
			t.Fatalf("run %d: action %s", i, dataplane.Actions[res.Action])
		}
	}
	elapsed := time.Since(start)
	a1, l1 := counts()
	answered, limited := a1-a0, l1-l0
	// At most the burst plus what refilled meanwhile (one per ms, and one for the partial ms).
	most := uint64(icmpBurst + elapsed.Milliseconds() + 1)
	t.Logf("%d runs in %v: %d answered, %d rate-limited", runs, elapsed, answered, limited)
	if answered != uint64(tx) || limited != uint64(drop) || answered+limited != runs {
		t.Fatalf("counters %d answered + %d limited, actions %d XDP_REDIRECT + %d XDP_DROP, want %d in all", answered, limited, tx, drop, runs)
	}
	if answered < icmpBurst || answered > most {
		t.Errorf("%d answered: want the burst of %d and at most %d (refill over %v)", answered, icmpBurst, most, elapsed)
	}
	// The bucket refills: after a burst's worth of milliseconds, errors go out again.
	time.Sleep(2 * icmpBurst * time.Millisecond)
	res, err := rig.Run(nil, f, 1)
	if err != nil {
		t.Fatal(err)
	}
	if res.Action != dataplane.XDPRedirect {
		t.Errorf("after the refill: %s, want XDP_REDIRECT", dataplane.Actions[res.Action])
	}
}
