package bgp

// refusals.go: learned routes the importer refused, counted by reason (a short stable label, for
// seg6x_bgp_refused_routes_total) and summed up in the log: at most one line per reason every 10 s,
// saying how many were refused since the last line and one of them as an example.

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"time"
)

// Why a learned route went into no tenant (the reason label of seg6x_bgp_refused_routes_total).
const (
	RefusedRTNotImported  = "rt_not_imported" // no tenant imports any of its route targets
	RefusedLocalPrefix    = "local_prefix"    // the tenant already has the prefix from the API or config
	RefusedBadSID         = "bad_sid"         // no usable SRv6 service SID (missing, malformed, bad transposition)
	RefusedOwnSID         = "own_sid"         // it carries one of this node's own service SIDs
	RefusedNotInstallable = "not_installable" // the state or the data plane refused the route
)

// refusalSummaryEvery is the least time between two summary lines of one reason.
const refusalSummaryEvery = 10 * time.Second

// RefusalReasons are the reasons, each counted from the start.
var RefusalReasons = []string{RefusedRTNotImported, RefusedLocalPrefix, RefusedBadSID, RefusedOwnSID, RefusedNotInstallable}

// refusals counts refused routes by reason and holds what the next summary line of each says.
type refusals struct {
	total   map[string]uint64
	pending map[string]uint64 // since the last line
	example map[string]string // the last one's detail
	last    map[string]time.Time
	timer   map[string]*time.Timer // a summary waiting for its interval to end
	every   time.Duration          // refusalSummaryEvery (shorter in tests)
}

// refused counts one learned route refused for reason (one of the Refused* labels; another string
// is counted under it as it is) with detail saying which route and why (for the log), and logs a
// summary per reason at most every 10 s. The importer calls it once per route and tenant it refuses.
func (s *Speaker) refused(reason, detail string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := &s.refusal
	if r.total == nil {
		r.total, r.pending, r.example = map[string]uint64{}, map[string]uint64{}, map[string]string{}
		r.last, r.timer = map[string]time.Time{}, map[string]*time.Timer{}
	}
	r.total[reason]++
	r.pending[reason]++
	if detail != "" {
		r.example[reason] = detail
	}
	now := time.Now()
	if r.every == 0 {
		r.every = refusalSummaryEvery
	}
	if wait := r.every - now.Sub(r.last[reason]); wait > 0 {
		if r.timer[reason] == nil {
			r.timer[reason] = time.AfterFunc(wait, func() {
				s.mu.Lock()
				defer s.mu.Unlock()
				delete(s.refusal.timer, reason)
				s.summarizeRefusals(reason, time.Now())
			})
		}
		return
	}
	s.summarizeRefusals(reason, now)
}

// summarizeRefusals logs the refusals of reason since its last line (s.mu held).
func (s *Speaker) summarizeRefusals(reason string, now time.Time) {
	r := &s.refusal
	n := r.pending[reason]
	if n == 0 {
		return
	}
	level := slog.LevelWarn
	if reason == RefusedRTNotImported || reason == RefusedOwnSID {
		level = slog.LevelInfo // what route targets and reflection make ordinary
	}
	attrs := []slog.Attr{slog.String("reason", reason), slog.Uint64("count", n), slog.Uint64("total", r.total[reason])}
	if !r.last[reason].IsZero() {
		attrs = append(attrs, slog.Duration("since", now.Sub(r.last[reason]).Round(time.Second)))
	}
	if ex := r.example[reason]; ex != "" {
		attrs = append(attrs, slog.String("example", ex))
	}
	s.log.LogAttrs(context.Background(), level, "bgp routes refused", attrs...)
	r.pending[reason], r.last[reason] = 0, now
	delete(r.example, reason)
}

// refusedTotals is the count of refused routes by reason since the start, every known reason
// included.
func (s *Speaker) refusedTotals() map[string]uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := maps.Clone(s.refusal.total)
	if out == nil {
		out = map[string]uint64{}
	}
	for _, r := range RefusalReasons {
		out[r] += 0
	}
	return out
}

// flushRefusals logs the summaries still waiting for their interval (the speaker stops).
func (s *Speaker) flushRefusals() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, reason := range slices.Sorted(maps.Keys(s.refusal.timer)) {
		s.refusal.timer[reason].Stop()
		delete(s.refusal.timer, reason)
		s.summarizeRefusals(reason, time.Now())
	}
}
