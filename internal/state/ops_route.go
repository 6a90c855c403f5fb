package state

// ops_route.go: operations on routes: one route, a route set (one route's fields for many prefixes),
// a tenant's whole table, and the coalescing of runs of route operations.

import (
	"fmt"
	"net/netip"
	"slices"

	"github.com/seg6x/seg6x/internal/model"
)

// setRoute points prefix of tenant t at pol (nil: removes it) on behalf of origin o, written as u
// (Route.USIDs, nil when none), keeping counts and the undo log; old is its policy now (nil: none).
func (s *Store) setRoute(c *change, t *tenantRT, prefix netip.Prefix, old, pol *policy, o model.Origin, u *model.USIDList) {
	oldOrigin, oldUSIDs := t.routeOrigin(prefix), t.usids[prefix]
	if pol != nil {
		t.setOrigin(prefix, o)
		t.setUSIDs(prefix, u)
	} else {
		t.setOrigin(prefix, t.Origin)
		t.setUSIDs(prefix, nil)
	}
	fam := famOf(prefix)
	if old != nil {
		s.unref(c, old)
		t.countRoute(prefix, -1)
		s.rt.nroutes[fam]--
	}
	if pol != nil {
		t.routes.set(prefix, pol.id)
		t.countRoute(prefix, 1)
		s.rt.nroutes[fam]++
	} else {
		t.routes.del(prefix)
	}
	c.undo = append(c.undo, undoStep{route: routeUndo{t: t, prefix: prefix, pol: pol, old: old, oldOrigin: oldOrigin, oldUSIDs: oldUSIDs}})
}

// mayAddRoutes: origin o may put routes into tenant t. A route belongs to its tenant's origin, except
// that BGP may add routes to a tenant of the API: those are BGP's.
func mayAddRoutes(t *tenantRT, o model.Origin) bool {
	return o == t.Origin || (t.Origin == model.OriginConfig && o == model.OriginBGP)
}

// routeOwned refuses a change of the route for p (had: it exists) by another origin than its owner's.
func routeOwned(op Op, t *tenantRT, p netip.Prefix, had bool, obj string) error {
	if had {
		return model.Owned(op.Origin, t.routeOrigin(p), obj)
	}
	if mayAddRoutes(t, op.Origin) {
		return nil
	}
	return model.Owned(op.Origin, t.Origin, obj)
}

func (s *Store) applyRoute(c *change, op Op) error {
	r := *op.Route // validation fills defaults in this copy; it replaces r.Segs, never writes into it
	obj := model.RouteObj(&r)
	if op.Kind != model.OpDelete {
		if err := model.Collect(func(add func(error)) { model.ValidateRouteAs(&r, obj, add) }); err != nil {
			return err
		}
	} else if !r.Prefix.IsValid() {
		return model.FieldErr(obj, "prefix", "missing or not a prefix")
	}
	t := s.rt.tenants[r.Tenant]
	if t == nil {
		return model.FieldErr(obj, "tenant", "unknown tenant %q", r.Tenant)
	}
	old := s.rt.policyOfRoute(t, r.Prefix)
	if err := routeOwned(op, t, r.Prefix, old != nil, obj); err != nil {
		return err
	}
	if err := s.checkRouteCapacity(op.Kind, r.Prefix); err != nil {
		return model.FieldErr(obj, "", "%v", err)
	}
	if err := exists(op.Kind, old != nil, obj); err != nil {
		return err
	}
	c.touchTenant(s.rt, t.Name)
	var pol *policy // nil: deleted
	if op.Kind != model.OpDelete {
		var err error
		if pol, err = s.acquire(c, routePolicy(&r, obj)); err != nil {
			return err
		}
		if pol == old && model.SameUSIDs(t.usids[r.Prefix], r.USIDs) {
			s.unref(c, pol) // unchanged
			c.touch(t.Name, r.Prefix, old)
			return nil
		}
	}
	// A new or changed route keeps the reference acquire took. Only the notation changed (the same
	// policy): nothing is written to the data plane, the change is saved.
	s.setRoute(c, t, r.Prefix, old, pol, op.Origin, r.USIDs)
	c.touch(t.Name, r.Prefix, old).after = pol
	c.note(op.Kind, old != nil, obj)
	return nil
}

