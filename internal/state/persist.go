package state

// persist.go: the running state on disk, so a restarted seg6x knows what the pinned maps hold. A
// snapshot (every object as one record per line) plus a journal (one line of records per commit,
// appended after the maps were written; journal.go writes both). Here: the records, and the load that
// replays both; a torn last journal line (a crash while writing it) is ignored, and Reconcile then
// removes whatever that commit had written.

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/netip"
	"os"
	"path/filepath"
	"slices"

	"github.com/seg6x/seg6x/internal/model"
)

type savedTenant struct {
	model.Tenant
	TableID uint32 `json:"table_id"`
}

type savedPolicy struct {
	ID       uint32       `json:"id"`
	Inner6   bool         `json:"inner6,omitempty"`
	Mode     string       `json:"mode"`
	Segs     []netip.Addr `json:"segs"`
	Src      netip.Addr   `json:"src,omitempty"`
	UsedSrc  netip.Addr   `json:"used_src"`
	HopLimit uint8        `json:"hoplimit"`
}

// savedNamed is a named policy: its definition, its groups' ids (with GroupFlag) and its lists' policy
// ids, per inner family.
type savedNamed struct {
	P model.Policy `json:"p"`
	G [2]uint32    `json:"g"`
	M [2][]uint32  `json:"m"`
}

type savedRoute struct {
	T   string          `json:"t"`
	P   netip.Prefix    `json:"p"`
	Pol uint32          `json:"pol,omitempty"`
	O   model.Origin    `json:"o,omitempty"` // when not its tenant's (tenantRT.origins)
	U   *model.USIDList `json:"u,omitempty"` // the route's uSID notation (tenantRT.usids)
}

type savedTable struct {
	T  string `json:"t"`
	ID uint32 `json:"id"`
}

// savedVXLAN is what the state file keeps of a VXLAN object: the device, not its MAC tables. Those are
// the kernel's, learned and aged at its pace; journaling the whole table at each change would cost a
// write of every entry per learned MAC, and the mirror reads them again whenever it starts.
func savedVXLAN(v model.VXLAN) model.VXLAN {
	v = model.CloneVXLAN(v)
	v.RemoteMACs, v.LocalMACs, v.TunnelMACs = nil, nil, nil
	return v
}

// record is one change to the running state as it is saved.
type record struct {
	Gen       uint64           `json:"gen,omitempty"` // snapshot header: the commit it includes
	Opts      *model.Options   `json:"opts,omitempty"`
	Domain    *model.Domain    `json:"domain,omitempty"`
	BGP       *model.BGP       `json:"bgp,omitempty"`
	BGPDel    bool             `json:"bgp_del,omitempty"`
	Iface     *model.Interface `json:"iface,omitempty"`
	IfaceDel  string           `json:"iface_del,omitempty"`
	Tenant    *savedTenant     `json:"tenant,omitempty"`
	TenantDel string           `json:"tenant_del,omitempty"`
	Policy    *savedPolicy     `json:"policy,omitempty"`
	PolicyDel uint32           `json:"policy_del,omitempty"`
	Table     *savedTable      `json:"table,omitempty"` // a tenant's routes start over in a new table version
	Route     *savedRoute      `json:"r,omitempty"`
	RouteDel  *savedRoute      `json:"r_del,omitempty"`
	SID       *model.SID       `json:"sid,omitempty"`
	SIDDel    *netip.Addr      `json:"sid_del,omitempty"`
	Named     *savedNamed      `json:"named,omitempty"`
	NamedDel  string           `json:"named_del,omitempty"`
	VXLAN     *model.VXLAN     `json:"vxlan,omitempty"`
	VXLANDel  string           `json:"vxlan_del,omitempty"`
	Plugin    *savedPlugin     `json:"plugin,omitempty"`
	PluginDel string           `json:"plugin_del,omitempty"`
}

