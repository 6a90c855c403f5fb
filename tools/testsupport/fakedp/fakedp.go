// Package fakedp is an in-memory data plane (state.Dataplane) for tests without root or BPF. It
// takes every step and holds no tables; what it observes (state.Observer) is what the test gives it:
// counters, the records a trace yields, the record an explanation returns. A package of its own (it
// imports only internal/state), so that tests of internal/api and internal/core can use it.
package fakedp

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/seg6x/seg6x/internal/state"
)

// Dataplane is a data plane that writes nothing and observes what its fields say.
type Dataplane struct {
	mu        sync.Mutex
	counters  state.Stats
	records   []*state.TraceRecord
	explained *state.TraceRecord
	steps     int
	nhInvalid int
	filters   []state.TraceFilter
}

// OpenStore opens a store of instance dir on a Dataplane (no root needed); it is closed when
// the test ends.
func OpenStore(t testing.TB, dir string, env state.Env) (*state.Store, *Dataplane) {
	t.Helper()
	f := &Dataplane{}
	st, err := state.OpenWith(dir, env, state.OpenOptions{Dataplane: func(string) (state.Dataplane, error) { return f, nil }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	return st, f
}

// SetStats sets the counters Stats returns (ids not in them count zero).
func (f *Dataplane) SetStats(s state.Stats) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.counters = s
}

// AddTraceRecords queues records for the traces to yield, in order.
func (f *Dataplane) AddTraceRecords(rs ...*state.TraceRecord) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.records = append(f.records, rs...)
}

// SetExplained sets the record Explain returns (nil: Explain fails).
func (f *Dataplane) SetExplained(r *state.TraceRecord) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.explained = r
}

// TraceFilters are the filters of the traces started so far.
func (f *Dataplane) TraceFilters() []state.TraceFilter {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]state.TraceFilter(nil), f.filters...)
}

// NextHopInvalidations is how many times the next hops were invalidated.
func (f *Dataplane) NextHopInvalidations() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.nhInvalid
}

// Apply takes every step; undo does nothing.
func (f *Dataplane) Apply(steps []state.Step) (func() error, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.steps += len(steps)
	return func() error { return nil }, nil
}

// Reconcile reports nothing done.
func (f *Dataplane) Reconcile(*state.Image, state.ProgramOptions) (*state.ReconcileReport, error) {
	return &state.ReconcileReport{}, nil
}

func (f *Dataplane) Fresh() bool { return false }
func (f *Dataplane) Close()      {}

// Stats returns the counters set, each action and reason the test named, and zero for other ids.
// PluginStats counts nothing: every plugin and plugin SID asked for has zero counters.
func (f *Dataplane) PluginStats(slots []uint32, binds []state.PluginBind) (*state.PluginStats, error) {
	out := &state.PluginStats{Slots: map[uint32]state.PluginCounters{}, Binds: map[uint32][]state.Counter{}, Own: map[uint32][]state.Counter{}}
	for _, s := range slots {
		out.Slots[s] = state.PluginCounters{Outcomes: make([]state.Counter, len(state.PluginOutcomes)), Reasons: make([]state.Counter, 16)}
	}
	for _, b := range binds {
		out.Binds[b.Bind] = make([]state.Counter, len(state.PluginOutcomes))
		out.Own[b.Bind] = make([]state.Counter, b.Counters)
	}
	return out, nil
}

func (f *Dataplane) Stats(policies, sids []uint32) (*state.Stats, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := &state.Stats{Actions: map[string]state.Counter{}, Reasons: map[string]state.Counter{},
		Policies: map[uint32]state.Counter{}, SIDs: map[uint32]state.Counter{}}
	for k, v := range f.counters.Actions {
		out.Actions[k] = v
	}
	for k, v := range f.counters.Reasons {
		out.Reasons[k] = v
	}
	for _, id := range policies {
		out.Policies[id] = f.counters.Policies[id]
	}
	for _, id := range sids {
		out.SIDs[id] = f.counters.SIDs[id]
	}
	return out, nil
}

// Trace yields the queued records (every one: the fake does not filter), then none.
func (f *Dataplane) Trace(filter state.TraceFilter, _ state.ProgramOptions) (state.TraceSession, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.filters = append(f.filters, filter)
	s := &fakeTrace{records: f.records}
	f.records = nil
	return s, nil
}

// Explain returns the record set, with the frame given as its input.
func (f *Dataplane) Explain(ifindex uint32, frame []byte, _ state.ExplainOptions) (*state.TraceRecord, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.explained == nil {
		return nil, errors.New("the fake data plane has no explanation set")
	}
	r := *f.explained
	r.Ifindex, r.Rx = ifindex, frame
	return &r, nil
}

// InvalidateNextHops counts the call.
func (f *Dataplane) InvalidateNextHops() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nhInvalid++
	return nil
}

// fakeTrace yields its records, then waits out every deadline.
type fakeTrace struct {
	records []*state.TraceRecord
	sent    uint64
	closed  bool
}

func (s *fakeTrace) Programs() int { return 1 }
func (s *fakeTrace) Close()        { s.closed = true }

func (s *fakeTrace) Next(deadline time.Time) (*state.TraceRecord, error) {
	if s.closed {
		return nil, os.ErrClosed
	}
	if len(s.records) > 0 {
		r := s.records[0]
		s.records = s.records[1:]
		s.sent++
		return r, nil
	}
	time.Sleep(time.Until(deadline))
	return nil, fmt.Errorf("fake trace: %w", os.ErrDeadlineExceeded)
}

func (s *fakeTrace) Summary() (state.TraceSummary, error) {
	return state.TraceSummary{Matched: s.sent, Emitted: s.sent}, nil
}