// applyRouteSet applies op to each route of its set in turn, as that many Route operations would
// (the first error stops it; the commit then undoes the whole change): applyRoutes.
func (s *Store) applyRouteSet(c *change, op Op) error {
	_, err := s.applyRoutes(c, op, op.RouteSet.Route, op.RouteSet.Prefixes)
	return err
}

// applyRoutes applies route (kind and origin of op) for each of prefixes in turn, as that many
// Route operations would; on an error it returns the index of the prefix that failed. What the
// routes share is checked once: the first route goes through applyRoute, which validates the
// shared fields and the tenant; after it each prefix costs its own checks, the index writes and
// its diff line, and takes a reference on its family's policy (acquired once). A prefix the
// shortcut does not cover (a deletion, a malformed prefix, a refusal) goes through applyRoute,
// which gives the error a Route operation would.
func (s *Store) applyRoutes(c *change, op Op, route model.Route, prefixes []netip.Prefix) (int, error) {
	r := route
	one := op
	one.RouteSet, one.Route = nil, &r
	slow := func(p netip.Prefix) error {
		r = route
		r.Prefix = p
		return s.applyRoute(c, one)
	}
	if op.Kind == model.OpDelete || len(prefixes) == 0 {
		for i, p := range prefixes {
			if err := slow(p); err != nil {
				return i, err
			}
		}
		return 0, nil
	}
	if err := slow(prefixes[0]); err != nil {
		return 0, err
	}
	v := route // the shared fields as validation leaves them (defaults filled): the first route passed
	v.Prefix = prefixes[0]
	model.ValidateRouteAs(&v, "", func(error) {})
	t := s.rt.tenants[v.Tenant]
	var pols [2]*policy // per family: the policy every route of the set takes
	var refs [2]int     // the references taken on it, added at the end
	defer func() {
		for f, p := range pols {
			if p != nil && p != passPolicy && refs[f] != 0 {
				c.ref(p, refs[f])
			}
		}
	}()
	for i, p := range prefixes {
		if i == 0 {
			continue
		}
		old := s.rt.policyOfRoute(t, p)
		if !p.IsValid() || p != p.Masked() || routeOwned(op, t, p, old != nil, "") != nil ||
			s.checkRouteCapacity(op.Kind, p) != nil || exists(op.Kind, old != nil, "") != nil {
			if err := slow(p); err != nil {
				return i, err
			}
			continue
		}
		fam := famOf(p)
		pol := pols[fam]
		if pol == nil {
			v.Prefix = p
			var err error
			if pol, err = s.acquire(c, routePolicy(&v, model.RouteName(p, t.Name))); err != nil {
				return i, err
			}
			s.unref(c, pol) // counted in refs with the others
			pols[fam] = pol
		}
		if pol == old && model.SameUSIDs(t.usids[p], v.USIDs) {
			c.touch(t.Name, p, old) // unchanged
			continue
		}
		refs[fam]++
		s.setRoute(c, t, p, old, pol, op.Origin, v.USIDs)
		c.touch(t.Name, p, old).after = pol
		c.noteRoute(op.Kind, old != nil, p, t.Name)
	}
	return 0, nil
}

// routeRun is the end of the run of Route operations from ops[i] that differ only in their prefix
// (the same kind, origin and every other field): applyRoutes takes them as one set. i+1 when
// ops[i] starts none.
func routeRun(ops []Op, i int) int {
	if !coalesceRouteOps || !onlyRoute(&ops[i]) {
		return i + 1
	}
	j := i + 1
	for j < len(ops) && onlyRoute(&ops[j]) && ops[j].Kind == ops[i].Kind && ops[j].Origin == ops[i].Origin &&
		sameButPrefix(ops[i].Route, ops[j].Route) {
		j++
	}
	return j
}