// savedPlugin is what the state file keeps of a plugin: its object is kept beside it, under
// plugins/<digest>.o in the state directory (keepObject).
type savedPlugin struct {
	Name   string `json:"name"`
	File   string `json:"file,omitempty"`
	Digest string `json:"digest"`
	Slot   uint32 `json:"slot"`
}

func pluginRecord(pr *pluginRT) record {
	return record{Plugin: &savedPlugin{Name: pr.Name, File: pr.File, Digest: pr.Digest, Slot: pr.slot}}
}

type journalLine struct {
	Gen  uint64   `json:"gen"`
	Recs []record `json:"recs"`
}

func polRecord(p *policy) record {
	return record{Policy: &savedPolicy{ID: p.id, Inner6: p.inner6, Mode: p.mode, Segs: p.segs, Src: p.src,
		UsedSrc: p.usedSrc, HopLimit: p.hopLimit}}
}

func namedRecord(n *namedRT) record {
	sn := &savedNamed{P: n.Policy}
	for fam := range 2 {
		sn.G[fam] = n.groups[fam].id
		for _, m := range n.members[fam] {
			sn.M[fam] = append(sn.M[fam], m.id)
		}
	}
	return record{Named: sn}
}

// replayNamed applies a saved named policy: its groups are kept across a replace (routes point at
// them), its lists' policies referenced.
func (r *runtime) replayNamed(sn *savedNamed) error {
	n := r.named[sn.P.Name]
	if n != nil {
		for fam := range 2 {
			for _, m := range n.members[fam] {
				m.refs--
			}
		}
	} else {
		n = &namedRT{}
		for fam := range 2 {
			g := &policy{id: sn.G[fam], key: groupKey(sn.P.Name, fam), inner6: fam == 1, group: n}
			n.groups[fam] = g
			r.groupByID[g.id] = g
		}
		r.named[sn.P.Name] = n
	}
	n.Policy = sn.P
	for fam := range 2 {
		n.members[fam] = nil
		if len(sn.M[fam]) != len(sn.P.Lists) {
			return fmt.Errorf("policy %q: %d list policies for %d lists", sn.P.Name, len(sn.M[fam]), len(sn.P.Lists))
		}
		for _, id := range sn.M[fam] {
			m := r.polByID[id]
			if m == nil {
				return fmt.Errorf("policy %q: unknown list policy %d", sn.P.Name, id)
			}
			m.refs++
			n.members[fam] = append(n.members[fam], m)
		}
	}
	return nil
}

func tenantRecord(t *tenantRT) record {
	return record{Tenant: &savedTenant{Tenant: t.Tenant, TableID: t.tableID}}
}

