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

// encode encodes the entries of a step: keys through kf, values (the new one of a put, the old one
// to restore) through vf.
func encode[K comparable, V, MK, MV any](es []state.Write[K, V], kind state.StepKind, kf func(K) MK, vf func(V) (MV, error)) ([]entry[MK, MV], error) {
	out := make([]entry[MK, MV], len(es))
	for i, e := range es {
		out[i] = entry[MK, MV]{k: kf(e.Key), had: e.Had}
		var err error
		if kind == state.StepPut {
			if out[i].v, err = vf(e.Val); err != nil {
				return nil, err
			}
		}
		if e.Had {
			if out[i].old, err = vf(e.Old); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// enc encodes entries whose values cannot fail to encode.
func enc[K comparable, V, MK, MV any](es []state.Write[K, V], kind state.StepKind, kf func(K) MK, vf func(V) MV) []entry[MK, MV] {
	out, _ := encode(es, kind, kf, func(v V) (MV, error) { return vf(v), nil })
	return out
}

func same[T any](v T) T { return v }

// present is the value of a set's key (the map holds 1 for every member).
func present(struct{}) uint8 { return 1 }

// policySlot encodes a policy; the zero PolicySpec is an empty slot (what undo restores where none was).
func policySlot(p state.PolicySpec) (Seg6xEncapPolicy, error) {
	if p.ID == 0 && len(p.Segs) == 0 {
		return Seg6xEncapPolicy{}, nil
	}
	return OuterHeader(p)
}

func sidExactKey(p netip.Prefix) [16]byte         { return p.Addr().As16() }
func groupVal(g state.GroupSpec) Seg6xPolicyGroup { return Seg6xPolicyGroup{Ids: g.Buckets} }

// write runs one put or delete step.
func (b *BPF) write(t *txn, kind state.StepKind, w state.Writes) error {
	m := b.Maps
	switch w := w.(type) {
	case state.TxPortWrites:
		return putOrDelete(t, m.TxPorts, enc(w, kind, same[uint32], same[uint32]), kind)
	case state.SIDSpaceWrites:
		return putOrDelete(t, m.SidSpace, enc(w, kind, lpmKey, present), kind)
	case state.SIDSourceWrites:
		return putOrDelete(t, m.SidSources, enc(w, kind, lpmKey, present), kind)
	case state.PolicyWrites:
		es, err := encode(w, kind, same[uint32], policySlot)
		if err != nil {
			return err
		}
		return putOrDelete(t, m.Policies, es, kind)
	case state.SIDWrites:
		if kind == state.StepPut {
			if err := b.writePluginConfigs(w); err != nil {
				return err
			}
		}
		var exact, byPrefix state.SIDWrites
		for _, e := range w {
			if e.Key.Bits() == 128 {
				exact = append(exact, e)
			} else {
				byPrefix = append(byPrefix, e)
			}
		}
		if err := putOrDelete(t, m.Sids, enc(exact, kind, sidExactKey, SIDEntry), kind); err != nil {
			return err
		}
		ps := enc(byPrefix, kind, lpmKey, SIDEntry)
		if len(ps) > 0 && kind == state.StepPut {
			// On before the first prefix SID is written (and left on: a lookup in an empty trie costs
			// little; Reconcile turns it off when there are none).
			if err := sidsByPrefix(m.SidConf, true); err != nil {
				return err
			}
		}
		return putOrDelete(t, m.SidPrefixes, ps, kind)
	case state.RouteWrites:
		r4, r6 := make([]entry[Seg6xRoute4Key, Seg6xEncapVal], 0, len(w)), []entry[Seg6xRoute6Key, Seg6xEncapVal](nil)
		for _, e := range w {
			v, old := Seg6xEncapVal{PolicyId: e.Val}, Seg6xEncapVal{PolicyId: e.Old}
			if e.Key.Prefix.Addr().Is4() {
				r4 = append(r4, entry[Seg6xRoute4Key, Seg6xEncapVal]{k: route4Key(e.Key), v: v, old: old, had: e.Had})
			} else {
				r6 = append(r6, entry[Seg6xRoute6Key, Seg6xEncapVal]{k: route6Key(e.Key), v: v, old: old, had: e.Had})
			}
		}
		if err := putOrDelete(t, m.Routes4, r4, kind); err != nil {
			return err
		}
		return putOrDelete(t, m.Routes6, r6, kind)
	case state.GroupWrites:
		// An array: a group that goes is zeroed (no list: dropped), as a put of the zero group.
		return putBatch(t, m.PolicyGroups, enc(w, state.StepPut, same[uint32], groupVal))
	case state.PortWrites:
		return putOrDelete(t, m.Ports, enc(w, kind, portKey, portVal), kind)
	case state.VXDevWrites:
		return putOrDelete(t, m.VxDevs, enc(w, kind, same[uint32], vxDev), kind)
	case state.VXRxWrites:
		return putOrDelete(t, m.VxRx, enc(w, kind, vxRxKey, vxDev), kind)
	case state.VXRemoteWrites:
		return putOrDelete(t, m.VxRemotes, enc(w, kind, vxRemoteKey, present), kind)
	case state.VXMACWrites:
		return putOrDelete(t, m.VxMacs, enc(w, kind, vxMACKey, vxMAC), kind)
	case state.PluginWrites:
		return b.writePlugins(t, kind, w)
	}
	return fmt.Errorf("writes of unknown table %d", w.Table())
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
			if st.Writes == nil {
				err = errors.New("a put or delete step without entries")
				break
			}
			cached := cacheGenTable(st.Writes.Table())
			cacheWritten = cacheWritten || cached
			if cached {
				// Undone in reverse order: this runs right after the write below is undone, before
				// the steps before it are (a rollback removes new policies only after the routes
				// that led to them are restored, and cached answers must not outlive either).
				t.undo = append(t.undo, func() error { return bumpGen(b.Maps.CacheGen) })
			}
			err = b.write(t, st.Kind, st.Writes)
			if err == nil && cached {
				err = bumpGen(b.Maps.CacheGen)
			}
		case state.StepResetCounters:
			m := b.Maps.PolicyStats
			if st.Counters == state.TableSIDs {
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
