// Package state is the commit engine of seg6x's object model (internal/model): the Store validates
// changes, keeps the running state (indexed, saved as snapshot + journal) and plans what the data plane
// must hold, in its own terms (dataplane.go); a Dataplane (internal/dataplane's BPF maps, or a fake in
// tests) encodes and writes it. The package touches no BPF, so its tests run without root. Every front
// end changes state through the core controller (internal/core), which calls Store.Commit (Apply turns
// a whole desired state into one Commit).
package state

// store.go: one seg6x instance (a directory holding the saved state and a lock, and the data plane
// that forwards by it) and the two ways to change it: Commit (a batch of operations, applied whole or
// not at all) and Apply (a whole desired state, turned into operations by plan.go).

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/seg6x/seg6x/internal/model"
	"golang.org/x/sys/unix"
)

// DefaultDir is the state directory used when none is given.
const DefaultDir = "/run/seg6x"

// Store is an open, locked instance.
type Store struct {
	Dir  string
	Env  Env
	dp   Dataplane
	lock *os.File
	rt   *runtime
	gen  uint64

	defaultNextHopCacheMs uint32 // OpenOptions.DefaultNextHopCacheMs

	// NewMaps is set when Open found a fresh data plane for a saved state (an upgrade that changed
	// the map layout, or a lost bpffs) and filled it: what that did.
	NewMaps *ReconcileReport

	snapshotBytes, journalBytes int64
	maint                       sync.Mutex // CompactIfDue (from a timer) against Close
	closed                      bool
}

// ErrLocked is returned by Open with NoWait or Wait when another process holds the instance.
var ErrLocked = fmt.Errorf("the instance is in use by another seg6x process")

// OpenOptions change how Open behaves.
type OpenOptions struct {
	NoWait bool // fail with ErrLocked instead of waiting for the lock
	// Wait, when set (and not NoWait), bounds the wait for the lock: ErrLocked after this long.
	Wait time.Duration
	// Waiting, when set, is called once if the lock is held by another process and Open waits for it.
	Waiting func()
	// DefaultNextHopCacheMs is the next-hop cache time programs loaded through this store get when
	// the state's nexthop_cache_ms is 0: the daemon, which invalidates the cache on every netlink
	// change, passes its --nexthop-cache-ms; the in-process CLI passes 0 (off).
	DefaultNextHopCacheMs uint32
	// Dataplane opens the data plane of instance dir once the instance is locked (the BPF one:
	// internal/dataplane.OpenStore sets it; tests pass a fake).
	Dataplane func(dir string) (Dataplane, error)
}

// Open locks instance dir (waiting for other seg6x commands), loads its state and opens its data
// plane through dp.
func Open(dir string, env Env, dp func(dir string) (Dataplane, error)) (*Store, error) {
	return OpenWith(dir, env, OpenOptions{Dataplane: dp})
}

// OpenWith is Open with options.
func OpenWith(dir string, env Env, o OpenOptions) (*Store, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	lf, err := lockFile(LockPath(dir), o)
	if err != nil {
		return nil, err
	}
	st := &Store{Dir: dir, Env: env, lock: lf, defaultNextHopCacheMs: o.DefaultNextHopCacheMs}
	if err := st.load(); err != nil {
		st.Close()
		return nil, err
	}
	if fi, err := os.Stat(st.snapshotPath()); err == nil {
		st.snapshotBytes = fi.Size()
	}
	if fi, err := os.Stat(st.journalPath()); err == nil {
		st.journalBytes = fi.Size()
	}
	if o.Dataplane == nil {
		st.Close()
		return nil, fmt.Errorf("open %s: no data plane given", dir)
	}
	dp, err := o.Dataplane(dir)
	if err != nil {
		st.Close()
		return nil, err
	}
	st.dp = dp
	// A data plane just created for a saved state (this version's map layout is new, or bpffs was
	// lost): fill it and move the links to this version's program before anything else happens.
	if dp.Fresh() && total(st.rt.counts()) > 0 {
		rep, err := st.Reconcile()
		if err != nil {
			st.Close()
			return nil, fmt.Errorf("filling new maps from the saved state: %w", err)
		}
		st.NewMaps = rep
	}
	return st, nil
}

