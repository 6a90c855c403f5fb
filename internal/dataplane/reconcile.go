package dataplane

// reconcile.go: makes the pinned maps and links hold exactly a state's image, without flushing: what
// is right stays, what is missing is written, what nobody owns (a commit cut short by a crash,
// interfaces no longer configured) is removed, and every attached interface gets the program of this
// binary through an atomic link update. Purge removes an instance entirely.

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/seg6x/seg6x/internal/state"
)

// syncMap makes hash map m hold exactly want: stale keys removed, missing or different ones written.
func syncMap[K comparable, V comparable](m *ebpf.Map, want map[K]V, rep *state.ReconcileReport) error {
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

func lpmImage(ps []netip.Prefix) map[Seg6xLpm6Key]uint8 {
	im := make(map[Seg6xLpm6Key]uint8, len(ps))
	for _, p := range ps {
		im[lpmKey(p)] = 1
	}
	return im
}

// imageMaps are the maps a state's image fills (the others hold counters, caches and rings).
type imageMaps struct {
	TxPorts, Policies, PolicyGroups, Sids, SidPrefixes, SidConf, Routes4, Routes6, SidSpace, SidSources, Ports *ebpf.Map
	VxDevs, VxRx, VxRemotes, VxMacs, CacheGen                                                                  *ebpf.Map
}

// imageMapsOf are the image's maps of a set of maps.
func imageMapsOf(m *Seg6xMaps) imageMaps {
	return imageMaps{TxPorts: m.TxPorts, Policies: m.Policies, PolicyGroups: m.PolicyGroups, Sids: m.Sids, SidPrefixes: m.SidPrefixes, SidConf: m.SidConf,
		Routes4: m.Routes4, Routes6: m.Routes6, SidSpace: m.SidSpace, SidSources: m.SidSources, Ports: m.Ports,
		VxDevs: m.VxDevs, VxRx: m.VxRx, VxRemotes: m.VxRemotes, VxMacs: m.VxMacs, CacheGen: m.CacheGen}
}

// sidsByPrefix marks the data plane as having SIDs served by prefix (or not): the program looks
// sid_prefixes up only then.
func sidsByPrefix(m *ebpf.Map, on bool) error {
	v := Seg6xSidConf{}
	if on {
		v.Prefixes = 1
	}
	return m.Put(uint32(0), &v)
}

// writeImage makes m hold exactly im (policies by id are written, not synced: an array).
func writeImage(m imageMaps, im *state.Image, rep *state.ReconcileReport) (err error) {
	// Every answer the program cached (ports, routes, SIDs, VXLAN decisions) from what the maps held
	// before is stale once they are written, also when a write fails part way.
	defer func() { err = errors.Join(err, bumpGen(m.CacheGen)) }()
	tx := make(map[uint32]uint32, len(im.TxPorts))
	for _, idx := range im.TxPorts {
		tx[idx] = idx
	}
	if err := syncMap(m.TxPorts, tx, rep); err != nil {
		return err
	}
	var pols []entry[uint32, Seg6xEncapPolicy]
	for id, p := range im.Policies {
		h, err := OuterHeader(p)
		if err != nil {
			return err
		}
		pols = append(pols, entry[uint32, Seg6xEncapPolicy]{k: id, v: h})
	}
	if err := putBatch(&txn{}, m.Policies, pols); err != nil {
		return err
	}
	var groups []entry[uint32, Seg6xPolicyGroup]
	for id, g := range im.Groups {
		groups = append(groups, entry[uint32, Seg6xPolicyGroup]{k: id, v: Seg6xPolicyGroup{Ids: g.Buckets}})
	}
	if err := putBatch(&txn{}, m.PolicyGroups, groups); err != nil {
		return err
	}
	sids := make(map[[16]byte]Seg6xSidEntry, len(im.SIDs))
	byPrefix := map[Seg6xLpm6Key]Seg6xSidEntry{}
	for p, v := range im.SIDs {
		if p.Bits() == 128 {
			sids[p.Addr().As16()] = SIDEntry(v)
		} else {
			byPrefix[lpmKey(p)] = SIDEntry(v)
		}
	}
	if err := syncMap(m.Sids, sids, rep); err != nil {
		return err
	}
	if len(byPrefix) > 0 {
		if err := sidsByPrefix(m.SidConf, true); err != nil {
			return err
		}
	}
	if err := syncMap(m.SidPrefixes, byPrefix, rep); err != nil {
		return err
	}
	if len(byPrefix) == 0 {
		if err := sidsByPrefix(m.SidConf, false); err != nil {
			return err
		}
	}
	r4 := map[Seg6xRoute4Key]Seg6xEncapVal{}
	r6 := map[Seg6xRoute6Key]Seg6xEncapVal{}
	for k, id := range im.Routes {
		if k.Prefix.Addr().Is4() {
			r4[route4Key(k)] = Seg6xEncapVal{PolicyId: id}
		} else {
			r6[route6Key(k)] = Seg6xEncapVal{PolicyId: id}
		}
	}
	if err := syncMap(m.Routes4, r4, rep); err != nil {
		return err
	}
	if err := syncMap(m.Routes6, r6, rep); err != nil {
		return err
	}
	if err := syncMap(m.SidSpace, lpmImage(im.SIDSpace), rep); err != nil {
		return err
	}
	if err := syncMap(m.SidSources, lpmImage(im.SIDSources), rep); err != nil {
		return err
	}
	if err := writeVXLANImage(m, &im.VX, rep); err != nil {
		return err
	}
	ports := make(map[Seg6xPortKey]Seg6xPortVal, len(im.Ports))
	for k, v := range im.Ports {
		ports[portKey(k)] = portVal(v)
	}
	return syncMap(m.Ports, ports, rep)
}

// writeVXLANImage makes the VXLAN maps hold exactly im.
func writeVXLANImage(m imageMaps, im *state.VXImage, rep *state.ReconcileReport) error {
	devs := make(map[uint32]Seg6xVxDev, len(im.Devs))
	for k, v := range im.Devs {
		devs[k] = vxDev(v)
	}
	rx := make(map[Seg6xVxRxKey]Seg6xVxDev, len(im.Rx))
	for k, v := range im.Rx {
		rx[vxRxKey(k)] = vxDev(v)
	}
	remotes := make(map[Seg6xVxRemoteKey]uint8, len(im.Remotes))
	for k := range im.Remotes {
		remotes[vxRemoteKey(k)] = 1
	}
	macs := make(map[Seg6xVxMacKey]Seg6xVxMac, len(im.MACs))
	for k, v := range im.MACs {
		macs[vxMACKey(k)] = vxMAC(v)
	}
	return errors.Join(syncMap(m.VxDevs, devs, rep), syncMap(m.VxRx, rx, rep), syncMap(m.VxRemotes, remotes, rep),
		syncMap(m.VxMacs, macs, rep))
}

// Reconcile writes im into the maps and attaches the program to every interface of im; see
// state.Dataplane.
func (b *BPF) Reconcile(im *state.Image, opts state.ProgramOptions) (*state.ReconcileReport, error) {
	rep := &state.ReconcileReport{}
	if err := b.reconcilePlugins(im, rep); err != nil {
		return rep, err
	}
	if err := writeImage(imageMapsOf(b.Maps), im, rep); err != nil {
		return rep, err
	}
	if err := b.reattach(im, opts, rep); err != nil {
		return rep, err
	}
	// Maps of an older layout: no program uses them any more.
	ents, _ := os.ReadDir(PinDir(b.Dir))
	for _, e := range ents {
		if e.IsDir() && strings.HasPrefix(e.Name(), "maps-") && e.Name() != MapLayout {
			if err := os.RemoveAll(filepath.Join(PinDir(b.Dir), e.Name())); err != nil {
				return rep, err
			}
			rep.OldLayouts = append(rep.OldLayouts, e.Name())
		}
	}
	return rep, nil
}

// reattach gives every interface of im this binary's program and removes links of others.
func (b *BPF) reattach(im *state.Image, opts state.ProgramOptions, rep *state.ReconcileReport) error {
	keep := map[int]bool{}
	if len(im.Interfaces) > 0 {
		progs := NewPrograms(b.Dir, programOptions(opts))
		defer progs.Close()
		for _, it := range im.Interfaces {
			keep[it.Ifindex] = true
			if err := Attach(b.Dir, progs, it.Ifindex, Mode(it.Mode)); err != nil {
				return fmt.Errorf("attach %s: %w", it.Name, err)
			}
			rep.Attached++
		}
	}
	ents, err := os.ReadDir(filepath.Join(PinDir(b.Dir), "links"))
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
		if err := Detach(b.Dir, idx); err != nil {
			return err
		}
		rep.Detached++
	}
	return nil
}

// Purge removes every trace of instance dir from the kernel and the disk: links (detaching the
// program), pinned maps, the pin directory (pins.go) and the saved state. Nothing may have the instance open.
func Purge(dir string) error {
	pins := PinDir(dir)
	ents, _ := os.ReadDir(filepath.Join(pins, "links"))
	var errs []error
	for _, e := range ents {
		if idx, err := strconv.Atoi(e.Name()); err == nil {
			if err := Detach(dir, idx); err != nil {
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
	removePins(dir)
	if err := state.RemoveSaved(dir); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
