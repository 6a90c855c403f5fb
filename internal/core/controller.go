// Package core is the one controller every front end changes seg6x through: the gRPC API server, the
// daemon's config apply and link watcher, the kernel mirror and (next) BGP call it directly. It holds
// the store under one lock, checks the generation a change was made for, keeps the last error, and
// tells subscribers what changed and who changed it. Every commit passes through it, so it also counts
// them (observe.go) and reports each one to the daemon's audit log. The gRPC server is a thin adapter
// over it.
package core

// controller.go: the Controller, its sessions (the store under the lock) and change notifications.

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/seg6x/seg6x/internal/model"
	"github.com/seg6x/seg6x/internal/state"
)

// Controller serialises every read and change of one open store.
type Controller struct {
	mu      sync.Mutex
	st      *state.Store
	lastErr string
	errors  uint64

	subMu   sync.Mutex
	subs    []func(Change)
	audits  []func(Record) // OnCommit
	commits commitStats    // observe.go

	idle    *time.Timer  // folds the store's journal into a snapshot once commits pause (compactLater)
	waiting atomic.Int32 // changes waiting for mu (lock): the snapshot being written gives way to them
}

// lock takes c.mu for a change (Do), counted in waiting while it waits. Reads wait for a snapshot
// being written instead: a status poll more often than a snapshot takes would otherwise starve it.
func (c *Controller) lock() {
	c.waiting.Add(1)
	c.mu.Lock()
	c.waiting.Add(-1)
}

// compactAfterIdle is the pause in commits after which a journal due for it is folded into a new
// snapshot (state.Store.CompactIfDue): not during a bulk load, whose commits would each wait for it.
const compactAfterIdle = 300 * time.Millisecond

// New controls st (already open and locked against other processes).
func New(st *state.Store) *Controller { return &Controller{st: st} }

// Options say how a change is made.
type Options struct {
	// Origin is who asks (state.OriginConfig for the API and config files, state.OriginKernel,
	// ...): a change may only touch objects of its own origin. Set on every operation of the batch.
	Origin model.Origin
	DryRun bool
	// DiffLimit, when not 0, lists at most that many objects per list of the diff and counts the
	// rest (state.CommitOptions.DiffLimit).
	DiffLimit int
	// IfGeneration, when not 0, refuses the change unless the running state is still that
	// generation (optimistic locking: a client read the state, then asks for a change).
	IfGeneration uint64
	// Via names the front end that asks when Origin alone does not say it ("config": the daemon's
	// --config file; "links": its interface watcher). Metrics and the audit line name the commit by
	// it, else by Origin ("api", "kernel", "bgp").
	Via string
}

// Result is what a change did.
type Result struct {
	Diff       *model.Diff
	Generation uint64
}

// Change is what subscribers are told after a change was applied (never for dry runs or empty
// diffs).
type Change struct {
	Origin     model.Origin
	Diff       *model.Diff
	Generation uint64
}

// Subscribe calls f after every applied change, outside the lock, in commit order. f must not block.
func (c *Controller) Subscribe(f func(Change)) {
	c.subMu.Lock()
	defer c.subMu.Unlock()
	c.subs = append(c.subs, f)
}

// Session is the store under the controller's lock, for a front end that reads and then changes it
// as one step (the kernel mirror compares the store with the kernel, then commits the difference).
type Session struct {
	c       *Controller
	Store   *state.Store // read through its methods; change only through Session.Commit / Apply
	changes []Change
	records []Record // every commit's, applied or not, for OnCommit
}

// Do runs f with the store under the lock; the commits f makes are reported (OnCommit) and the
// changes announced once f returns.
func (c *Controller) Do(f func(s *Session)) {
	s := &Session{c: c, Store: c.st}
	c.lock()
	func() {
		defer c.mu.Unlock()
		f(s)
		if len(s.changes) > 0 && c.st.CompactDue() {
			c.compactLater()
		}
	}()
	c.audit(s.records)
	c.announce(s.changes)
}