// LockPath is the file whose flock(2) makes a process the owner of instance dir.
func LockPath(dir string) string { return filepath.Join(dir, "lock") }

// lockPoll is how often a bounded wait (OpenOptions.Wait) tries the lock again.
const lockPoll = 20 * time.Millisecond

// lockFile opens and locks path: at once or ErrLocked (o.NoWait), within o.Wait or ErrLocked, or
// whenever the holder lets go (neither set).
func lockFile(path string, o OpenOptions) (*os.File, error) {
	lf, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if !o.NoWait && o.Wait <= 0 && o.Waiting == nil {
		err = unix.Flock(int(lf.Fd()), unix.LOCK_EX)
	} else {
		err = flockWithin(lf, o)
	}
	if err != nil {
		lf.Close()
		if !errors.Is(err, ErrLocked) {
			err = fmt.Errorf("lock %s: %w", path, err)
		}
		return nil, err
	}
	return lf, nil
}

// flockWithin tries the lock without blocking until it is free or the wait o allows is over.
func flockWithin(lf *os.File, o OpenOptions) error {
	deadline := time.Now().Add(o.Wait)
	for first := true; ; first = false {
		err := unix.Flock(int(lf.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err != unix.EWOULDBLOCK {
			return err // nil: ours
		}
		left := time.Until(deadline)
		switch {
		case o.NoWait:
			return ErrLocked
		case o.Wait > 0 && left <= 0:
			return fmt.Errorf("%w (still held after %v)", ErrLocked, o.Wait)
		}
		if first && o.Waiting != nil {
			o.Waiting()
		}
		sleep := lockPoll
		if o.Wait > 0 {
			sleep = min(sleep, left)
		}
		time.Sleep(sleep)
	}
}

// Dataplane is the data plane the store writes.
func (s *Store) Dataplane() Dataplane { return s.dp }

// Observer is the store's data plane as front ends read it: counters, traces, explanations.
func (s *Store) Observer() Observer { return s.dp }

// Close releases the data plane and the lock.
func (s *Store) Close() {
	s.maint.Lock()
	defer s.maint.Unlock()
	s.closed = true
	if s.dp != nil {
		s.dp.Close()
		s.dp = nil
	}
	if s.lock != nil {
		s.lock.Close()
		s.lock = nil
	}
}

func total(c Counts) int { return c.Interfaces + c.Tenants + c.Routes4 + c.Routes6 + c.SIDs }

// Gen counts the commits made to this instance; a commit can require it unchanged (optimistic locking).
func (s *Store) Gen() uint64 { return s.gen }

// Counts returns the number of objects of each kind.
func (s *Store) Counts() Counts { return s.rt.counts() }

// Current returns the running state (O(objects); sorted).
func (s *Store) Current() model.State { return s.rt.state() }

// Ports is how frames from every (interface, VLAN) are treated at the SR domain boundary.
func (s *Store) Ports() []model.PortClass {
	return model.Classify(s.rt.ifaceList(), s.rt.tenantList(), s.rt.vxlanList())
}

// Domain is the SR domain's locators and sources.
func (s *Store) Domain() model.Domain { return cloneDomain(s.rt.domain) }

// OpError says which operation of a batch failed.
type OpError struct {
	Index int // 0-based position in the batch
	Op    Op
	Err   error
}

func (e *OpError) Error() string {
	return fmt.Sprintf("operation %d (%s): %v", e.Index+1, e.Op.Kind, e.Err)
}
func (e *OpError) Unwrap() error { return e.Err }

// Commit applies ops as one unit: every operation is checked against the state the ones before it
// leave, then the maps are written in a safe order. On any error nothing is changed (written map
// entries are restored). With dryRun nothing is written; the returned Diff says what would change.
func (s *Store) Commit(ops []Op, dryRun bool) (*model.Diff, error) {
	return s.CommitWith(ops, CommitOptions{DryRun: dryRun})
}

// CommitOptions say how a commit is made and reported.
type CommitOptions struct {
	DryRun bool
	// DiffLimit, when not 0, lists at most that many objects in each of the diff's lists and counts
	// the rest (Diff.More*): a bulk load of a million routes need not hear them back one by one.
	DiffLimit int
}

// CommitWith is Commit with options.
func (s *Store) CommitWith(ops []Op, o CommitOptions) (*model.Diff, error) {
	dryRun := o.DryRun
	c := newChange(s.rt, ops, o.DiffLimit)
	if err := s.applyAll(c, ops); err != nil {
		c.rollback()
		return nil, err
	}
	if dryRun || c.diff.Empty() {
		c.rollback()
		return c.diff, nil
	}
	// The journal line is made (from the state as this commit leaves it, read only) while the kernel
	// takes the map writes: on two CPUs a big commit costs the longer of the two, not both.
	steps := s.steps(c)
	line := s.startJournalLine(c)
	undo, err := s.dp.Apply(steps)
	b, lerr := line()
	if err != nil {
		c.rollback()
		return nil, &model.WriteError{Err: err}
	}
	if err := s.appendJournal(b, lerr); err != nil {
		err = fmt.Errorf("saving state: %w", err)
		if uerr := undo(); uerr != nil {
			err = fmt.Errorf("%w (and restoring the data plane failed: %v)", err, uerr)
		}
		c.rollback()
		return nil, &model.WriteError{Err: err}
	}
	s.gen++
	s.releaseIDs(c)
	if err := s.compactIfLarge(); err != nil {
		return c.diff, fmt.Errorf("applied, but writing the state snapshot failed: %w", err)
	}
	return c.diff, nil
}

// releaseIDs returns the ids a successful commit stopped using (after their quarantine).
func (s *Store) releaseIDs(c *change) {
	rt := s.rt
	for p := range c.pols {
		if p.refs == 0 && rt.polByID[p.id] == p {
			delete(rt.policies, p.key)
			delete(rt.polByID, p.id)
			rt.polIDs.release(p.id, true)
		}
	}
	for name, sb := range c.swapped {
		if t := rt.tenants[name]; t == nil || t.tableID != sb.tableID {
			rt.tableIDs.release(sb.tableID, true)
		}
	}
	for name, b := range c.tenants {
		if b.had && rt.tenants[name] == nil && c.swapped[name] == nil {
			rt.tableIDs.release(b.tableID, true)
		}
	}
	for addr, b := range c.sids {
		if b.had {
			if sd, ok := rt.sids[addr]; !ok || sd.ID != b.sid.ID {
				rt.sidIDs.release(b.sid.ID, true)
			}
		}
	}
	for name, b := range c.plugins {
		if now := rt.plugins[name]; b.had && (now == nil || now.slot != b.p.slot) {
			rt.pluginSlots.release(b.p.slot, true)
		}
	}
	inUse := map[uint32]bool{}
	for addr := range c.sids {
		if sd, ok := rt.sids[addr]; ok && sd.Bind != 0 {
			inUse[sd.Bind] = true
		}
	}
	for _, b := range c.sids {
		if b.had && b.sid.Bind != 0 && !inUse[b.sid.Bind] {
			delete(rt.pluginCfg, b.sid.Bind)
			delete(rt.pluginPolicies, b.sid.Bind)
			rt.pluginBinds.release(b.sid.Bind, true)
		}
	}
	for _, bind := range c.newBinds { // handed out, then replaced within the same commit
		if !inUse[bind] {
			delete(rt.pluginCfg, bind)
			delete(rt.pluginPolicies, bind)
			rt.pluginBinds.release(bind, false)
		}
	}
	for name, b := range c.named {
		if b.had && rt.named[name] == nil {
			rt.groupIDs.release(b.gids[0], true)
			rt.groupIDs.release(b.gids[1], true)
		}
	}
}

// Apply makes desired the running state: the file-level checks, then the difference as operations
// (a tenant whose routes differ gets its whole table swapped, so the change is atomic), committed.
func (s *Store) Apply(desired model.State, dryRun bool) (*model.Diff, error) {
	next := clone(&desired)
	if err := model.Validate(&next); err != nil {
		return nil, err
	}
	return s.Commit(s.Plan(&next), dryRun)
}

// Preview runs f on the store as it would be after Apply(desired): the same checks and plan, held
// in memory only (nothing is written to the data plane or the disk, no id is released), then
// undone. f reads the store (Image, Tenants, TableIDOf, ...) and must not change it. The Diff says
// what Apply would change.
func (s *Store) Preview(desired model.State, f func(st *Store)) (*model.Diff, error) {
	next := clone(&desired)
	if err := model.Validate(&next); err != nil {
		return nil, err
	}
	plan := s.Plan(&next)
	c := newChange(s.rt, plan, 0)
	defer c.rollback()
	for i, op := range plan {
		if err := s.apply(c, op); err != nil {
			return nil, &OpError{Index: i, Op: op, Err: err}
		}
	}
	if err := s.finish(c); err != nil {
		return nil, err
	}
	f(s)
	return c.diff, nil
}

// PolicyInfo describes one shared SR policy.
type PolicyInfo struct {
	ID      uint32
	Mode    string
	Segs    []netip.Addr
	UsedSrc netip.Addr
	Routes  int      // routes that use it
	SIDs    int      // binding SIDs bound to it
	Lists   []string // the lists of named policies that are it ("NAME list N"), sorted
}

// Policies lists the policies in use, by id.
func (s *Store) Policies() []PolicyInfo {
	bound, lists := map[uint32]int{}, map[uint32][]string{}
	for _, sd := range s.rt.sids {
		if sd.Policy != 0 {
			bound[sd.Policy]++
		}
	}
	for _, n := range s.rt.named {
		for fam := range 2 {
			for i, m := range n.members[fam] {
				lists[m.id] = append(lists[m.id], fmt.Sprintf("%s list %d", n.Name, i))
			}
		}
	}
	out := make([]PolicyInfo, 0, len(s.rt.polByID))
	for _, p := range s.rt.polByID {
		l := lists[p.id]
		slices.Sort(l)
		out = append(out, PolicyInfo{ID: p.id, Mode: p.mode, Segs: p.segs, UsedSrc: p.usedSrc, Routes: p.refs - bound[p.id] - len(l),
			SIDs: bound[p.id], Lists: l})
	}
	slices.SortFunc(out, func(a, b PolicyInfo) int { return int(a.ID) - int(b.ID) })
	return out
}

// SIDs lists the local SIDs, sorted.
func (s *Store) SIDs() []model.SID {
	out := make([]model.SID, 0, len(s.rt.sids))
	for _, sd := range s.rt.sids {
		out = append(out, sd)
	}
	slices.SortFunc(out, func(a, b model.SID) int { return a.SID.Compare(b.SID) })
	return out
}

// Interfaces lists the attached interfaces, sorted.
func (s *Store) Interfaces() []model.Interface {
	out := make([]model.Interface, 0, len(s.rt.ifaces))
	for _, it := range s.rt.ifaces {
		out = append(out, it)
	}
	slices.SortFunc(out, func(a, b model.Interface) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// EachRoute calls f for every route (unsorted), O(routes) without building a State.
func (s *Store) EachRoute(f func(r model.Route) bool) {
	for _, t := range s.rt.tenants {
		for p, id := range t.routes.all {
			if !f(routeView(t, p, s.rt.policyOf(id))) {
				return
			}
		}
	}
}

// Tenants lists the tenants without their routes, sorted.
func (s *Store) Tenants() []model.Tenant {
	out := make([]model.Tenant, 0, len(s.rt.tenants))
	vpnSIDs := s.rt.vpnSIDs()
	for _, t := range s.rt.tenants {
		out = append(out, t.view(vpnSIDs))
	}
	slices.SortFunc(out, func(a, b model.Tenant) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// TenantOfTableID names the tenant whose data plane route table is id (the port entries' table_id;
// "" when none is).
func (s *Store) TenantOfTableID(id uint32) string {
	for name, t := range s.rt.tenants {
		if t.tableID == id {
			return name
		}
	}
	return ""
}

// TableIDOf is the data plane route table of tenant name (false: no such tenant).
func (s *Store) TableIDOf(name string) (uint32, bool) {
	t := s.rt.tenants[name]
	if t == nil {
		return 0, false
	}
	return t.tableID, true
}

// TenantRoutes returns the routes of one tenant by prefix (nil for an unknown tenant).
func (s *Store) TenantRoutes(name string) map[netip.Prefix]model.Route {
	t := s.rt.tenants[name]
	if t == nil {
		return nil
	}
	out := make(map[netip.Prefix]model.Route, t.routes.len())
	for p, id := range t.routes.all {
		out[p] = routeView(t, p, s.rt.policyOf(id))
	}
	return out
}
