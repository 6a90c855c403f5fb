package state

// writes.go: the data plane steps of one commit, in an order that never lets a packet reach something
// not yet written (policies, SIDs and routes before the tenant ports that lead to them; removals in the
// reverse order), each entry with what undo restores. Planning only: the Dataplane runs the steps.

import (
	"maps"
	"net/netip"
	"slices"

	"github.com/seg6x/seg6x/internal/model"
)

func put(w Writes) Step { return Step{Kind: StepPut, Writes: w} }
func del(w Writes) Step { return Step{Kind: StepDelete, Writes: w} }

// prefixWrites are the puts and deletes that make a domain prefix table go from old to new.
func prefixWrites(old, new []netip.Prefix) (puts, dels []Write[netip.Prefix, struct{}]) {
	o, n := map[netip.Prefix]bool{}, map[netip.Prefix]bool{}
	for _, p := range old {
		o[p] = true
	}
	for _, p := range new {
		n[p] = true
	}
	for p := range n {
		if !o[p] {
			puts = append(puts, Write[netip.Prefix, struct{}]{Key: p})
		}
	}
	for p := range o {
		if !n[p] {
			dels = append(dels, Write[netip.Prefix, struct{}]{Key: p, Had: true})
		}
	}
	return puts, dels
}

// portsBefore is the port entries as they were before change c: interfaces, tenants and their table
// versions, and the domain's sources, as c recorded them.
func (c *change) portsBefore(rt *runtime) map[PortKey]PortSpec {
	var ifaces []model.Interface
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
	var tenants []model.Tenant
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
	return portImage(ifaces, tenants, c.vxlansBefore(rt), func(name string) PortSpec {
		if b, ok := c.tenants[name]; ok {
			return tenantSpec(b.tableID, &b.plens, &b.t)
		}
		t := rt.tenants[name]
		return tenantSpec(t.tableID, &t.plens, &t.Tenant)
	}, len(sources) > 0)
}

