package state

// reconcile.go: makes the pinned maps and links hold exactly the running state, without flushing:
// what is right stays, what is missing is written, what nobody owns (a commit cut short by a crash,
// interfaces no longer configured) is removed, and every attached interface gets the program of this
// binary through an atomic link update. A daemon runs it at start (adopting what an earlier process
// left) and after an upgrade.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/seg6x/seg6x/internal/dataplane"
	"golang.org/x/sys/unix"
)

// ReconcileReport says what Reconcile found and did.
type ReconcileReport struct {
	Written  int `json:"written"`  // entries written (missing or different)
	Removed  int `json:"removed"`  // stale entries removed
	Attached int `json:"attached"` // interfaces whose program was attached or updated
	Detached int `json:"detached"` // links of interfaces no longer configured

	OldLayouts []string `json:"old_layouts,omitempty"` // map directories of an older layout, removed
}

// syncMap makes hash map m hold exactly want: stale keys removed, missing or different ones written.
func syncMap[K comparable, V comparable](m *ebpf.Map, want map[K]V, rep *ReconcileReport) error {
	var stale []K
	have := make(map[K]bool, len(want))
	var k K
	var v V
	it := m.Iterate()
	var put []entry[K, V]
	for it.Next(&k, &v) {
		if w, ok := want[k]; !ok {
			stale = append(stale, k)
		} else {
			have[k] = true
			if w != v {
				put = append(put, entry[K, V]{k: k, v: w})
			}
		}
	}
	if err := it.Err(); err != nil {
		return fmt.Errorf("reading %s: %w", m, err)
	}
	for key, val := range want {
		if !have[key] {
			put = append(put, entry[K, V]{k: key, v: val})
		}
	}
	t := &txn{}
	if err := putBatch(t, m, put); err != nil {
		return err
	}
	rep.Written += len(put)
	del := make([]entry[K, V], len(stale))
	for i, key := range stale {
		del[i] = entry[K, V]{k: key}
	}
	if err := deleteBatch(t, m, del); err != nil {
		return err
	}
	rep.Removed += len(stale)
	return nil
}

// Reconcile writes the running state into the maps and attaches the program to every interface.
func (s *Store) Reconcile() (*ReconcileReport, error) {
	im, err := s.rt.image()
	if err != nil {
		return nil, err
	}
	rep := &ReconcileReport{}
	m := s.Maps
	if err := syncMap(m.TxPorts, im.TxPorts, rep); err != nil {
		return rep, err
	}
	var pols []entry[uint32, dataplane.Seg6xEncapPolicy]
	for id, h := range im.Policies {
		pols = append(pols, entry[uint32, dataplane.Seg6xEncapPolicy]{k: id, v: h})
	}
	if err := putBatch(&txn{}, m.Policies, pols); err != nil {
		return rep, err
	}
	if err := syncMap(m.Sids, im.SIDs, rep); err != nil {
		return rep, err
	}
	if err := syncMap(m.Routes4, im.Routes4, rep); err != nil {
		return rep, err
	}
	if err := syncMap(m.Routes6, im.Routes6, rep); err != nil {
		return rep, err
	}
	if err := syncMap(m.SidSpace, im.SIDSpace, rep); err != nil {
		return rep, err
	}
	if err := syncMap(m.SidSources, im.SIDSources, rep); err != nil {
		return rep, err
	}
	if err := syncMap(m.Ports, im.Ports, rep); err != nil {
		return rep, err
	}
	if err := s.reattach(rep); err != nil {
		return rep, err
	}
	// Maps of an older layout: no program uses them any more.
	ents, _ := os.ReadDir(dataplane.PinDir(s.Dir))
	for _, e := range ents {
		if e.IsDir() && strings.HasPrefix(e.Name(), "maps-") && e.Name() != dataplane.MapLayout {
			if err := os.RemoveAll(filepath.Join(dataplane.PinDir(s.Dir), e.Name())); err != nil {
				return rep, err
			}
			rep.OldLayouts = append(rep.OldLayouts, e.Name())
		}
	}
	return rep, nil
}

// reattach gives every configured interface this binary's program and removes links of others.
func (s *Store) reattach(rep *ReconcileReport) error {
	keep := map[int]bool{}
	if len(s.rt.ifaces) > 0 {
		objs, err := dataplane.LoadObjects(s.Dir, s.programOptions())
		if err != nil {
			return err
		}
		defer objs.Close()
		for _, it := range s.rt.ifaces {
			keep[it.Ifindex] = true
			if err := dataplane.Attach(s.Dir, objs, it.Ifindex, dataplane.Mode(it.Mode)); err != nil {
				return fmt.Errorf("attach %s: %w", it.Name, err)
			}
			rep.Attached++
		}
	}
	ents, err := os.ReadDir(filepath.Join(dataplane.PinDir(s.Dir), "links"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range ents {
		idx, err := strconv.Atoi(e.Name())
		if err != nil || keep[idx] {
			continue
		}
		if err := dataplane.Detach(s.Dir, idx); err != nil {
			return err
		}
		rep.Detached++
	}
	return nil
}

// Purge removes every trace of instance dir from the kernel and the disk: links (detaching the
// program), pinned maps, the bpffs mount and the saved state. Nothing may have the instance open.
func Purge(dir string) error {
	pins := dataplane.PinDir(dir)
	ents, _ := os.ReadDir(filepath.Join(pins, "links"))
	var errs []error
	for _, e := range ents {
		if idx, err := strconv.Atoi(e.Name()); err == nil {
			if err := dataplane.Detach(dir, idx); err != nil {
				errs = append(errs, err)
			}
		}
	}
	entries, _ := os.ReadDir(pins)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".debug") {
			continue // the kernel's own bpffs iterators (maps.debug, progs.debug)
		}
		if err := os.RemoveAll(filepath.Join(pins, e.Name())); err != nil {
			errs = append(errs, err)
		}
	}
	_ = unix.Unmount(pins, unix.MNT_DETACH)
	for _, f := range []string{"state.snapshot", "state.journal", "state.json"} {
		if err := os.Remove(filepath.Join(dir, f)); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
