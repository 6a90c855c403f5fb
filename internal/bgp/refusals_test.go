package bgp

// refusals_test.go: refused routes are counted by reason, every reason listed from the start, and
// summed up in the log at most once per interval per reason (the rest in the next line, which comes by
// itself when the interval ends), ordinary reasons at info, the others at warn.

import (
	"log/slog"
	"strings"
	"testing"
	"time"
)

func TestRefusedRoutesSummary(t *testing.T) {
	logs := &logBuffer{}
	s := New(nil, Options{Logger: slog.New(slog.NewTextHandler(logs, nil))})
	s.refusal.every = 300 * time.Millisecond
	for i := range 3 {
		s.refused(RefusedLocalPrefix, "tenant blue: 198.18.1.0/24 is the tenant's own #"+string(rune('1'+i)))
	}
	s.refused(RefusedRTNotImported, "65000:900")
	lines := func(reason string) []string {
		var out []string
		for _, l := range strings.Split(logs.String(), "\n") {
			if strings.Contains(l, "reason="+reason) {
				out = append(out, l)
			}
		}
		return out
	}
	if l := lines(RefusedLocalPrefix); len(l) != 1 || !strings.Contains(l[0], `level=WARN msg="bgp routes refused" reason=local_prefix count=1 total=1`) {
		t.Fatalf("first summary: %q", l)
	}
	if l := lines(RefusedRTNotImported); len(l) != 1 || !strings.Contains(l[0], `level=INFO msg="bgp routes refused" reason=rt_not_imported count=1 total=1 example=65000:900`) {
		t.Fatalf("rt_not_imported: %q", l)
	}
	time.Sleep(100 * time.Millisecond)
	if l := lines(RefusedLocalPrefix); len(l) != 1 {
		t.Fatalf("a second line within the interval: %q", l)
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(lines(RefusedLocalPrefix)) < 2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	l := lines(RefusedLocalPrefix)
	if len(l) != 2 || !strings.Contains(l[1], "reason=local_prefix count=2 total=3 since=") || !strings.Contains(l[1], "own #3") {
		t.Fatalf("the summary at the interval's end: %q", l)
	}
	tot := s.refusedTotals()
	for _, r := range RefusalReasons {
		want := map[string]uint64{RefusedLocalPrefix: 3, RefusedRTNotImported: 1}[r]
		if n, ok := tot[r]; !ok || n != want {
			t.Errorf("total %s: %d (listed %t), want %d", r, n, ok, want)
		}
	}
}
