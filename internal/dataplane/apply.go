package dataplane

// apply.go: runs the steps of one commit (state.Step) against the maps and links, batched for large
// changes, each with its undo; a failed step undoes every step before it.

import (
	"errors"
	"fmt"
	"net/netip"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cilium/ebpf"
	"github.com/seg6x/seg6x/internal/state"
)

func msDuration(ms uint32) time.Duration { return time.Duration(ms) * time.Millisecond }

type txn struct {
	undo []func() error
	// restorable: the entries written carry what the maps held before (had, old), so a batch that
	// fails part way is undone at once (doPart). Apply's are; Reconcile's syncs are not (they make
	// the maps match the image and report a failure, with nothing to go back to).
	restorable bool
}

func (t *txn) do(desc string, f, undo func() error) error {
	if err := f(); err != nil {
		return fmt.Errorf("%s: %w", desc, err)
	}
	t.undo = append(t.undo, undo)
	return nil
}

// doPart is do for an f that may fail part way (a batch of map writes, some made): in a restorable
// txn, undo, which must be harmless for the part not done, also runs when f fails, and both errors
// are reported.
func (t *txn) doPart(desc string, f, undo func() error) error {
	if err := f(); err != nil {
		if !t.restorable {
			return fmt.Errorf("%s: %w", desc, err)
		}
		if uerr := undo(); uerr != nil {
			return fmt.Errorf("%s: %w (and undoing the part written: %v)", desc, err, uerr)
		}
		return fmt.Errorf("%s: %w", desc, err)
	}
	t.undo = append(t.undo, undo)
	return nil
}

func (t *txn) rollback() error {
	var errs []error
	for i := len(t.undo) - 1; i >= 0; i-- {
		if err := t.undo[i](); err != nil {
			errs = append(errs, err)
		}
	}
	t.undo = nil
	return errors.Join(errs...)
}

// entry is one map write: key k gets v (or is deleted), and had/old say what to restore.
type entry[K, V any] struct {
	k   K
	v   V
	old V
	had bool
}

const batchSize = 8192

// putBatch writes es in batches; undo restores the old values and removes new keys (a batch that
// fails part way is undone at once: the kernel may have written its first entries). A large write
// goes over the CPUs: the kernel's insert (a hash bucket missed in cache, an element allocated) is
// most of a big commit's time, and the buckets take writers in parallel. es's keys are distinct
// (a step writes each key once), so the order between batches does not matter.
func putBatch[K, V any](t *txn, m *ebpf.Map, es []entry[K, V]) error {
	nb := (len(es) + batchSize - 1) / batchSize
	errs := make([]error, nb)
	write := func(b int) {
		chunk := es[b*batchSize : min((b+1)*batchSize, len(es))]
		keys := make([]K, len(chunk))
		vals := make([]V, len(chunk))
		for i, e := range chunk {
			keys[i], vals[i] = e.k, e.v
		}
		if len(chunk) > 1 {
			if _, err := m.BatchUpdate(keys, vals, nil); !errors.Is(err, ebpf.ErrNotSupported) {
				errs[b] = err
				return
			}
		}
		for i := range keys { // a batch of one, or a map type without batch updates (devmaps)
			if err := m.Update(keys[i], vals[i], ebpf.UpdateAny); err != nil {
				errs[b] = err
				return
			}
		}
	}
	tried := nb // the batches written or tried
	if workers := min(nb, runtime.GOMAXPROCS(0), maxWriters); workers > 1 {
		var wg sync.WaitGroup
		next := atomic.Int32{}
		for range workers {
			wg.Go(func() {
				for b := int(next.Add(1)) - 1; b < nb; b = int(next.Add(1)) - 1 {
					write(b)
				}
			})
		}
		wg.Wait()
	} else {
		for b := range nb {
			if write(b); errs[b] != nil {
				tried = b + 1 // the batches after it are not written
				break
			}
		}
	}
	// Each batch as doPart would have taken it: written, its undo kept; failed, undone at once.
	var first error
	for b := range tried {
		chunk := es[b*batchSize : min((b+1)*batchSize, len(es))]
		err := t.doPart(fmt.Sprintf("write %d entries to %s", len(chunk), m), func() error { return errs[b] },
			func() error { return restore(m, chunk) })
		if err != nil && first == nil {
			first = err
		}
	}
	return first
}