// compactLater (re)arms the idle timer: the journal is folded compactAfterIdle after the last
// commit. The fold gives way to a change that comes for the lock meanwhile (and is tried again after
// the next pause), so that it never holds up a commit. Called with c.mu held.
func (c *Controller) compactLater() {
	if c.idle == nil {
		c.idle = time.AfterFunc(compactAfterIdle, func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			err := c.st.CompactIfDue(func() bool { return c.waiting.Load() > 0 })
			switch {
			case errors.Is(err, state.ErrCompactYielded):
				c.compactLater()
			case err != nil:
				c.record(fmt.Errorf("writing the state snapshot: %w", err))
			}
		})
		return
	}
	c.idle.Reset(compactAfterIdle)
}

// Read runs f with the store under the lock (a consistent view; f must not change it).
func (c *Controller) Read(f func(st *state.Store)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f(c.st)
}

// Commit applies ops as one unit (state.Store.Commit) for o.Origin.
func (c *Controller) Commit(ops []state.Op, o Options) (res Result, err error) {
	c.Do(func(s *Session) { res, err = s.Commit(ops, o) })
	return res, err
}

// Apply makes desired the running state of the API's and config files' objects (state.Store.Apply:
// a config file); objects of other origins are left alone.
func (c *Controller) Apply(desired model.State, o Options) (res Result, err error) {
	c.Do(func(s *Session) { res, err = s.Apply(desired, o) })
	return res, err
}

// Commit applies ops within the session.
func (s *Session) Commit(ops []state.Op, o Options) (Result, error) {
	t0 := time.Now()
	if err := s.checkGen(o.IfGeneration); err != nil {
		return s.done(nil, err, o, t0)
	}
	for i := range ops {
		ops[i].Origin = o.Origin
	}
	d, err := s.Store.CommitWith(ops, state.CommitOptions{DryRun: o.DryRun, DiffLimit: o.DiffLimit})
	return s.done(d, err, o, t0)
}

// Apply makes desired the running state of the API's and config files' objects within the session.
func (s *Session) Apply(desired model.State, o Options) (Result, error) {
	t0 := time.Now()
	if o.Origin != model.OriginConfig {
		return s.done(nil, fmt.Errorf("a whole state is applied for the API and config files, not for origin %s", o.Origin), o, t0)
	}
	if err := s.checkGen(o.IfGeneration); err != nil {
		return s.done(nil, err, o, t0)
	}
	d, err := s.Store.Apply(desired, o.DryRun)
	return s.done(d, err, o, t0)
}

func (s *Session) checkGen(g uint64) error {
	if g == 0 || g == s.Store.Gen() {
		return nil
	}
	return &StaleError{Have: s.Store.Gen(), Want: g}
}

// done ends a commit begun at t0: counts it, keeps its record for OnCommit, records its error or
// queues its change.
func (s *Session) done(d *model.Diff, err error, o Options, t0 time.Time) (Result, error) {
	rec := Record{Origin: o.name(), DryRun: o.DryRun, Diff: d, Err: err, Generation: s.Store.Gen(), Duration: time.Since(t0)}
	rec.Result = resultOf(err, o.DryRun)
	s.c.commits.add(rec)
	s.records = append(s.records, rec)
	if err != nil {
		return Result{}, s.c.record(err)
	}
	res := Result{Diff: d, Generation: s.Store.Gen()}
	if !o.DryRun && !d.Empty() {
		s.changes = append(s.changes, Change{Origin: o.Origin, Diff: d, Generation: res.Generation})
	}
	return res, nil
}

// Fail records err as the last error (for a front end that failed before reaching the controller:
// a request it could not decode) and returns it.
func (c *Controller) Fail(err error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.record(err)
}

// record keeps err as the last error; called with c.mu held.
func (c *Controller) record(err error) error {
	msg := err.Error()
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i] + " ..."
	}
	c.lastErr = time.Now().UTC().Format(time.RFC3339) + " " + msg
	c.errors++
	return err
}

// LastError is the last refused or failed change ("" if none) and how many there were.
func (c *Controller) LastError() (string, uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lastErr, c.errors
}

func (c *Controller) announce(changes []Change) {
	if len(changes) == 0 {
		return
	}
	c.subMu.Lock()
	subs := append([]func(Change){}, c.subs...)
	c.subMu.Unlock()
	for _, ch := range changes {
		for _, f := range subs {
			f(ch)
		}
	}
}

// StaleError refuses a change made for another generation than the running one.
type StaleError struct{ Have, Want uint64 }

func (e *StaleError) Error() string {
	return fmt.Sprintf("generation is %d, not %d: the state changed since it was read", e.Have, e.Want)
}