// replay applies one saved record to r.
func (r *runtime) replay(rec record) error {
	switch {
	case rec.Gen != 0:
	case rec.Opts != nil:
		r.opts = *rec.Opts
	case rec.Domain != nil:
		r.domain = cloneDomain(*rec.Domain)
	case rec.BGP != nil:
		r.bgp = model.CloneBGP(rec.BGP)
	case rec.BGPDel:
		r.bgp = nil
	case rec.Iface != nil:
		r.ifaces[rec.Iface.Name] = *rec.Iface
	case rec.IfaceDel != "":
		delete(r.ifaces, rec.IfaceDel)
	case rec.VXLAN != nil:
		r.vxlans[rec.VXLAN.Dev] = model.CloneVXLAN(*rec.VXLAN)
	case rec.VXLANDel != "":
		delete(r.vxlans, rec.VXLANDel)
	case rec.Plugin != nil:
		sp := rec.Plugin
		b, err := r.objects(sp.Digest)
		if err != nil {
			return fmt.Errorf("plugin %s: its object: %w", sp.Name, err)
		}
		pr, err := readPlugin(model.Plugin{Name: sp.Name, File: sp.File, Object: b})
		if err != nil {
			return err
		}
		pr.slot = sp.Slot
		r.plugins[sp.Name] = pr
	case rec.PluginDel != "":
		delete(r.plugins, rec.PluginDel)
	case rec.Policy != nil:
		sp := rec.Policy
		p := &policy{id: sp.ID, inner6: sp.Inner6, mode: sp.Mode, segs: sp.Segs, src: sp.Src, usedSrc: sp.UsedSrc,
			hopLimit: sp.HopLimit}
		p.key = policyKey(p.inner6, p.mode, p.segs, p.src, p.hopLimit)
		if old := r.polByID[sp.ID]; old != nil {
			p.refs = old.refs
			delete(r.policies, old.key)
		}
		r.policies[p.key] = p
		r.polByID[p.id] = p
	case rec.PolicyDel != 0:
		if p := r.polByID[rec.PolicyDel]; p != nil {
			delete(r.policies, p.key)
			delete(r.polByID, p.id)
		}
	case rec.Named != nil:
		return r.replayNamed(rec.Named)
	case rec.NamedDel != "":
		if n := r.named[rec.NamedDel]; n != nil {
			for fam := range 2 {
				for _, m := range n.members[fam] {
					m.refs--
				}
				delete(r.groupByID, n.groups[fam].id)
			}
			delete(r.named, rec.NamedDel)
		}
	case rec.Tenant != nil:
		t := r.tenants[rec.Tenant.Name]
		if t == nil {
			t = &tenantRT{routes: newRouteIndex(0)}
			r.tenants[rec.Tenant.Name] = t
		}
		for _, p := range t.Ports {
			delete(r.ports, model.Port{Dev: p.Dev, VLAN: p.VLAN})
		}
		t.Tenant = rec.Tenant.Tenant
		t.tableID = rec.Tenant.TableID
		for _, p := range t.Ports {
			r.ports[model.Port{Dev: p.Dev, VLAN: p.VLAN}] = t.Name
		}
	case rec.TenantDel != "":
		if t := r.tenants[rec.TenantDel]; t != nil {
			// Its routes go with it: a commit that swapped its table to none and deleted it journals
			// the delete alone (the swap of a tenant that is gone is not written).
			for p, id := range t.routes.all {
				if pol := r.policyOf(id); pol != nil && pol != passPolicy {
					pol.refs--
				}
				r.nroutes[famOf(p)]--
			}
			for _, p := range t.Ports {
				delete(r.ports, model.Port{Dev: p.Dev, VLAN: p.VLAN})
			}
			delete(r.tenants, rec.TenantDel)
		}
	case rec.Table != nil:
		t := r.tenants[rec.Table.T]
		if t == nil {
			return fmt.Errorf("table of unknown tenant %q", rec.Table.T)
		}
		for p, id := range t.routes.all {
			if pol := r.policyOf(id); pol != nil && pol != passPolicy {
				pol.refs--
			}
			r.nroutes[famOf(p)]--
		}
		t.tableID, t.routes, t.plens, t.origins, t.usids = rec.Table.ID, newRouteIndex(0), [2][129]uint32{}, originIndex{}, nil
	case rec.Route != nil:
		t, pol := r.tenants[rec.Route.T], r.policyOf(rec.Route.Pol)
		if t == nil || pol == nil {
			return fmt.Errorf("route %s of tenant %q: unknown tenant or policy %d", rec.Route.P, rec.Route.T, rec.Route.Pol)
		}
		if id, had := t.routes.get(rec.Route.P); had {
			if old := r.policyOf(id); old != nil && old != passPolicy {
				old.refs--
			}
		} else {
			t.countRoute(rec.Route.P, 1)
			r.nroutes[famOf(rec.Route.P)]++
		}
		t.routes.set(rec.Route.P, pol.id)
		if rec.Route.O != "" {
			t.setOrigin(rec.Route.P, rec.Route.O)
		} else {
			t.origins.del(rec.Route.P)
		}
		t.setUSIDs(rec.Route.P, rec.Route.U)
		if pol != passPolicy {
			pol.refs++
		}
	case rec.RouteDel != nil:
		if t := r.tenants[rec.RouteDel.T]; t != nil {
			if id, had := t.routes.get(rec.RouteDel.P); had {
				if old := r.policyOf(id); old != nil && old != passPolicy {
					old.refs--
				}
				t.routes.del(rec.RouteDel.P)
				t.origins.del(rec.RouteDel.P)
				delete(t.usids, rec.RouteDel.P)
				t.countRoute(rec.RouteDel.P, -1)
				r.nroutes[famOf(rec.RouteDel.P)]--
			}
		}
	case rec.SID != nil:
		r.bindRefs(r.sids[rec.SID.SID], -1)
		if err := r.bindRefs(*rec.SID, 1); err != nil {
			return err
		}
		r.sids[rec.SID.SID] = *rec.SID
	case rec.SIDDel != nil:
		r.bindRefs(r.sids[*rec.SIDDel], -1)
		delete(r.sids, *rec.SIDDel)
	default:
		return errors.New("empty record")
	}
	return nil
}