// maxWriters bounds the goroutines of one large map write.
const maxWriters = 4

// deleteBatch removes es (a key already gone is not an error); undo puts the old values back.
func deleteBatch[K, V any](t *txn, m *ebpf.Map, es []entry[K, V]) error {
	for lo := 0; lo < len(es); lo += batchSize {
		chunk := es[lo:min(lo+batchSize, len(es))]
		keys := make([]K, len(chunk))
		for i, e := range chunk {
			keys[i] = e.k
		}
		err := t.doPart(fmt.Sprintf("delete %d entries from %s", len(chunk), m), func() error {
			if len(chunk) > 1 {
				if _, err := m.BatchDelete(keys, nil); err == nil {
					return nil
				}
			}
			for _, k := range keys { // one by one: some were already gone, or a batch of one
				if err := m.Delete(k); err != nil && !errors.Is(err, ebpf.ErrKeyNotExist) {
					return err
				}
			}
			return nil
		}, func() error { return restore(m, chunk) })
		if err != nil {
			return err
		}
	}
	return nil
}

func restore[K, V any](m *ebpf.Map, es []entry[K, V]) error {
	var errs []error
	for _, e := range es {
		var err error
		if e.had {
			err = m.Update(e.k, e.old, ebpf.UpdateAny)
		} else if err = m.Delete(e.k); errors.Is(err, ebpf.ErrKeyNotExist) {
			err = nil
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// zeroCounters clears the per-CPU counters of newly assigned ids.
func zeroCounters(m *ebpf.Map, ids []uint32) error {
	n, err := ebpf.PossibleCPU()
	if err != nil {
		return err
	}
	zero := make([]Seg6xCounter, n)
	for _, id := range ids {
		if err := m.Update(id, zero, ebpf.UpdateAny); err != nil {
			return fmt.Errorf("reset counters of id %d in %s: %w", id, m, err)
		}
	}
	return nil
}

// convert encodes the entries of a step: key and value (and the old value) through kf and vf.
func convert[K, V any](es []state.Entry, kf func(any) K, vf func(any) (V, error)) ([]entry[K, V], error) {
	out := make([]entry[K, V], len(es))
	for i, e := range es {
		out[i] = entry[K, V]{k: kf(e.Key), had: e.Had}
		var err error
		if e.Val != nil {
			if out[i].v, err = vf(e.Val); err != nil {
				return nil, err
			}
		}
		if e.Had && e.Old != nil {
			if out[i].old, err = vf(e.Old); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

func ok[V any](f func(any) V) func(any) (V, error) {
	return func(a any) (V, error) { return f(a), nil }
}

// write runs one put or delete step.
func (b *BPF) write(t *txn, st state.Step) error {
	m := b.Maps
	switch st.Table {
	case state.TableTxPorts:
		es, _ := convert(st.Entries, func(a any) uint32 { return a.(uint32) }, ok(func(a any) uint32 { return a.(uint32) }))
		return putOrDelete(t, m.TxPorts, es, st.Kind)
	case state.TableSIDSpace, state.TableSIDSources:
		es, _ := convert(st.Entries, func(a any) Seg6xLpm6Key { return lpmKey(a.(netip.Prefix)) }, ok(func(any) uint8 { return 1 }))
		for i := range es {
			es[i].v, es[i].old = 1, 1
		}
		mm := m.SidSpace
		if st.Table == state.TableSIDSources {
			mm = m.SidSources
		}
		return putOrDelete(t, mm, es, st.Kind)
	case state.TablePolicies:
		es, err := convert(st.Entries, func(a any) uint32 { return a.(uint32) }, func(a any) (Seg6xEncapPolicy, error) { return OuterHeader(a.(state.PolicySpec)) })
		if err != nil {
			return err
		}
		return putOrDelete(t, m.Policies, es, st.Kind)
	case state.TableSIDs:
		var exact, byPrefix []state.Entry
		for _, e := range st.Entries {
			if e.Key.(netip.Prefix).Bits() == 128 {
				exact = append(exact, e)
			} else {
				byPrefix = append(byPrefix, e)
			}
		}
		val := ok(func(a any) Seg6xSidEntry { return SIDEntry(a.(state.SIDSpec)) })
		es, _ := convert(exact, func(a any) [16]byte { return a.(netip.Prefix).Addr().As16() }, val)
		if err := putOrDelete(t, m.Sids, es, st.Kind); err != nil {
			return err
		}
		ps, _ := convert(byPrefix, func(a any) Seg6xLpm6Key { return lpmKey(a.(netip.Prefix)) }, val)
		if len(ps) > 0 && st.Kind == state.StepPut {
			// On before the first prefix SID is written (and left on: a lookup in an empty trie costs
			// little; Reconcile turns it off when there are none).
			if err := sidsByPrefix(m.SidConf, true); err != nil {
				return err
			}
		}
		return putOrDelete(t, m.SidPrefixes, ps, st.Kind)
	case state.TableRoutes:
		r4, r6 := make([]entry[Seg6xRoute4Key, Seg6xEncapVal], 0, len(st.Routes)), []entry[Seg6xRoute6Key, Seg6xEncapVal](nil)
		for _, e := range st.Routes {
			v, old := Seg6xEncapVal{PolicyId: e.Val}, Seg6xEncapVal{PolicyId: e.Old}
			if e.Key.Prefix.Addr().Is4() {
				r4 = append(r4, entry[Seg6xRoute4Key, Seg6xEncapVal]{k: route4Key(e.Key), v: v, old: old, had: e.Had})
			} else {
				r6 = append(r6, entry[Seg6xRoute6Key, Seg6xEncapVal]{k: route6Key(e.Key), v: v, old: old, had: e.Had})
			}
		}
		if err := putOrDelete(t, m.Routes4, r4, st.Kind); err != nil {
			return err
		}
		return putOrDelete(t, m.Routes6, r6, st.Kind)
	case state.TableGroups:
		es, _ := convert(st.Entries, func(a any) uint32 { return a.(uint32) }, ok(func(a any) Seg6xPolicyGroup {
			return Seg6xPolicyGroup{Ids: a.(state.GroupSpec).Buckets}
		}))
		if st.Kind == state.StepDelete { // an array: a group that goes is zeroed (no list: dropped)
			for i := range es {
				es[i].v = Seg6xPolicyGroup{}
			}
		}
		return putBatch(t, m.PolicyGroups, es)
	case state.TablePorts:
		es, _ := convert(st.Entries, func(a any) Seg6xPortKey { return portKey(a.(state.PortKey)) }, ok(func(a any) Seg6xPortVal { return portVal(a.(state.PortSpec)) }))
		return putOrDelete(t, m.Ports, es, st.Kind)
	case state.TableVXDevs:
		es, _ := convert(st.Entries, func(a any) uint32 { return a.(uint32) }, ok(func(a any) Seg6xVxDev { return vxDev(a.(state.VXDevSpec)) }))
		return putOrDelete(t, m.VxDevs, es, st.Kind)
	case state.TableVXRx:
		es, _ := convert(st.Entries, func(a any) Seg6xVxRxKey { return vxRxKey(a.(state.VXRxKey)) }, ok(func(a any) Seg6xVxDev { return vxDev(a.(state.VXDevSpec)) }))
		return putOrDelete(t, m.VxRx, es, st.Kind)
	case state.TableVXRemotes:
		es, _ := convert(st.Entries, func(a any) Seg6xVxRemoteKey { return vxRemoteKey(a.(state.VXRemoteKey)) }, ok(func(any) uint8 { return 1 }))
		for i := range es {
			es[i].v, es[i].old = 1, 1
		}
		return putOrDelete(t, m.VxRemotes, es, st.Kind)
	case state.TableVXMACs:
		es, _ := convert(st.Entries, func(a any) Seg6xVxMacKey { return vxMACKey(a.(state.VXMACKey)) }, ok(func(a any) Seg6xVxMac { return vxMAC(a.(state.VXMACSpec)) }))
		return putOrDelete(t, m.VxMacs, es, st.Kind)
	}
	return fmt.Errorf("unknown table %d", st.Table)
}

// cacheGenTable says whether a write of table t makes answers the program caches under cache_gen
// stale: the ports (port_cache), the routes (route_cache), the SIDs (sid_cache) and the VXLAN tables
// (vx_enc_cache, vx_dec_cache). The generation is bumped right after such a write, before the next step: a route's
// policy is deleted only after the routes that led to it, so a cached answer never names a policy
// that is gone.
func cacheGenTable(t state.Table) bool {
	return t == state.TableVXDevs || t == state.TableVXRx || t == state.TableVXRemotes || t == state.TableVXMACs ||
		t == state.TablePorts || t == state.TableRoutes || t == state.TableSIDs
}

// bumpGen bumps a generation map (nh_gen, cache_gen): every cached result filled under the previous
// generation is stale.
func bumpGen(m *ebpf.Map) error {
	var gen uint64
	if err := m.Lookup(uint32(0), &gen); err != nil {
		return err
	}
	return m.Update(uint32(0), gen+1, ebpf.UpdateAny)
}

// InvalidateCachedAnswers makes every answer the program caches under cache_gen stale (for a writer
// of the tables that does not go through Apply or Reconcile: a benchmark's direct map writes).
func InvalidateCachedAnswers(m *Seg6xMaps) error { return bumpGen(m.CacheGen) }

// InvalidateNextHops makes every cached next hop stale (nh_gen), as the daemon does when a route, link
// or neighbor changes.
func InvalidateNextHops(m *Seg6xMaps) error { return bumpGen(m.NhGen) }

func putOrDelete[K, V any](t *txn, m *ebpf.Map, es []entry[K, V], kind state.StepKind) error {
	if kind == state.StepDelete {
		return deleteBatch(t, m, es)
	}
	return putBatch(t, m, es)
}

// Apply runs the steps of one commit; see state.Dataplane.
func (b *BPF) Apply(steps []state.Step) (func() error, error) {
	t := &txn{restorable: true}
	var progs *Programs
	defer func() {
		if progs != nil {
			progs.Close()
		}
	}()
	// Cached answers (cacheGenTable) go stale after their tables were written, and again after a
	// rollback restored them (bumping before the restore would let the old answers back in).
	cacheWritten := false
	rollback := func() error {
		err := t.rollback()
		if cacheWritten {
			err = errors.Join(err, bumpGen(b.Maps.CacheGen))
		}
		return err
	}
	fail := func(err error) (func() error, error) {
		if uerr := rollback(); uerr != nil {
			err = fmt.Errorf("%w (and restoring the maps failed: %v)", err, uerr)
		}
		return nil, err
	}
	for _, st := range steps {
		var err error
		switch st.Kind {
		case state.StepPut, state.StepDelete:
			cached := cacheGenTable(st.Table)
			cacheWritten = cacheWritten || cached
			if cached {
				// Undone in reverse order: this runs right after the write below is undone, before
				// the steps before it are (a rollback removes new policies only after the routes
				// that led to them are restored, and cached answers must not outlive either).
				t.undo = append(t.undo, func() error { return bumpGen(b.Maps.CacheGen) })
			}
			err = b.write(t, st)
			if err == nil && cached {
				err = bumpGen(b.Maps.CacheGen)
			}
		case state.StepResetCounters:
			m := b.Maps.PolicyStats
			if st.Table == state.TableSIDs {
				m = b.Maps.SidStats
			}
			err = zeroCounters(m, st.IDs)
		case state.StepAttach:
			it := st.Iface
			wasAttached := Attached(b.Dir, it.Ifindex)
			if st.IfDetached && wasAttached {
				continue
			}
			if progs == nil {
				progs = NewPrograms(b.Dir, programOptions(st.Options))
			}
			err = t.do(fmt.Sprintf("attach %s", it.Name),
				func() error { return Attach(b.Dir, progs, it.Ifindex, Mode(it.Mode)) },
				func() error {
					if wasAttached {
						return nil // the program was updated in place; the old one cannot be brought back
					}
					return Detach(b.Dir, it.Ifindex)
				})
		case state.StepDetach:
			it := st.Iface
			// Re-attaching on rollback needs the program; a failed detach is rare enough to report instead.
			err = t.do(fmt.Sprintf("detach %s", it.Name), func() error { return Detach(b.Dir, it.Ifindex) }, func() error { return nil })
		case state.StepInvalidateNextHops:
			err = t.do("invalidate the next-hop cache", func() error { return bumpGen(b.Maps.NhGen) }, func() error { return nil })
		default:
			err = fmt.Errorf("unknown step kind %d", st.Kind)
		}
		if err != nil {
			return fail(err)
		}
	}
	return rollback, nil
}