// coalesceRouteOps: runs of Route operations go through applyRoutes (tests turn it off to compare).
var coalesceRouteOps = true

// onlyRoute: op carries a Route and nothing else (apply would take it).
func onlyRoute(op *Op) bool {
	return op.Route != nil && op.Kind >= model.OpAdd && op.Kind <= model.OpDelete && op.Options == nil && op.Domain == nil &&
		op.Interface == nil && op.Tenant == nil && op.RouteSet == nil && op.SID == nil && op.TenantRoutes == nil &&
		op.BGP == nil && op.Policy == nil && op.VXLAN == nil
}

// sameButPrefix: a and b are the same route but for its prefix (uSIDs: the same list).
func sameButPrefix(a, b *model.Route) bool {
	return a.Tenant == b.Tenant && a.Mode == b.Mode && a.Policy == b.Policy && a.USIDs == b.USIDs && a.Src == b.Src &&
		a.HopLimit == b.HopLimit && a.ID == b.ID && a.UsedSrc == b.UsedSrc && a.Origin == b.Origin &&
		a.Egress == b.Egress && a.TunnelMTU == b.TunnelMTU && slices.Equal(a.Segs, b.Segs)
}

func (s *Store) checkRouteCapacity(kind model.OpKind, p netip.Prefix) error {
	if kind == model.OpDelete {
		return nil
	}
	if p.Addr().Is4() && s.rt.nroutes[0] >= MaxRoutes4/2 {
		return fmt.Errorf("the data plane holds at most %d IPv4 routes (half of its table, to leave room for a table swap)", MaxRoutes4/2)
	}
	if p.Addr().Is6() && s.rt.nroutes[1] >= MaxRoutes6/2 {
		return fmt.Errorf("the data plane holds at most %d IPv6 routes", MaxRoutes6/2)
	}
	return nil
}