// steps plans the data plane steps that make it follow the in-memory change c.
func (s *Store) steps(c *change) []Step {
	rt := s.rt
	var out []Step
	add := func(st Step) {
		if (st.Writes != nil && st.Writes.Len() > 0) || len(st.IDs) > 0 || st.Kind == StepAttach || st.Kind == StepDetach || st.Kind == StepInvalidateNextHops {
			out = append(out, st)
		}
	}

	// 0. Plugins into their new slots, before any SID names them (their old slots empty in step 7).
	pluginPut, pluginDel := pluginWrites(c, rt)
	add(put(pluginPut))

	// 1. Redirect targets, and the domain's prefixes being added.
	var txPut, txDel TxPortWrites
	for name, b := range c.ifaces {
		it, has := rt.ifaces[name]
		if has && (!b.had || b.it.Ifindex != it.Ifindex) {
			idx := uint32(it.Ifindex)
			txPut = append(txPut, Write[uint32, uint32]{Key: idx, Val: idx})
		}
		if b.had && (!has || b.it.Ifindex != it.Ifindex) {
			idx := uint32(b.it.Ifindex)
			txDel = append(txDel, Write[uint32, uint32]{Key: idx, Old: idx, Had: true})
		}
	}
	add(put(txPut))
	domainBefore := rt.domain
	if c.domainBefore != nil {
		domainBefore = *c.domainBefore
	}
	spacePut, spaceDel := prefixWrites(domainBefore.Locators, rt.domain.Locators)
	srcPut, srcDel := prefixWrites(domainBefore.Sources, rt.domain.Sources)
	add(put(SIDSpaceWrites(spacePut)))
	add(put(SIDSourceWrites(srcPut)))

	// 2. New policies (and their counters) before any route points at them.
	var pols PolicyWrites
	var polIDs []uint32
	for _, p := range c.newPols {
		if p.refs == 0 {
			continue
		}
		polIDs = append(polIDs, p.id)
		// An array slot: undo zeroes it (Old: the zero PolicySpec).
		pols = append(pols, Write[uint32, PolicySpec]{Key: p.id, Val: policySpec(p), Had: true})
	}
	add(Step{Kind: StepResetCounters, Counters: TablePolicies, IDs: polIDs})
	add(put(pols))
	// Named policies' groups: their lists are written; routes may point at them from here on.
	groupPut, groupDel := s.groupWrites(c)
	add(put(groupPut))

	// 3. SIDs added or changed.
	var sidPut, sidDel SIDWrites
	var sidIDs []uint32
	for addr, b := range c.sids {
		sd, has := rt.sids[addr]
		e := Write[netip.Prefix, SIDSpec]{Key: b.sid.Prefix(), Had: b.had}
		var old SIDSpec
		if b.had {
			old = sidSpec(b.sid, func(name string) uint32 { return c.tenantTableBefore(rt, name) }, rt.pluginCfg, c.pluginsBefore(rt), rt.pluginPolicies)
			e.Old = old
		}
		if has && b.had && sd.Prefix() != b.sid.Prefix() {
			// The same address, another length: the old entry goes, the new one is written.
			sidDel = append(sidDel, e)
			e = Write[netip.Prefix, SIDSpec]{}
			b.had = false
		}
		if !has {
			sidDel = append(sidDel, e)
			continue
		}
		e.Key = sd.Prefix()
		v := sidSpec(sd, rt.tenantTable, rt.pluginCfg, rt.plugins, rt.pluginPolicies)
		e.Val = v
		if b.had && sameSIDSpec(v, old) {
			continue
		}
		if !b.had || b.sid.ID != sd.ID {
			sidIDs = append(sidIDs, sd.ID)
		}
		sidPut = append(sidPut, e)
	}
	add(Step{Kind: StepResetCounters, Counters: TableSIDs, IDs: sidIDs})
	add(put(sidPut))

	// 4. Routes: changed ones in place; swapped tables written whole under their new id.
	routePut, routeDel := make(RouteWrites, 0, c.nroutes), RouteWrites(nil)
	route := func(table uint32, p netip.Prefix, v, old *policy) RouteEntry {
		e := RouteEntry{Key: RouteKey{TableID: table, Prefix: p}, Had: old != nil}
		if v != nil {
			e.Val = v.id
		}
		if old != nil {
			e.Old = old.id
		}
		return e
	}
	for _, rc := range c.routeChanges(rt) {
		was, before := c.tenants[rc.tenant].tableID, rc.before
		if rc.t != nil && rc.t.tableID != was && before != nil {
			// The tenant was deleted and added again (a new table): the route leaves the old one.
			routeDel = append(routeDel, route(was, rc.prefix, nil, before))
			before = nil
		}
		switch {
		case rc.after != nil && rc.after != before:
			routePut = append(routePut, route(rc.t.tableID, rc.prefix, rc.after, before))
		case rc.after == nil && before != nil:
			routeDel = append(routeDel, route(was, rc.prefix, nil, before))
		}
	}
	// The swapped tables' entries carry the index's policy ids as they are: a policy the old table
	// named may be gone from the runtime by now (a named policy deleted after its routes moved).
	for name, sb := range c.swapped {
		if tn := rt.tenants[name]; tn != nil {
			for p, id := range tn.routes.all {
				routePut = append(routePut, RouteEntry{Key: RouteKey{TableID: tn.tableID, Prefix: p}, Val: id})
			}
		}
		for p, id := range sb.routes.all {
			routeDel = append(routeDel, RouteEntry{Key: RouteKey{TableID: sb.tableID, Prefix: p}, Old: id, Had: true})
		}
	}
	add(put(routePut))

	// 4b. VXLAN devices, the remotes they take packets from, then their bridges' MACs: all in before
	// the bridge ports that lead to them (step 5), out after (step 6).
	var vxDel []Writes // in the order of vxTables
	if len(c.vxlans) > 0 {
		was, now := vxlanImage(c.vxlansBefore(rt)), vxlanImage(rt.vxlanList())
		devPut, devDel := mapWrites(was.Devs, now.Devs)
		remPut, remDel := setWrites(was.Remotes, now.Remotes)
		rxPut, rxDel := mapWrites(was.Rx, now.Rx)
		macPut, macDel := mapWrites(was.MACs, now.MACs)
		for _, w := range []Writes{VXDevWrites(devPut), VXRemoteWrites(remPut), VXRxWrites(rxPut), VXMACWrites(macPut)} {
			add(put(w))
		}
		vxDel = []Writes{VXDevWrites(devDel), VXRemoteWrites(remDel), VXRxWrites(rxDel), VXMACWrites(macDel)}
	}

	// 5. Ports: sides of the boundary and the tenants' new table versions, with the prefix lengths of
	// old and new routes while old routes are still being removed.
	before := c.portsBefore(rt)
	sources := len(rt.domain.Sources) > 0
	final := portImage(rt.ifaceList(), rt.tenantList(), rt.vxlanList(), func(name string) PortSpec {
		tn := rt.tenants[name]
		return tenantSpec(tn.tableID, &tn.plens, &tn.Tenant)
	}, sources)
	mid := portImage(rt.ifaceList(), rt.tenantList(), rt.vxlanList(), func(name string) PortSpec {
		tn := rt.tenants[name]
		v := tenantSpec(tn.tableID, &tn.plens, &tn.Tenant)
		if b, ok := c.tenants[name]; ok && c.swapped[name] == nil && b.had && b.tableID == tn.tableID {
			setPlens(&v, &b.plens) // union: lengths of routes not yet deleted stay visible
		}
		return v
	}, sources)
	var portPut, portDel, portFinal PortWrites
	for k, v := range mid {
		old, had := before[k]
		if !had || old != v {
			portPut = append(portPut, Write[PortKey, PortSpec]{Key: k, Val: v, Old: old, Had: had})
		}
		if fv := final[k]; fv != v {
			portFinal = append(portFinal, Write[PortKey, PortSpec]{Key: k, Val: fv, Old: v, Had: true})
		}
	}
	for k, old := range before {
		if _, keep := mid[k]; !keep {
			portDel = append(portDel, Write[PortKey, PortSpec]{Key: k, Old: old, Had: true})
		}
	}
	add(put(portPut))
	// Programs on new interfaces start once everything they may reach, their own ports included, is in.
	for _, st := range s.attachNew(c) {
		add(st)
	}

	// 6. Removals, then the final prefix-length bitmaps.
	add(del(portDel))
	add(del(routeDel))
	add(del(groupDel))
	add(del(sidDel))
	for i := len(vxDel) - 1; i >= 0; i-- {
		add(del(vxDel[i]))
	}
	add(put(portFinal))
	add(del(SIDSpaceWrites(spaceDel)))
	add(del(SIDSourceWrites(srcDel)))

	// 7. Interfaces that left.
	for name, b := range c.ifaces {
		it, has := rt.ifaces[name]
		if !b.had || (has && it.Ifindex == b.it.Ifindex) {
			continue
		}
		add(Step{Kind: StepDetach, Iface: b.it})
	}
	add(del(pluginDel))
	add(del(txDel))
	if len(txDel) > 0 {
		// An egress interface left the redirect map: no cached next hop may name it any more.
		add(Step{Kind: StepInvalidateNextHops})
	}
	return out
}

