package state

// txn.go: the ordered map writes of one Apply and their undo log.

import (
	"errors"
	"fmt"
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

// putAll writes the entries of next that differ from prev; deleteAll removes those only in prev.
func putAll[K comparable, V comparable](t *txn, m *ebpf.Map, prev, next map[K]V) error {
	for k, v := range next {
		old, had := prev[k]
		if had && old == v {
			continue
		}
		undo := func() error { return m.Delete(k) }
		if had {
			undo = func() error { return m.Update(k, old, ebpf.UpdateAny) }
		}
		if err := t.do(fmt.Sprintf("write %s", m), func() error { return m.Update(k, v, ebpf.UpdateAny) }, undo); err != nil {
			return err
		}
	}
	return nil
}

func deleteAll[K comparable, V comparable](t *txn, m *ebpf.Map, prev, next map[K]V) error {
	for k, old := range prev {
		if _, keep := next[k]; keep {
			continue
		}
		del := func() error {
			if err := m.Delete(k); err != nil && !errors.Is(err, ebpf.ErrKeyNotExist) {
				return err
			}
			return nil
		}
		if err := t.do(fmt.Sprintf("delete from %s", m), del, func() error { return m.Update(k, old, ebpf.UpdateAny) }); err != nil {
			return err
		}
	}
	return nil
}

// zeroCounters clears the per-CPU counters of a newly assigned id.
func zeroCounters(m *ebpf.Map, id uint32) error {
	n, err := ebpf.PossibleCPU()
	if err != nil {
		return err
	}
	return m.Update(id, make([]dataplane.Seg6xCounter, n), ebpf.UpdateAny)
}

// writeImage applies oldIm -> newIm in an order that never points at something not yet written:
// redirect targets and policies first, then SIDs and routes, then the tenant ports that lead to them;
// removals in the reverse order.
func (s *Store) writeImage(t *txn, next *State, oldIm, newIm *Image) error {
	m := s.Maps
	for id := range newIm.Policies {
		if _, had := oldIm.Policies[id]; !had {
			if err := zeroCounters(m.PolicyStats, id); err != nil {
				return fmt.Errorf("reset counters of policy %d: %w", id, err)
			}
		}
	}
	for k, e := range newIm.SIDs {
		if old, had := oldIm.SIDs[k]; !had || old.Id != e.Id {
			if err := zeroCounters(m.SidStats, e.Id); err != nil {
				return fmt.Errorf("reset counters of SID %d: %w", e.Id, err)
			}
		}
	}
	if err := putAll(t, m.TxPorts, oldIm.TxPorts, newIm.TxPorts); err != nil {
		return err
	}
	if err := s.attachNew(t, next); err != nil {
		return err
	}
	if err := putAll(t, m.Policies, oldIm.Policies, newIm.Policies); err != nil {
		return err
	}
	if err := putAll(t, m.Sids, oldIm.SIDs, newIm.SIDs); err != nil {
		return err
	}
	if err := putAll(t, m.Encap4, oldIm.Encap4, newIm.Encap4); err != nil {
		return err
	}
	if err := putAll(t, m.Encap6, oldIm.Encap6, newIm.Encap6); err != nil {
		return err
	}
	if err := putAll(t, m.TenantPorts, oldIm.TenantPorts, newIm.TenantPorts); err != nil {
		return err
	}
	if err := deleteAll(t, m.TenantPorts, oldIm.TenantPorts, newIm.TenantPorts); err != nil {
		return err
	}
	if err := deleteAll(t, m.Encap4, oldIm.Encap4, newIm.Encap4); err != nil {
		return err
	}
	if err := deleteAll(t, m.Encap6, oldIm.Encap6, newIm.Encap6); err != nil {
		return err
	}
	if err := deleteAll(t, m.Sids, oldIm.SIDs, newIm.SIDs); err != nil {
		return err
	}
	if err := s.detachOld(t, next); err != nil {
		return err
	}
	return deleteAll(t, m.TxPorts, oldIm.TxPorts, newIm.TxPorts)
}

// attachNew attaches the program to interfaces that are new in next (or whose mode changed).
func (s *Store) attachNew(t *txn, next *State) error {
	prev := map[string]Interface{}
	for _, it := range s.cur.Interfaces {
		prev[it.Name] = it
	}
	var objs *dataplane.Seg6xObjects
	defer func() {
		if objs != nil {
			objs.Close()
		}
	}()
	reload := s.cur.Options != next.Options // a new program (its constants changed) on every interface
	for _, it := range next.Interfaces {
		if old, ok := prev[it.Name]; ok && !reload && old.Ifindex == it.Ifindex && old.Mode == it.Mode &&
			dataplane.Attached(s.Dir, it.Ifindex) {
			continue
		}
		if objs == nil {
			var err error
			if objs, err = dataplane.LoadObjects(s.Dir, programOptions(next.Options)); err != nil {
				return err
			}
		}
		it := it
		err := t.do(fmt.Sprintf("attach %s", it.Name),
			func() error { return dataplane.Attach(s.Dir, objs, it.Ifindex, dataplane.Mode(it.Mode)) },
			func() error { return dataplane.Detach(s.Dir, it.Ifindex) })
		if err != nil {
			return err
		}
	}
	return nil
}

// detachOld detaches interfaces that are no longer in next.
func (s *Store) detachOld(t *txn, next *State) error {
	keep := map[string]bool{}
	for _, it := range next.Interfaces {
		keep[it.Name] = true
	}
	for _, it := range s.cur.Interfaces {
		if keep[it.Name] {
			continue
		}
		it := it
		// Re-attaching on rollback needs the program; a failed detach is rare enough to report instead.
		if err := t.do(fmt.Sprintf("detach %s", it.Name),
			func() error { return dataplane.Detach(s.Dir, it.Ifindex) },
			func() error { return nil }); err != nil {
			return err
		}
	}
	return nil
}

func programOptions(o Options) dataplane.ProgramOptions {
	return dataplane.ProgramOptions{NextHopCache: time.Duration(o.NextHopCacheMs) * time.Millisecond}
}