func (s *Store) applyTenantRoutes(c *change, op Op) error {
	tr := op.TenantRoutes
	obj := fmt.Sprintf("routes of tenant %q", tr.Tenant)
	if op.Kind != model.OpReplace {
		return model.FieldErr(obj, "", "a route table can only be replaced")
	}
	t := s.rt.tenants[tr.Tenant]
	if t == nil {
		return model.FieldErr(obj, "tenant", "unknown tenant %q", tr.Tenant)
	}
	if !mayAddRoutes(t, op.Origin) || (tr.All && op.Origin != t.Origin) {
		return model.Owned(op.Origin, t.Origin, obj)
	}
	seen := make(map[netip.Prefix]bool, len(tr.Routes))
	rs := make([]model.Route, len(tr.Routes))
	var errs model.Errors
	n4, n6 := 0, 0
	for i := range tr.Routes {
		r := tr.Routes[i]
		if r.Tenant == "" {
			r.Tenant = tr.Tenant
		}
		// A table comes by the hundred thousand routes: a route's name is made only for its errors.
		orig, n := r, len(errs)
		model.ValidateRouteAs(&r, "", func(err error) { errs = append(errs, err) })
		if len(errs) > n {
			errs, r = errs[:n], orig
			model.ValidateRoute(&r, func(err error) { errs = append(errs, err) })
		}
		if r.Tenant != tr.Tenant {
			errs = append(errs, model.FieldErr(model.RouteObj(&r), "tenant", "not %q, the tenant whose routes are replaced", tr.Tenant))
		}
		if seen[r.Prefix] {
			errs = append(errs, model.FieldErr(model.RouteObj(&r), "", "defined twice"))
		}
		seen[r.Prefix] = true
		r.Origin = op.Origin
		if r.Prefix.Addr().Is4() {
			n4++
		} else {
			n6++
		}
		rs[i] = r
	}
	// Other origins' routes stay (unless All): the new table holds them as they are.
	var others []netip.Prefix
	for p := range t.routes.all {
		if o := t.routeOrigin(p); !tr.All && o != op.Origin {
			others = append(others, p)
		}
	}
	slices.SortFunc(others, netip.Prefix.Compare) // sorted: policy ids and diff lines repeatable
	for _, p := range others {
		if seen[p] {
			errs = append(errs, model.Owned(op.Origin, t.routeOrigin(p), model.RouteObj(&model.Route{Tenant: t.Name, Prefix: p})))
		}
		if p.Addr().Is4() {
			n4++
		} else {
			n6++
		}
		rs = append(rs, routeView(t, p, s.rt.policyOfRoute(t, p)))
	}
	if len(errs) > 0 {
		return errs
	}
	c4, c6 := len(t.routes.v4), len(t.routes.v6)
	// During the swap the maps hold the old and the new table; afterwards the usual limit applies.
	if s.rt.nroutes[0]+n4 > MaxRoutes4 || s.rt.nroutes[1]+n6 > MaxRoutes6 ||
		s.rt.nroutes[0]-c4+n4 > MaxRoutes4/2 || s.rt.nroutes[1]-c6+n6 > MaxRoutes6/2 {
		return model.FieldErr(obj, "", "too many routes for the data plane (IPv4 %d, IPv6 %d)", MaxRoutes4/2, MaxRoutes6/2)
	}
	c.touchTenant(s.rt, t.Name)
	if _, ok := c.swapped[t.Name]; !ok {
		c.swapped[t.Name] = &swapBefore{tableID: t.tableID, routes: t.routes}
	}
	newID, err := s.rt.tableIDs.alloc()
	if err != nil {
		return model.FieldErr(obj, "", "%v", err)
	}
	oldID, oldRoutes, oldPlens, oldN, oldOrigins, oldUSIDs := t.tableID, t.routes, t.plens, s.rt.nroutes, t.origins, t.usids
	for _, id := range oldRoutes.all {
		if p := s.rt.policyOf(id); p != nil {
			s.unref(c, p)
		}
	}
	t.tableID, t.routes, t.plens, t.origins, t.usids = newID, newRouteIndex(n4), [2][129]uint32{}, originIndex{}, nil
	s.rt.nroutes[0] -= c4
	s.rt.nroutes[1] -= c6
	c.onUndo(func() {
		t.tableID, t.routes, t.plens, s.rt.nroutes, t.origins, t.usids = oldID, oldRoutes, oldPlens, oldN, oldOrigins, oldUSIDs
		s.rt.tableIDs.release(newID, false)
	})
	for i := range rs {
		pol, err := s.acquire(c, routePolicy(&rs[i], ""))
		if err != nil {
			if fe, ok := err.(*model.FieldError); ok && fe.Object == "" {
				fe.Object = model.RouteObj(&rs[i])
			}
			return err
		}
		t.routes.set(rs[i].Prefix, pol.id)
		t.setOrigin(rs[i].Prefix, rs[i].Origin)
		t.setUSIDs(rs[i].Prefix, rs[i].USIDs)
		t.countRoute(rs[i].Prefix, 1)
		if old, had := oldRoutes.get(rs[i].Prefix); !had || old != pol.id || !model.SameUSIDs(oldUSIDs[rs[i].Prefix], rs[i].USIDs) {
			c.noteRoute(model.OpReplace, had, rs[i].Prefix, t.Name)
		}
	}
	var gone []netip.Prefix
	for p := range oldRoutes.all {
		if _, kept := t.routes.get(p); !kept {
			gone = append(gone, p)
		}
	}
	slices.SortFunc(gone, netip.Prefix.Compare)
	for _, p := range gone {
		c.noteRoute(model.OpDelete, true, p, t.Name)
	}
	s.rt.nroutes[0] += n4
	s.rt.nroutes[1] += n6
	return nil
}