// pluginsBefore are the plugins as they were before change c.
func (c *change) pluginsBefore(rt *runtime) map[string]*pluginRT {
	if len(c.plugins) == 0 {
		return rt.plugins
	}
	out := maps.Clone(rt.plugins)
	for name, b := range c.plugins {
		if b.had {
			out[name] = b.p
		} else {
			delete(out, name)
		}
	}
	return out
}

// pluginWrites are the plugins change c loaded (into new slots) and the slots it emptied (of plugins
// replaced or removed).
func pluginWrites(c *change, rt *runtime) (puts, dels PluginWrites) {
	for name, b := range c.plugins {
		now := rt.plugins[name]
		if now != nil && (!b.had || b.p.slot != now.slot) {
			puts = append(puts, Write[uint32, PluginSpec]{Key: now.slot, Val: pluginSpec(now)})
		}
		if b.had && (now == nil || b.p.slot != now.slot) {
			dels = append(dels, Write[uint32, PluginSpec]{Key: b.p.slot, Old: pluginSpec(b.p), Had: true})
		}
	}
	return puts, dels
}

func pluginSpec(pr *pluginRT) PluginSpec {
	return PluginSpec{Name: pr.Name, Digest: pr.Digest, Object: pr.Object}
}

// sameSIDSpec: a and b make the same data plane entry.
func sameSIDSpec(a, b SIDSpec) bool {
	x, y := a.SID, b.SID
	return a.Table == b.Table && a.Policy == b.Policy && a.Plugin == b.Plugin && a.Bind == b.Bind && slices.Equal(a.Policies, b.Policies) && x.ID == y.ID && x.Action == y.Action && x.NH4 == y.NH4 && x.NH6 == y.NH6 && x.VLAN == y.VLAN &&
		x.Prefix() == y.Prefix() && slices.Equal(x.Flavors, y.Flavors) && x.LBLen == y.LBLen && x.NFLen == y.NFLen
}

