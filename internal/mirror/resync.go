package mirror

// resync.go: when the mirror reads the kernel's whole state again. After lost events (a netlink
// overrun, a message it could not parse) a resync waits for the events to be quiet, then a second
// one confirms nothing was lost silently meanwhile; a failed resync or a refused commit is retried
// with a growing back-off. The schedule is plain data driven by the loop's clock readings, so it is
// tested without sockets or timers.

import "time"

const (
	firstBackoff = 100 * time.Millisecond
	maxBackoff   = 10 * time.Second
)

type resyncSchedule struct {
	quiet, maxWait time.Duration

	lastEvent time.Time
	pending   time.Time // when events were first lost and not yet covered by a resync; zero: none
	confirm   bool      // a confirming resync is due once events are quiet
	retryAt   time.Time // a retry is due then; zero: none
	backoff   time.Duration
	lossRetry bool // the pending retry replaces a resync after lost events
}

// event records a batch of events at now; lost: some were lost.
func (s *resyncSchedule) event(now time.Time, lost bool) {
	s.lastEvent = now
	if lost && s.pending.IsZero() {
		s.pending = now
	}
}

// waiting reports that a resync will read everything anyway (incremental syncs can be skipped).
func (s *resyncSchedule) waiting() bool { return !s.pending.IsZero() }

// retry schedules a resync after the current back-off and grows it.
func (s *resyncSchedule) retry(now time.Time) {
	if s.backoff == 0 {
		s.backoff = firstBackoff
	}
	s.retryAt = now.Add(s.backoff)
	s.backoff = min(2*s.backoff, maxBackoff)
}

// done records a resync (why it ran, how many changes it made, whether it failed).
func (s *resyncSchedule) done(now time.Time, why string, changes int, failed bool) {
	afterLoss := why == "netlink overrun" || why == "confirm" || why == "retry" && s.lossRetry
	s.pending, s.retryAt, s.confirm = time.Time{}, time.Time{}, false
	if failed {
		s.retry(now)
		s.lossRetry = afterLoss // the retry stands in for it, confirmation included
		return
	}
	s.backoff, s.lossRetry = 0, false
	// After lost events, confirm once; a confirmation that still had to fix something means events
	// were lost silently meanwhile: confirm again.
	s.confirm = afterLoss && (why != "confirm" || changes > 0)
}

// when returns the instant the next resync is due and why; ok is false when none is scheduled.
func (s *resyncSchedule) when() (at time.Time, why string, ok bool) {
	consider := func(t time.Time, w string) {
		if !ok || t.Before(at) {
			at, why, ok = t, w, true
		}
	}
	if !s.pending.IsZero() {
		consider(minTime(s.lastEvent.Add(s.quiet), s.pending.Add(s.maxWait)), "netlink overrun")
	}
	if s.confirm {
		consider(s.lastEvent.Add(s.quiet), "confirm")
	}
	if !s.retryAt.IsZero() {
		consider(s.retryAt, "retry")
	}
	return at, why, ok
}

// due reports whether a resync is due at now, and why.
func (s *resyncSchedule) due(now time.Time) (string, bool) {
	at, why, ok := s.when()
	return why, ok && !now.Before(at)
}

// next returns how long until the next resync is due; ok is false when none is scheduled.
func (s *resyncSchedule) next(now time.Time) (time.Duration, bool) {
	at, _, ok := s.when()
	return max(at.Sub(now), 0), ok
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