// bindRefs counts binding SID sd's reference on its policy (delta 1 or -1); no-op for other SIDs.
func (r *runtime) bindRefs(sd model.SID, delta int) error {
	if sd.Policy == 0 {
		return nil
	}
	p := r.polByID[sd.Policy]
	if p == nil {
		return fmt.Errorf("sid %s: unknown policy %d", sd.Name(), sd.Policy)
	}
	p.refs += delta
	return nil
}

// records describes the whole running state. emit must not keep a record (route records share
// one savedRoute).
func (r *runtime) records(emit func(record) error) error {
	o := r.opts
	if err := emit(record{Opts: &o}); err != nil {
		return err
	}
	d := cloneDomain(r.domain)
	if err := emit(record{Domain: &d}); err != nil {
		return err
	}
	if r.bgp != nil {
		if err := emit(record{BGP: model.CloneBGP(r.bgp)}); err != nil {
			return err
		}
	}
	for _, it := range r.ifaces {
		it := it
		if err := emit(record{Iface: &it}); err != nil {
			return err
		}
	}
	for _, p := range r.polByID {
		if err := emit(polRecord(p)); err != nil {
			return err
		}
	}
	for _, n := range r.named {
		if err := emit(namedRecord(n)); err != nil {
			return err
		}
	}
	var sr savedRoute
	for _, t := range r.tenants {
		if err := emit(tenantRecord(t)); err != nil {
			return err
		}
		for p, id := range t.routes.all {
			sr = savedRoute{T: t.Name, P: p, Pol: id, O: t.origins.of(p), U: t.usids[p]}
			if err := emit(record{Route: &sr}); err != nil {
				return err
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(r.plugins)) { // before the SIDs that run them
		if err := emit(pluginRecord(r.plugins[name])); err != nil {
			return err
		}
	}
	for _, sd := range r.sids {
		sd := sd
		if err := emit(record{SID: &sd}); err != nil {
			return err
		}
	}
	for _, v := range r.vxlanList() {
		v := savedVXLAN(v)
		if err := emit(record{VXLAN: &v}); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) snapshotPath() string { return filepath.Join(s.Dir, "state.snapshot") }
func (s *Store) journalPath() string  { return filepath.Join(s.Dir, "state.journal") }

// load reads the snapshot and the journal into a fresh runtime.
func (s *Store) load() error {
	rt := newRuntime()
	rt.objects = s.loadObject
	if f, err := os.Open(s.snapshotPath()); err == nil {
		err = readLines(f, func(line []byte) error {
			var rec record
			if err := json.Unmarshal(line, &rec); err != nil {
				return err
			}
			if rec.Gen != 0 {
				s.gen = rec.Gen // header line
				return nil
			}
			return rt.replay(rec)
		}, false)
		f.Close()
		if err != nil {
			return fmt.Errorf("%s is corrupt: %w", s.snapshotPath(), err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	snapGen := s.gen
	if f, err := os.Open(s.journalPath()); err == nil {
		err = readLines(f, func(line []byte) error {
			var jl journalLine
			if err := json.Unmarshal(line, &jl); err != nil {
				return err
			}
			if jl.Gen != 0 && jl.Gen <= snapGen {
				// Already in the snapshot: a crash between writing it and removing the journal.
				return nil
			}
			for _, rec := range jl.Recs {
				if err := rt.replay(rec); err != nil {
					return err
				}
			}
			s.gen = jl.Gen
			return nil
		}, true)
		f.Close()
		if err != nil {
			return fmt.Errorf("%s is corrupt: %w", s.journalPath(), err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if err := rt.rebindPlugins(); err != nil {
		return err
	}
	rt.rebuildPools()
	s.rt = rt
	return nil
}

// rebindPlugins gives every plugin SID its plugin's slot and its configuration's bytes again, after
// loading (a SID's bind is saved; the bytes are encoded from its settings as when it was applied).
func (r *runtime) rebindPlugins() error {
	for addr, sd := range r.sids {
		if sd.Bind == 0 {
			continue
		}
		pr := r.plugins[sd.Plugin]
		if pr == nil {
			return fmt.Errorf("SID %s runs plugin %q, which the saved state does not hold", addr, sd.Plugin)
		}
		b, names, err := r.encodeSettings(pr, sd.Config)
		if err != nil {
			return fmt.Errorf("SID %s: plugin %s: %w", addr, sd.Plugin, err)
		}
		sd.PluginSlot = pr.slot
		r.sids[addr] = sd
		r.pluginCfg[sd.Bind] = b
		r.pluginPolicies[sd.Bind] = names.policies
	}
	return nil
}

// readLines calls f for every line; with tornTail a last line without its newline is skipped.
func readLines(rd io.Reader, f func([]byte) error, tornTail bool) error {
	br := bufio.NewReaderSize(rd, 1<<20)
	for {
		line, err := br.ReadBytes('\n')
		if err == io.EOF {
			if len(line) > 0 && !tornTail {
				return f(line)
			}
			return nil
		}
		if err != nil {
			return err
		}
		if len(line) > 1 {
			if err := f(line); err != nil {
				return err
			}
		}
	}
}

func (r *runtime) rebuildPools() {
	used := map[uint32]bool{}
	for id := range r.polByID {
		used[id] = true
	}
	r.polIDs.rebuild(used)
	used = map[uint32]bool{}
	for _, t := range r.tenants {
		used[t.tableID] = true
	}
	r.tableIDs.rebuild(used)
	used = map[uint32]bool{}
	for _, sd := range r.sids {
		used[sd.ID] = true
	}
	r.sidIDs.rebuild(used)
	used = map[uint32]bool{}
	for _, n := range r.named {
		used[n.groups[0].id&^model.GroupFlag], used[n.groups[1].id&^model.GroupFlag] = true, true
	}
	r.groupIDs.rebuild(used)
	used = map[uint32]bool{}
	for _, pr := range r.plugins {
		used[pr.slot] = true
	}
	r.pluginSlots.rebuild(used)
	used = map[uint32]bool{}
	for b := range r.pluginCfg {
		used[b] = true
	}
	r.pluginBinds.rebuild(used)
}

// RemoveSaved deletes the saved state of instance dir (Purge, with the data plane's own part).
// savedFiles are the files a saved state is made of (state.json: an older format, read once;
// bgp-neighbors.json: what each BGP neighbor negotiated, internal/bgp/negotiation.go).
var savedFiles = []string{"state.snapshot", "state.journal", "state.json", "bgp-neighbors.json"}

// HasSaved says whether instance dir holds a saved state (an instance has been used there).
func HasSaved(dir string) bool {
	for _, f := range savedFiles {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			return true
		}
	}
	return false
}

func RemoveSaved(dir string) error {
	var errs []error
	for _, f := range savedFiles {
		if err := os.Remove(filepath.Join(dir, f)); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