func (c *change) tenantTableBefore(rt *runtime, name string) uint32 {
	if b, ok := c.tenants[name]; ok {
		return b.t.Table
	}
	return rt.tenantTable(name)
}

// attachNew attaches the program to interfaces that are new or changed, or to every interface when
// the options (load-time settings of the program) changed; any other interface gets it only if it
// has none (a link lost since).
func (s *Store) attachNew(c *change) []Step {
	reload := c.optsBefore != nil && *c.optsBefore != s.rt.opts
	var out []Step
	for _, it := range s.rt.ifaces {
		b, touched := c.ifaces[it.Name]
		changed := touched && (!b.had || b.it.Mode != it.Mode || b.it.Ifindex != it.Ifindex)
		out = append(out, Step{Kind: StepAttach, Iface: it, Options: s.ProgramOptions(), IfDetached: !reload && !changed})
	}
	return out
}

// ProgramOptions are the load-time settings of the programs this store attaches.
func (s *Store) ProgramOptions() ProgramOptions {
	return ProgramOptions{NextHopCacheMs: s.NextHopCacheMs()}
}

// NextHopCacheMs is the next-hop cache time of the programs this store loads: the state's option,
// or when that is 0 the default the store was opened with.
func (s *Store) NextHopCacheMs() uint32 {
	if s.rt.opts.NextHopCacheMs != 0 {
		return s.rt.opts.NextHopCacheMs
	}
	return s.defaultNextHopCacheMs
}

// groupWrites are the puts and deletes of the groups of the named policies change c touched.
func (s *Store) groupWrites(c *change) (puts, dels GroupWrites) {
	for name, b := range c.named {
		n := s.rt.named[name]
		for fam := range 2 {
			switch {
			case n != nil:
				v := GroupSpec{Buckets: n.buckets(fam)}
				e := Write[uint32, GroupSpec]{Key: n.groups[fam].id &^ model.GroupFlag, Val: v, Had: b.had}
				if b.had {
					if b.buckets[fam] == v.Buckets {
						continue
					}
					e.Old = GroupSpec{Buckets: b.buckets[fam]}
				}
				puts = append(puts, e)
			case b.had:
				dels = append(dels, Write[uint32, GroupSpec]{Key: b.gids[fam], Old: GroupSpec{Buckets: b.buckets[fam]}, Had: true})
			}
		}
	}
	return puts, dels
}
