package mirror

// resync_test.go: the resync schedule: quiet wait after lost events, the cap on that wait, the
// confirmation, and retries with back-off.

import (
	"testing"
	"time"
)

func TestResyncSchedule(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	s := &resyncSchedule{quiet: 30 * time.Millisecond, maxWait: time.Second}
	expect := func(now time.Time, why string, in time.Duration) {
		t.Helper()
		d, ok := s.next(now)
		if why == "" {
			if ok {
				t.Fatalf("at %v: nothing should be scheduled, got one in %v", now.Sub(t0), d)
			}
			return
		}
		if !ok || d != in {
			t.Fatalf("at %v: want %s in %v, got ok=%v in %v", now.Sub(t0), why, in, ok, d)
		}
		if _, due := s.due(now.Add(in - time.Millisecond)); due && in > 0 {
			t.Fatalf("at %v: due too early", now.Sub(t0))
		}
		if got, due := s.due(now.Add(in)); !due || got != why {
			t.Fatalf("at %v: want %s due after %v, got %q %v", now.Sub(t0), why, in, got, due)
		}
	}
	expect(t0, "", 0)
	s.event(at(0), false)
	expect(at(0), "", 0)
	if s.waiting() {
		t.Fatal("no loss: incremental syncs go on")
	}
	// Lost events: wait for 30 ms of quiet.
	s.event(at(10), true)
	if !s.waiting() {
		t.Fatal("a resync is pending: incremental syncs are skipped")
	}
	expect(at(10), "netlink overrun", 30*time.Millisecond)
	s.event(at(30), false)
	expect(at(30), "netlink overrun", 30*time.Millisecond)
	// Events that never stop: at most 1 s after the loss.
	s.event(at(1000), false)
	expect(at(1000), "netlink overrun", 10*time.Millisecond)
	// The resync ran: a confirmation once quiet.
	s.done(at(1010), "netlink overrun", 2000, false)
	expect(at(1010), "confirm", 20*time.Millisecond)
	s.event(at(1020), false)
	expect(at(1020), "confirm", 30*time.Millisecond)
	// The confirmation fixed something: confirm again; then it found nothing: done.
	s.done(at(1050), "confirm", 3, false)
	expect(at(1050), "confirm", 0)
	s.done(at(1051), "confirm", 0, false)
	expect(at(1051), "", 0)

	// A resync after a loss that fails: retried with back-off 100, 200, 400 ms; the retry that
	// succeeds is confirmed.
	s.event(at(2000), true)
	s.done(at(2030), "netlink overrun", 0, true)
	expect(at(2030), "retry", 100*time.Millisecond)
	s.done(at(2130), "retry", 0, true)
	expect(at(2130), "retry", 200*time.Millisecond)
	s.done(at(2330), "retry", 0, true)
	expect(at(2330), "retry", 400*time.Millisecond)
	s.done(at(2730), "retry", 5, false)
	expect(at(2730), "confirm", 0)
	s.done(at(2731), "confirm", 0, false)
	expect(at(2731), "", 0)

	// A refused commit outside any loss: a retry, not confirmed; the back-off starts again.
	s.retry(at(3000))
	expect(at(3000), "retry", 100*time.Millisecond)
	s.done(at(3100), "retry", 1, false)
	expect(at(3100), "", 0)

	// The back-off stops growing at 10 s.
	for i := 0; i < 10; i++ {
		s.retry(at(4000))
	}
	expect(at(4000), "retry", maxBackoff)
}
