package state

// writes.go: the map writes of one commit, in an order that never lets a packet reach something not
// yet written (policies, SIDs and routes before the tenant ports that lead to them; removals in the
// reverse order), batched for large changes, each with its undo.

import (
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/cilium/ebpf"
	"github.com/seg6x/seg6x/internal/dataplane"
)

type txn struct {
	undo []func() error
}

func (t *txn) do(desc string, f, undo func() error) error {
	if err := f(); err != nil {
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

// putBatch writes es in batches; undo restores the old values and removes new keys.
func putBatch[K, V any](t *txn, m *ebpf.Map, es []entry[K, V]) error {
	for lo := 0; lo < len(es); lo += batchSize {
		chunk := es[lo:min(lo+batchSize, len(es))]
		keys := make([]K, len(chunk))
		vals := make([]V, len(chunk))
		for i, e := range chunk {
			keys[i], vals[i] = e.k, e.v
		}
		err := t.do(fmt.Sprintf("write %d entries to %s", len(chunk), m), func() error {
			if len(chunk) > 1 {
				if _, err := m.BatchUpdate(keys, vals, nil); !errors.Is(err, ebpf.ErrNotSupported) {
					return err
				}
			}
			for i := range keys { // a batch of one, or a map type without batch updates (devmaps)
				if err := m.Update(keys[i], vals[i], ebpf.UpdateAny); err != nil {
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

// deleteBatch removes es (a key already gone is not an error); undo puts the old values back.
func deleteBatch[K, V any](t *txn, m *ebpf.Map, es []entry[K, V]) error {
	for lo := 0; lo < len(es); lo += batchSize {
		chunk := es[lo:min(lo+batchSize, len(es))]
		keys := make([]K, len(chunk))
		for i, e := range chunk {
			keys[i] = e.k
		}
		err := t.do(fmt.Sprintf("delete %d entries from %s", len(chunk), m), func() error {
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

// zeroCounters clears the per-CPU counters of a newly assigned id.
func zeroCounters(m *ebpf.Map, id uint32) error {
	n, err := ebpf.PossibleCPU()
	if err != nil {
		return err
	}
	return m.Update(id, make([]dataplane.Seg6xCounter, n), ebpf.UpdateAny)
}

type routeWrites struct {
	put4, del4 []entry[dataplane.Seg6xRoute4Key, dataplane.Seg6xEncapVal]
	put6, del6 []entry[dataplane.Seg6xRoute6Key, dataplane.Seg6xEncapVal]
}

func (w *routeWrites) add(del bool, table uint32, p netip.Prefix, v, old *policy) {
	var e4 entry[dataplane.Seg6xRoute4Key, dataplane.Seg6xEncapVal]
	var e6 entry[dataplane.Seg6xRoute6Key, dataplane.Seg6xEncapVal]
	val := dataplane.Seg6xEncapVal{}
	if v != nil {
		val.PolicyId = v.id
	}
	oldVal := dataplane.Seg6xEncapVal{}
	if old != nil {
		oldVal.PolicyId = old.id
	}
	if p.Addr().Is4() {
		e4 = entry[dataplane.Seg6xRoute4Key, dataplane.Seg6xEncapVal]{k: route4Key(table, p), v: val, old: oldVal, had: old != nil}
		if del {
			w.del4 = append(w.del4, e4)
		} else {
			w.put4 = append(w.put4, e4)
		}
		return
	}
	e6 = entry[dataplane.Seg6xRoute6Key, dataplane.Seg6xEncapVal]{k: route6Key(table, p), v: val, old: oldVal, had: old != nil}
	if del {
		w.del6 = append(w.del6, e6)
	} else {
		w.put6 = append(w.put6, e6)
	}
}

type portEntry = entry[portKeyT, portValT]
type lpmEntry = entry[dataplane.Seg6xLpm6Key, uint8]

// lpmWrites are the puts and deletes that make a domain trie go from prefixes old to new.
func lpmWrites(old, new []netip.Prefix) (put, del []lpmEntry) {
	o, n := lpmImage(old), lpmImage(new)
	for k := range n {
		if _, had := o[k]; !had {
			put = append(put, lpmEntry{k: k, v: 1})
		}
	}
	for k := range o {
		if _, keep := n[k]; !keep {
			del = append(del, lpmEntry{k: k, old: 1, had: true})
		}
	}
	return put, del
}

// portsBefore is the ports map as it was before change c: interfaces, tenants and their table
// versions, and the domain's sources, as c recorded them.
func (c *change) portsBefore(rt *runtime) map[portKeyT]portValT {
	var ifaces []Interface
	for name, it := range rt.ifaces {
		if _, touched := c.ifaces[name]; !touched {
			ifaces = append(ifaces, it)
		}
	}
	for _, b := range c.ifaces {
		if b.had {
			ifaces = append(ifaces, b.it)
		}
	}
	var tenants []Tenant
	for name, t := range rt.tenants {
		if _, touched := c.tenants[name]; !touched {
			tenants = append(tenants, t.Tenant)
		}
	}
	for _, b := range c.tenants {
		if b.had {
			tenants = append(tenants, b.t)
		}
	}
	sources := rt.domain.Sources
	if c.domainBefore != nil {
		sources = c.domainBefore.Sources
	}
	return portImage(ifaces, tenants, func(name string) portValT {
		if b, ok := c.tenants[name]; ok {
			return tenantVal(b.tableID, &b.plens, &b.t)
		}
		t := rt.tenants[name]
		return tenantVal(t.tableID, &t.plens, &t.Tenant)
	}, len(sources) > 0)
}

// bumpNextHopGen makes every next-hop cache entry stale (an egress interface left the redirect map:
// no cached next hop may name it any more).
func (s *Store) bumpNextHopGen(t *txn) error {
	return t.do("invalidate the next-hop cache", func() error {
		var gen uint64
		if err := s.Maps.NhGen.Lookup(uint32(0), &gen); err != nil {
			return err
		}
		return s.Maps.NhGen.Update(uint32(0), gen+1, ebpf.UpdateAny)
	}, func() error { return nil })
}

// write makes the maps follow the in-memory change c.
func (s *Store) write(t *txn, c *change) error {
	m := s.Maps
	rt := s.rt

	// 1. Redirect targets, and the domain's prefixes being added.
	var txPut, txDel []entry[uint32, uint32]
	for name, b := range c.ifaces {
		it, has := rt.ifaces[name]
		if has && (!b.had || b.it.Ifindex != it.Ifindex) {
			idx := uint32(it.Ifindex)
			txPut = append(txPut, entry[uint32, uint32]{k: idx, v: idx})
		}
		if b.had && (!has || b.it.Ifindex != it.Ifindex) {
			idx := uint32(b.it.Ifindex)
			txDel = append(txDel, entry[uint32, uint32]{k: idx, old: idx, had: true})
		}
	}
	if err := putBatch(t, m.TxPorts, txPut); err != nil {
		return err
	}
	domainBefore := rt.domain
	if c.domainBefore != nil {
		domainBefore = *c.domainBefore
	}
	spacePut, spaceDel := lpmWrites(domainBefore.Locators, rt.domain.Locators)
	srcPut, srcDel := lpmWrites(domainBefore.Sources, rt.domain.Sources)
	if err := putBatch(t, m.SidSpace, spacePut); err != nil {
		return err
	}
	if err := putBatch(t, m.SidSources, srcPut); err != nil {
		return err
	}

	// 2. New policies (and their counters) before any route points at them.
	var pols []entry[uint32, dataplane.Seg6xEncapPolicy]
	for _, p := range c.newPols {
		if p.refs == 0 {
			continue
		}
		h, err := outerHeader(p)
		if err != nil {
			return err
		}
		if err := zeroCounters(m.PolicyStats, p.id); err != nil {
			return fmt.Errorf("reset counters of policy %d: %w", p.id, err)
		}
		pols = append(pols, entry[uint32, dataplane.Seg6xEncapPolicy]{k: p.id, v: h, had: true})
	}
	if err := putBatch(t, m.Policies, pols); err != nil {
		return err
	}

	// 3. SIDs added or changed.
	var sidPut, sidDel []entry[[16]byte, dataplane.Seg6xSidEntry]
	for addr, b := range c.sids {
		sd, has := rt.sids[addr]
		e := entry[[16]byte, dataplane.Seg6xSidEntry]{k: addr.As16(), had: b.had}
		if b.had {
			e.old = sidEntry(b.sid, func(name string) uint32 { return c.tenantTableBefore(rt, name) })
		}
		if !has {
			sidDel = append(sidDel, e)
			continue
		}
		e.v = sidEntry(sd, rt.tenantTable)
		if b.had && e.v == e.old {
			continue
		}
		if !b.had || b.sid.ID != sd.ID {
			if err := zeroCounters(m.SidStats, sd.ID); err != nil {
				return fmt.Errorf("reset counters of SID %s: %w", addr, err)
			}
		}
		sidPut = append(sidPut, e)
	}
	if err := putBatch(t, m.Sids, sidPut); err != nil {
		return err
	}

	// 4. Routes: changed ones in place; swapped tables written whole under their new id.
	var w routeWrites
	for k, before := range c.routes {
		if c.swapped[k.tenant] != nil {
			continue
		}
		tn := rt.tenants[k.tenant]
		var after *policy
		if tn != nil {
			after = tn.routes[k.prefix]
		}
		switch {
		case after != nil && after != before:
			w.add(false, tn.tableID, k.prefix, after, before)
		case after == nil && before != nil:
			w.add(true, c.tenants[k.tenant].tableID, k.prefix, nil, before)
		}
	}
	for name, sb := range c.swapped {
		if tn := rt.tenants[name]; tn != nil {
			for p, pol := range tn.routes {
				w.add(false, tn.tableID, p, pol, nil)
			}
		}
		for p, pol := range sb.routes {
			w.add(true, sb.tableID, p, nil, pol)
		}
	}
	if err := putBatch(t, m.Routes4, w.put4); err != nil {
		return err
	}
	if err := putBatch(t, m.Routes6, w.put6); err != nil {
		return err
	}

	// 5. Ports: sides of the boundary and the tenants' new table versions, with the prefix lengths of
	// old and new routes while old routes are still being removed.
	before := c.portsBefore(rt)
	sources := len(rt.domain.Sources) > 0
	final := portImage(rt.ifaceList(), rt.tenantList(), func(name string) portValT {
		tn := rt.tenants[name]
		return tenantVal(tn.tableID, &tn.plens, &tn.Tenant)
	}, sources)
	mid := portImage(rt.ifaceList(), rt.tenantList(), func(name string) portValT {
		tn := rt.tenants[name]
		v := tenantVal(tn.tableID, &tn.plens, &tn.Tenant)
		if b, ok := c.tenants[name]; ok && c.swapped[name] == nil && b.had && b.tableID == tn.tableID {
			plensVal(&v, &b.plens) // union: lengths of routes not yet deleted stay visible
		}
		return v
	}, sources)
	var portPut, portDel, portFinal []portEntry
	for k, v := range mid {
		old, had := before[k]
		if !had || old != v {
			portPut = append(portPut, portEntry{k: k, v: v, old: old, had: had})
		}
		if fv := final[k]; fv != v {
			portFinal = append(portFinal, portEntry{k: k, v: fv, old: v, had: true})
		}
	}
	for k, old := range before {
		if _, keep := mid[k]; !keep {
			portDel = append(portDel, portEntry{k: k, old: old, had: true})
		}
	}
	if err := putBatch(t, m.Ports, portPut); err != nil {
		return err
	}
	// Programs on new interfaces start once everything they may reach, their own ports included, is in.
	if err := s.attachNew(t, c); err != nil {
		return err
	}

	// 6. Removals, then the final prefix-length bitmaps.
	if err := deleteBatch(t, m.Ports, portDel); err != nil {
		return err
	}
	if err := deleteBatch(t, m.Routes4, w.del4); err != nil {
		return err
	}
	if err := deleteBatch(t, m.Routes6, w.del6); err != nil {
		return err
	}
	if err := deleteBatch(t, m.Sids, sidDel); err != nil {
		return err
	}
	if err := putBatch(t, m.Ports, portFinal); err != nil {
		return err
	}
	if err := deleteBatch(t, m.SidSpace, spaceDel); err != nil {
		return err
	}
	if err := deleteBatch(t, m.SidSources, srcDel); err != nil {
		return err
	}

	// 7. Interfaces that left.
	if err := s.detachOld(t, c); err != nil {
		return err
	}
	if err := deleteBatch(t, m.TxPorts, txDel); err != nil {
		return err
	}
	if len(txDel) > 0 {
		return s.bumpNextHopGen(t)
	}
	return nil
}

func (c *change) tenantTableBefore(rt *runtime, name string) uint32 {
	if b, ok := c.tenants[name]; ok {
		return b.t.Table
	}
	return rt.tenantTable(name)
}

// attachNew attaches the program to interfaces that are new or changed, or to every interface when
// the options (load-time constants of the program) changed.
func (s *Store) attachNew(t *txn, c *change) error {
	reload := c.optsBefore != nil && *c.optsBefore != s.rt.opts
	var objs *dataplane.Seg6xObjects
	defer func() {
		if objs != nil {
			objs.Close()
		}
	}()
	for _, it := range s.rt.ifaces {
		b, touched := c.ifaces[it.Name]
		if !reload && !(touched && (!b.had || b.it.Mode != it.Mode || b.it.Ifindex != it.Ifindex)) && dataplane.Attached(s.Dir, it.Ifindex) {
			continue
		}
		if objs == nil {
			var err error
			if objs, err = dataplane.LoadObjects(s.Dir, s.programOptions()); err != nil {
				return err
			}
		}
		it := it
		wasAttached := dataplane.Attached(s.Dir, it.Ifindex)
		err := t.do(fmt.Sprintf("attach %s", it.Name),
			func() error { return dataplane.Attach(s.Dir, objs, it.Ifindex, dataplane.Mode(it.Mode)) },
			func() error {
				if wasAttached {
					return nil // the program was updated in place; the old one cannot be brought back
				}
				return dataplane.Detach(s.Dir, it.Ifindex)
			})
		if err != nil {
			return err
		}
	}
	return nil
}

// detachOld detaches interfaces that were removed.
func (s *Store) detachOld(t *txn, c *change) error {
	for name, b := range c.ifaces {
		it, has := s.rt.ifaces[name]
		if !b.had || (has && it.Ifindex == b.it.Ifindex) {
			continue
		}
		old := b.it
		// Re-attaching on rollback needs the program; a failed detach is rare enough to report instead.
		if err := t.do(fmt.Sprintf("detach %s", old.Name),
			func() error { return dataplane.Detach(s.Dir, old.Ifindex) },
			func() error { return nil }); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) programOptions() dataplane.ProgramOptions {
	return dataplane.ProgramOptions{NextHopCache: time.Duration(s.NextHopCacheMs()) * time.Millisecond}
}

// NextHopCacheMs is the next-hop cache time of the programs this store loads: the state's option,
// or when that is 0 the default the store was opened with.
func (s *Store) NextHopCacheMs() uint32 {
	if s.rt.opts.NextHopCacheMs != 0 {
		return s.rt.opts.NextHopCacheMs
	}
	return s.defaultNextHopCacheMs
}
