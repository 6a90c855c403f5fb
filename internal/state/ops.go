package state

// ops.go: the operations a commit is made of (add, replace or delete one object, or replace a
// tenant's whole route table), applied to the in-memory state with an undo log and a record of what
// each touched object was before, from which the map writes are computed.

import (
	"fmt"
	"maps"
	"net/netip"
	"slices"
)

// OpKind says what an operation does with its object.
type OpKind int

const (
	OpAdd     OpKind = iota + 1 // create; an error if it exists
	OpReplace                   // create or replace
	OpDelete                    // remove; an error if it does not exist
)

func (k OpKind) String() string {
	switch k {
	case OpAdd:
		return "add"
	case OpReplace:
		return "replace"
	case OpDelete:
		return "delete"
	}
	return fmt.Sprintf("op(%d)", int(k))
}

// Op is one change. Exactly one object field is set; for OpDelete only its key fields matter.
type Op struct {
	Kind         OpKind
	Origin       Origin // who asks (origins.go): it may only change objects of its own origin
	Options      *Options
	Domain       *Domain
	Interface    *Interface
	Tenant       *Tenant
	Route        *Route
	RouteSet     *RouteSet
	SID          *SID
	TenantRoutes *TenantRoutes
	BGP          *BGP // OpReplace or OpDelete (the whole section)
	Policy       *Policy
	VXLAN        *VXLAN // the kernel mirror's only (vxlan.go)
}

// RouteSet is one route per prefix, each with every other field of Route (whose Prefix is not used):
// the operation is applied to each in turn, as if each were an operation of its own.
type RouteSet struct {
	Route    Route
	Prefixes []netip.Prefix
}

// TenantRoutes replaces every route of a tenant in one step: traffic sees the old table or the new
// one, never a mix (the data plane switches table versions with one write per tenant port).
type TenantRoutes struct {
	Tenant string
	Routes []Route
	// All replaces the routes of every origin (the tenant's owner, removing it); otherwise only the
	// asking origin's routes are replaced and the others' stay.
	All bool
}

type routeKey struct {
	tenant string
	prefix netip.Prefix
}

type tenantBefore struct {
	had     bool
	t       Tenant
	tableID uint32
	plens   [2][129]uint32
}

type swapBefore struct {
	tableID uint32
	routes  routeIndex
}

type sidBefore struct {
	had bool
	sid SID
}

type ifaceBefore struct {
	had bool
	it  Interface
}

// change is what one commit did to the in-memory state, and how to undo it.
type change struct {
	optsBefore   *Options
	domainBefore *Domain
	bgpTouched   bool // the bgp section was replaced or deleted; bgpBefore is what it was
	bgpBefore    *BGP
	ifaces       map[string]ifaceBefore
	tenants      map[string]*tenantBefore
	routes       map[string]*routeEdits // by tenant: the routes applyRoute changed (not the tables swapped whole)
	nroutes      int                    // how many: the routes' records in routes
	hint         int                    // routes the commit's operations carry: the first tenant's list is made for them
	lastEdits    *routeEdits            // the tenant whose routes were touched last, and its name
	lastTenant   string
	changes      []routeChange // routeChanges, once made
	swapped      map[string]*swapBefore
	sids         map[netip.Addr]sidBefore
	named        map[string]namedBefore
	vxlans       map[string]vxlanBefore
	newPols      []*policy
	pols         map[*policy]int // policies whose refcount changed: what it was before (rollback restores it)
	lastPol      *policy         // the policy acquire found or made last (policies leave the map only after a commit)
	undo         []undoStep
	rt           *runtime // the state the change is made to
	diff         *Diff
	diffLimit    int // CommitOptions.DiffLimit
}

// routeEdit is a route's policy before a commit and after its last operation (nil: absent).
type routeEdit struct{ before, after *policy }

// routeEdits are one tenant's routes a change touched: their records, found by prefix through
// pointer-free indexes (routeindex.go's keys).
type routeEdits struct {
	at   routeIndex    // prefix -> its record's place in list
	list []routeChange // t is set by routeChanges
}

// touch is the record of tenant's route for p in c, made with before and after old (its policy
// now) on the first touch. The pointer is good until the next touch.
func (c *change) touch(tenant string, p netip.Prefix, old *policy) *routeEdit {
	es := c.lastEdits
	if es == nil || c.lastTenant != tenant {
		if es = c.routes[tenant]; es == nil {
			n := 8
			if len(c.routes) == 0 {
				n = max(c.hint, n) // the commit's routes, as a bulk load's commit goes to one tenant
			}
			es = &routeEdits{at: newRouteIndex(n), list: make([]routeChange, 0, n)}
			c.routes[tenant] = es
		}
		c.lastEdits, c.lastTenant = es, tenant
	}
	i, seen := es.at.get(p)
	if !seen {
		i = uint32(len(es.list))
		es.at.set(p, i)
		es.list = append(es.list, routeChange{routeKey: routeKey{tenant, p}, routeEdit: routeEdit{old, old}})
		c.nroutes++
	}
	return &es.list[i].routeEdit
}

// routeChange is a route commit c changed outside the tables it swapped, with its tenant after
// the commit (nil: gone).
type routeChange struct {
	routeKey
	routeEdit
	t *tenantRT
}

// routeChanges lists c's route changes, made once every operation is applied (the data plane
// steps and the journal both use the list).
func (c *change) routeChanges(rt *runtime) []routeChange {
	if c.changes == nil {
		c.changes = make([]routeChange, 0, c.nroutes)
		for tenant, es := range c.routes {
			if c.swapped[tenant] == nil {
				t := rt.tenants[tenant]
				for _, rc := range es.list {
					rc.t = t
					c.changes = append(c.changes, rc)
				}
			}
		}
	}
	return c.changes
}

// newChange starts a change of ops (its route records, undo log and list of added objects sized for
// their routes; diffLimit: CommitOptions.DiffLimit).
func newChange(rt *runtime, ops []Op, diffLimit int) *change {
	n := 0
	for _, op := range ops {
		if op.Route != nil {
			n++
		}
		if op.RouteSet != nil {
			n += len(op.RouteSet.Prefixes)
		}
	}
	listed := n
	if diffLimit > 0 {
		listed = min(n, diffLimit)
	}
	return &change{rt: rt, ifaces: map[string]ifaceBefore{}, tenants: map[string]*tenantBefore{},
		routes: map[string]*routeEdits{}, hint: n, swapped: map[string]*swapBefore{}, sids: map[netip.Addr]sidBefore{},
		named: map[string]namedBefore{}, vxlans: map[string]vxlanBefore{}, pols: map[*policy]int{},
		undo: make([]undoStep, 0, n+8), diffLimit: diffLimit,
		diff: &Diff{Added: make([]string, 0, listed), Changed: []string{}, Removed: []string{}}}
}

func (c *change) onUndo(f func()) { c.undo = append(c.undo, undoStep{f: f}) }

// undoStep is one step of a change's undo log: f, or (f nil) a route set back as it was. Routes
// come by the million: theirs is a record in the log, not a closure allocated each.
type undoStep struct {
	f     func()
	route routeUndo
}

// routeUndo is what setRoute changed: the route for prefix of tenant t, set to pol (nil: removed)
// from old, with its origin and uSID notation before.
type routeUndo struct {
	t         *tenantRT
	prefix    netip.Prefix
	pol, old  *policy
	oldOrigin Origin
	oldUSIDs  *USIDList
}

func (u *routeUndo) undo(rt *runtime) {
	t, fam := u.t, famOf(u.prefix)
	if u.pol != nil {
		t.countRoute(u.prefix, -1)
		rt.nroutes[fam]--
	}
	if u.old != nil {
		t.routes.set(u.prefix, u.old.id)
		t.countRoute(u.prefix, 1)
		rt.nroutes[fam]++
	} else {
		t.routes.del(u.prefix)
	}
	t.setOrigin(u.prefix, u.oldOrigin)
	t.setUSIDs(u.prefix, u.oldUSIDs)
}

func (c *change) rollback() {
	for i := len(c.undo) - 1; i >= 0; i-- {
		if u := &c.undo[i]; u.f != nil {
			u.f()
		} else {
			u.route.undo(c.rt)
		}
	}
	c.undo = nil
	for p, refs := range c.pols {
		p.refs = refs
	}
}

// ref changes the reference count of p by delta (rollback restores it).
func (c *change) ref(p *policy, delta int) {
	if _, seen := c.pols[p]; !seen {
		c.pols[p] = p.refs
	}
	p.refs += delta
}

// note lists object what in c's diff: removed, changed (it existed) or added; past the commit's
// limit (diffLimit, 0: none) only counted.
func (c *change) note(kind OpKind, existed bool, what string) {
	c.diff.count(what, kind, existed)
	if l, more := c.diffList(kind, existed); c.diffLimit <= 0 || len(*l) < c.diffLimit {
		*l = append(*l, what)
	} else {
		*more++
	}
}

// noteRoute is note for the route for p of tenant, its line made only when it is listed.
func (c *change) noteRoute(kind OpKind, existed bool, p netip.Prefix, tenant string) {
	c.diff.countKind("route", kind, existed)
	if l, more := c.diffList(kind, existed); c.diffLimit <= 0 || len(*l) < c.diffLimit {
		*l = append(*l, routeName(p, tenant))
	} else {
		*more++
	}
}

func (c *change) diffList(kind OpKind, existed bool) (*[]string, *int) {
	switch {
	case kind == OpDelete:
		return &c.diff.Removed, &c.diff.MoreRemoved
	case existed:
		return &c.diff.Changed, &c.diff.MoreChanged
	}
	return &c.diff.Added, &c.diff.MoreAdded
}

func (c *change) touchTenant(r *runtime, name string) {
	if _, ok := c.tenants[name]; ok {
		return
	}
	b := &tenantBefore{}
	if t := r.tenants[name]; t != nil {
		b.had, b.tableID, b.plens = true, t.tableID, t.plens
		b.t = t.Tenant
		b.t.Ports = slices.Clone(t.Ports)
	}
	c.tenants[name] = b
}

// apply performs one operation on the in-memory state (s.rt), recording it in c.
func (s *Store) apply(c *change, op Op) error {
	n := 0
	for _, set := range []bool{op.Options != nil, op.Domain != nil, op.Interface != nil, op.Tenant != nil, op.Route != nil,
		op.RouteSet != nil, op.SID != nil, op.TenantRoutes != nil, op.BGP != nil, op.Policy != nil, op.VXLAN != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		return fmt.Errorf("an operation carries exactly one object, this one has %d", n)
	}
	if op.Kind < OpAdd || op.Kind > OpDelete {
		return fmt.Errorf("unknown operation kind %d", int(op.Kind))
	}
	switch {
	case op.Options != nil:
		return s.applyOptions(c, op)
	case op.Domain != nil:
		return s.applyDomain(c, op)
	case op.Interface != nil:
		return s.applyInterface(c, op)
	case op.Tenant != nil:
		return s.applyTenant(c, op)
	case op.Route != nil:
		return s.applyRoute(c, op)
	case op.RouteSet != nil:
		return s.applyRouteSet(c, op)
	case op.SID != nil:
		return s.applySID(c, op)
	case op.BGP != nil:
		return s.applyBGP(c, op)
	case op.Policy != nil:
		return s.applyPolicy(c, op)
	case op.VXLAN != nil:
		return s.applyVXLAN(c, op)
	default:
		return s.applyTenantRoutes(c, op)
	}
}

func collect(f func(add func(error))) error {
	var errs Errors
	f(func(err error) { errs = append(errs, err) })
	if len(errs) == 0 {
		return nil
	}
	return errs
}

func exists(kind OpKind, had bool, obj string) error {
	if kind == OpAdd && had {
		return fieldErr(obj, "", "already exists (use replace to change it)")
	}
	if kind == OpDelete && !had {
		return fieldErr(obj, "", "does not exist")
	}
	return nil
}

func (s *Store) applyOptions(c *change, op Op) error {
	if op.Kind != OpReplace {
		return fieldErr("options", "", "options can only be replaced")
	}
	o := *op.Options
	if err := collect(func(add func(error)) { validateOptions(&o, add) }); err != nil {
		return err
	}
	old := s.rt.opts
	if c.optsBefore == nil {
		c.optsBefore = &old
	}
	if o != old {
		c.note(OpReplace, true, fmt.Sprintf("options (nexthop_cache_ms %d -> %d)", old.NextHopCacheMs, o.NextHopCacheMs))
	}
	s.rt.opts = o
	c.onUndo(func() { s.rt.opts = old })
	return nil
}

func (s *Store) applyDomain(c *change, op Op) error {
	if op.Kind != OpReplace {
		return fieldErr("domain", "", "the domain can only be replaced (give empty lists to clear it)")
	}
	d := cloneDomain(*op.Domain)
	if err := collect(func(add func(error)) { validateDomain(&d, add) }); err != nil {
		return err
	}
	old := s.rt.domain
	if c.domainBefore == nil {
		b := cloneDomain(old)
		c.domainBefore = &b
	}
	if slices.Equal(d.Locators, old.Locators) && slices.Equal(d.Sources, old.Sources) {
		return nil
	}
	c.note(OpReplace, true, fmt.Sprintf("domain (%d locators, %d sources)", len(d.Locators), len(d.Sources)))
	s.rt.domain = d
	c.onUndo(func() { s.rt.domain = old })
	return nil
}

func (s *Store) applyInterface(c *change, op Op) error {
	it := *op.Interface
	obj := fmt.Sprintf("interface %q", it.Name)
	old, had := s.rt.ifaces[it.Name]
	if err := exists(op.Kind, had, obj); err != nil {
		return err
	}
	if _, ok := c.ifaces[it.Name]; !ok {
		c.ifaces[it.Name] = ifaceBefore{had: had, it: old}
	}
	if op.Kind == OpDelete {
		setEntry(c, s.rt.ifaces, it.Name, Interface{}, true)
		c.note(op.Kind, had, obj)
		return nil
	}
	if err := collect(func(add func(error)) { validateInterface(&it, add) }); err != nil {
		return err
	}
	idx, err := s.Env.Ifindex(it.Name)
	if err != nil {
		return fieldErr(obj, "name", "%v", err)
	}
	it.Ifindex = idx
	if had && old == it {
		return nil
	}
	setEntry(c, s.rt.ifaces, it.Name, it, false)
	c.note(op.Kind, had, obj)
	return nil
}

// setEntry sets m[k] = v (del: removes k) and records how to restore what was there.
func setEntry[K comparable, V any](c *change, m map[K]V, k K, v V, del bool) {
	old, had := m[k]
	if del {
		delete(m, k)
	} else {
		m[k] = v
	}
	c.onUndo(func() {
		if had {
			m[k] = old
		} else {
			delete(m, k)
		}
	})
}

func (s *Store) applyTenant(c *change, op Op) error {
	nt := *op.Tenant
	nt.Ports = slices.Clone(nt.Ports)
	nt.VPN = cloneVPN(nt.VPN)
	if nt.VPN != nil {
		nt.VPN.ServiceSID = netip.Addr{}
	}
	obj := tenantObj(&nt)
	cur := s.rt.tenants[nt.Name]
	if err := exists(op.Kind, cur != nil, obj); err != nil {
		return err
	}
	if cur != nil {
		if err := owned(op, cur.Origin, obj); err != nil {
			return err
		}
	}
	nt.Origin = op.Origin
	c.touchTenant(s.rt, nt.Name)
	if op.Kind == OpDelete {
		if n := cur.routes.len(); n > 0 {
			return fieldErr(obj, "", "still has %d routes; delete them first (or replace its routes with none)", n)
		}
		s.setPorts(c, cur.Name, cur.Ports, nil)
		delete(s.rt.tenants, nt.Name)
		c.onUndo(func() { s.rt.tenants[cur.Name] = cur })
		c.note(op.Kind, true, obj)
		return nil
	}
	if err := collect(func(add func(error)) { validateTenant(&nt, add) }); err != nil {
		return err
	}
	for i := range nt.Ports {
		idx, err := s.Env.Ifindex(nt.Ports[i].Dev)
		if err != nil {
			return fieldErr(obj, "dev", "%v", err)
		}
		nt.Ports[i].Ifindex = idx
	}
	for _, p := range nt.Ports {
		if owner, ok := s.rt.ports[Port{Dev: p.Dev, VLAN: p.VLAN}]; ok && owner != nt.Name {
			return fieldErr(obj, "port", "dev %s vlan %d already belongs to tenant %q", p.Dev, p.VLAN, owner)
		}
	}
	if nt.Table != 0 && nt.Origin != OriginKernel && (cur == nil || cur.Table != nt.Table) {
		for name, o := range s.rt.tenants {
			if name != nt.Name && o.Table == nt.Table && o.Origin != OriginKernel {
				return fieldErr(obj, "table", "%d already belongs to tenant %q (each tenant's routes are looked up in its own table)", nt.Table, name)
			}
		}
	}
	nt.ID = 0
	if cur == nil {
		id, err := s.rt.tableIDs.alloc()
		if err != nil {
			return fieldErr(obj, "", "%v", err)
		}
		t := &tenantRT{Tenant: nt, tableID: id, routes: newRouteIndex(0)}
		s.rt.tenants[nt.Name] = t
		s.setPorts(c, nt.Name, nil, nt.Ports)
		c.onUndo(func() { delete(s.rt.tenants, nt.Name); s.rt.tableIDs.release(id, false) })
		c.note(op.Kind, false, obj)
		return nil
	}
	if same(cur.Tenant, nt) {
		return nil
	}
	old := cur.Tenant
	s.setPorts(c, nt.Name, cur.Ports, nt.Ports)
	cur.Tenant = nt
	c.onUndo(func() { cur.Tenant = old })
	c.note(op.Kind, true, obj)
	return nil
}

// setPorts moves the port index of tenant from ports old to ports new.
func (s *Store) setPorts(c *change, tenant string, old, new []Port) {
	for _, p := range old {
		k := Port{Dev: p.Dev, VLAN: p.VLAN}
		delete(s.rt.ports, k)
		c.onUndo(func() { s.rt.ports[k] = tenant })
	}
	for _, p := range new {
		k := Port{Dev: p.Dev, VLAN: p.VLAN}
		s.rt.ports[k] = tenant
		c.onUndo(func() { delete(s.rt.ports, k) })
	}
}

// policyReq is what an SR policy is made of: a route's segment list, or a binding SID's.
type policyReq struct {
	inner6   bool
	mode     string
	segs     []netip.Addr
	src      netip.Addr
	hopLimit uint8
	named    string // a named policy (policies.go): its group for the inner family, instead of the above
	obj      string // the route or SID asking, for errors
}

// routePolicy is the policy request of route r (validated), named obj (routeObj) in errors.
func routePolicy(r *Route, obj string) policyReq {
	if r.Policy != "" {
		return policyReq{inner6: r.Prefix.Addr().Is6(), named: r.Policy, obj: obj}
	}
	return policyReq{inner6: r.Prefix.Addr().Is6(), mode: r.Mode, segs: r.Segs, src: r.Src, hopLimit: r.HopLimit, obj: obj}
}

// bindingPolicy is the policy request of binding SID sd (validated): the inner packet is the IPv6
// packet that arrived; the outer hop limit comes from it per packet (the policy's is a default,
// so that a route with the same list shares the policy).
func bindingPolicy(sd *SID, b *Behavior) policyReq {
	return policyReq{inner6: true, mode: b.PolicyMode, segs: sd.Segs, src: sd.Src, hopLimit: DefaultHopLimit, obj: sidObj(sd)}
}

// acquire finds or creates the policy q asks for and takes a reference on it.
func (s *Store) acquire(c *change, q policyReq) (*policy, error) {
	if q.mode == ModePass {
		return passPolicy, nil
	}
	if q.named != "" {
		n := s.rt.named[q.named]
		if n == nil {
			return nil, fieldErr(q.obj, "policy", "unknown policy %q", q.named)
		}
		g := n.groups[boolInt(q.inner6)]
		c.ref(g, 1)
		return g, nil
	}
	var buf [128]byte
	kb := appendPolicyKey(buf[:0], q.inner6, q.mode, q.segs, q.src, q.hopLimit)
	p := c.lastPol // routes in bulk come in runs of one segment list: the last answer first
	if p == nil || p.key != string(kb) {
		p = s.rt.policies[string(kb)]
	}
	if p == nil {
		key := string(kb)
		used := q.src
		if !used.IsValid() {
			src, err := s.Env.SourceFor(q.segs[0])
			if err != nil {
				return nil, fieldErr(q.obj, "src", "%v", err)
			}
			used = src
		}
		id, err := s.rt.polIDs.alloc()
		if err != nil {
			return nil, fieldErr(q.obj, "", "%v", err)
		}
		p = &policy{id: id, key: key, inner6: q.inner6, mode: q.mode, segs: slices.Clone(q.segs),
			src: q.src, usedSrc: used, hopLimit: q.hopLimit}
		s.rt.policies[key] = p
		s.rt.polByID[id] = p
		c.newPols = append(c.newPols, p)
		c.onUndo(func() {
			delete(s.rt.policies, key)
			delete(s.rt.polByID, id)
			s.rt.polIDs.release(id, false)
		})
	}
	c.ref(p, 1)
	c.lastPol = p
	return p, nil
}

func (s *Store) unref(c *change, p *policy) {
	if p == passPolicy {
		return
	}
	c.ref(p, -1)
}

// setRoute points prefix of tenant t at pol (nil: removes it) on behalf of origin o, written as u
// (Route.USIDs, nil when none), keeping counts and the undo log; old is its policy now (nil: none).
func (s *Store) setRoute(c *change, t *tenantRT, prefix netip.Prefix, old, pol *policy, o Origin, u *USIDList) {
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
func mayAddRoutes(t *tenantRT, o Origin) bool {
	return o == t.Origin || (t.Origin == OriginConfig && o == OriginBGP)
}

// routeOwned refuses a change of the route for p (had: it exists) by another origin than its owner's.
func routeOwned(op Op, t *tenantRT, p netip.Prefix, had bool, obj string) error {
	if had {
		return owned(op, t.routeOrigin(p), obj)
	}
	if mayAddRoutes(t, op.Origin) {
		return nil
	}
	return owned(op, t.Origin, obj)
}

func (s *Store) applyRoute(c *change, op Op) error {
	r := *op.Route // validation fills defaults in this copy; it replaces r.Segs, never writes into it
	obj := routeObj(&r)
	if op.Kind != OpDelete {
		if err := collect(func(add func(error)) { validateRouteAs(&r, obj, add) }); err != nil {
			return err
		}
	} else if !r.Prefix.IsValid() {
		return fieldErr(obj, "prefix", "missing or not a prefix")
	}
	t := s.rt.tenants[r.Tenant]
	if t == nil {
		return fieldErr(obj, "tenant", "unknown tenant %q", r.Tenant)
	}
	old := s.rt.routeOf(t, r.Prefix)
	if err := routeOwned(op, t, r.Prefix, old != nil, obj); err != nil {
		return err
	}
	if err := s.checkRouteCapacity(op.Kind, r.Prefix); err != nil {
		return fieldErr(obj, "", "%v", err)
	}
	if err := exists(op.Kind, old != nil, obj); err != nil {
		return err
	}
	c.touchTenant(s.rt, t.Name)
	var pol *policy // nil: deleted
	if op.Kind != OpDelete {
		var err error
		if pol, err = s.acquire(c, routePolicy(&r, obj)); err != nil {
			return err
		}
		if pol == old && sameUSIDs(t.usids[r.Prefix], r.USIDs) {
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
func (s *Store) applyRoutes(c *change, op Op, route Route, prefixes []netip.Prefix) (int, error) {
	r := route
	one := op
	one.RouteSet, one.Route = nil, &r
	slow := func(p netip.Prefix) error {
		r = route
		r.Prefix = p
		return s.applyRoute(c, one)
	}
	if op.Kind == OpDelete || len(prefixes) == 0 {
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
	validateRouteAs(&v, "", func(error) {})
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
		old := s.rt.routeOf(t, p)
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
			if pol, err = s.acquire(c, routePolicy(&v, routeName(p, t.Name))); err != nil {
				return i, err
			}
			s.unref(c, pol) // counted in refs with the others
			pols[fam] = pol
		}
		if pol == old && sameUSIDs(t.usids[p], v.USIDs) {
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
	return op.Route != nil && op.Kind >= OpAdd && op.Kind <= OpDelete && op.Options == nil && op.Domain == nil &&
		op.Interface == nil && op.Tenant == nil && op.RouteSet == nil && op.SID == nil && op.TenantRoutes == nil &&
		op.BGP == nil && op.Policy == nil && op.VXLAN == nil
}

// sameButPrefix: a and b are the same route but for its prefix (uSIDs: the same list).
func sameButPrefix(a, b *Route) bool {
	return a.Tenant == b.Tenant && a.Mode == b.Mode && a.Policy == b.Policy && a.USIDs == b.USIDs && a.Src == b.Src &&
		a.HopLimit == b.HopLimit && a.ID == b.ID && a.UsedSrc == b.UsedSrc && a.Origin == b.Origin &&
		a.Egress == b.Egress && a.TunnelMTU == b.TunnelMTU && slices.Equal(a.Segs, b.Segs)
}

func (s *Store) checkRouteCapacity(kind OpKind, p netip.Prefix) error {
	if kind == OpDelete {
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
	if op.Kind != OpReplace {
		return fieldErr(obj, "", "a route table can only be replaced")
	}
	t := s.rt.tenants[tr.Tenant]
	if t == nil {
		return fieldErr(obj, "tenant", "unknown tenant %q", tr.Tenant)
	}
	if !mayAddRoutes(t, op.Origin) || (tr.All && op.Origin != t.Origin) {
		return owned(op, t.Origin, obj)
	}
	seen := make(map[netip.Prefix]bool, len(tr.Routes))
	rs := make([]Route, len(tr.Routes))
	var errs Errors
	n4, n6 := 0, 0
	for i := range tr.Routes {
		r := tr.Routes[i]
		if r.Tenant == "" {
			r.Tenant = tr.Tenant
		}
		// A table comes by the hundred thousand routes: a route's name is made only for its errors.
		orig, n := r, len(errs)
		validateRouteAs(&r, "", func(err error) { errs = append(errs, err) })
		if len(errs) > n {
			errs, r = errs[:n], orig
			validateRoute(&r, func(err error) { errs = append(errs, err) })
		}
		if r.Tenant != tr.Tenant {
			errs = append(errs, fieldErr(routeObj(&r), "tenant", "not %q, the tenant whose routes are replaced", tr.Tenant))
		}
		if seen[r.Prefix] {
			errs = append(errs, fieldErr(routeObj(&r), "", "defined twice"))
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
			errs = append(errs, owned(op, t.routeOrigin(p), routeObj(&Route{Tenant: t.Name, Prefix: p})))
		}
		if p.Addr().Is4() {
			n4++
		} else {
			n6++
		}
		rs = append(rs, routeOf(t, p, s.rt.routeOf(t, p)))
	}
	if len(errs) > 0 {
		return errs
	}
	c4, c6 := len(t.routes.v4), len(t.routes.v6)
	// During the swap the maps hold the old and the new table; afterwards the usual limit applies.
	if s.rt.nroutes[0]+n4 > MaxRoutes4 || s.rt.nroutes[1]+n6 > MaxRoutes6 ||
		s.rt.nroutes[0]-c4+n4 > MaxRoutes4/2 || s.rt.nroutes[1]-c6+n6 > MaxRoutes6/2 {
		return fieldErr(obj, "", "too many routes for the data plane (IPv4 %d, IPv6 %d)", MaxRoutes4/2, MaxRoutes6/2)
	}
	c.touchTenant(s.rt, t.Name)
	if _, ok := c.swapped[t.Name]; !ok {
		c.swapped[t.Name] = &swapBefore{tableID: t.tableID, routes: t.routes}
	}
	newID, err := s.rt.tableIDs.alloc()
	if err != nil {
		return fieldErr(obj, "", "%v", err)
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
			if fe, ok := err.(*FieldError); ok && fe.Object == "" {
				fe.Object = routeObj(&rs[i])
			}
			return err
		}
		t.routes.set(rs[i].Prefix, pol.id)
		t.setOrigin(rs[i].Prefix, rs[i].Origin)
		t.setUSIDs(rs[i].Prefix, rs[i].USIDs)
		t.countRoute(rs[i].Prefix, 1)
		if old, had := oldRoutes.get(rs[i].Prefix); !had || old != pol.id || !sameUSIDs(oldUSIDs[rs[i].Prefix], rs[i].USIDs) {
			c.noteRoute(OpReplace, had, rs[i].Prefix, t.Name)
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
		c.noteRoute(OpDelete, true, p, t.Name)
	}
	s.rt.nroutes[0] += n4
	s.rt.nroutes[1] += n6
	return nil
}

func (s *Store) applySID(c *change, op Op) error {
	sd := *op.SID
	obj := sidObj(&sd)
	old, had := s.rt.sids[sd.SID]
	if err := exists(op.Kind, had, obj); err != nil {
		return err
	}
	if had {
		if err := owned(op, old.Origin, obj); err != nil {
			return err
		}
	}
	sd.Origin = op.Origin
	if _, ok := c.sids[sd.SID]; !ok {
		c.sids[sd.SID] = sidBefore{had: had, sid: old}
	}
	if op.Kind == OpDelete {
		s.unbind(c, old)
		setEntry(c, s.rt.sids, sd.SID, SID{}, true)
		c.note(op.Kind, true, sidObj(&old))
		return nil
	}
	// The tenant reference is checked at the end of the commit (the tenant may come later in it).
	if err := collect(func(add func(error)) { validateSID(&sd, nil, add) }); err != nil {
		return err
	}
	sd.ID = old.ID
	if !had {
		id, err := s.rt.sidIDs.alloc()
		if err != nil {
			return fieldErr(obj, "", "%v", err)
		}
		sd.ID = id
		c.onUndo(func() { s.rt.sidIDs.release(id, false) })
	}
	sd.Policy = 0
	if b := BehaviorNamed(sd.Action); b.Needs == ParamSegs { // a binding SID holds its policy
		p, err := s.acquire(c, bindingPolicy(&sd, b))
		if err != nil {
			return err
		}
		sd.Policy = p.id
	}
	if had {
		s.unbind(c, old)
	}
	if had && same(old, sd) {
		return nil
	}
	setEntry(c, s.rt.sids, sd.SID, sd, false)
	c.note(op.Kind, had, obj)
	return nil
}

// unbind drops the reference binding SID sd (if it is one) holds on its policy.
func (s *Store) unbind(c *change, sd SID) {
	if p := s.rt.polByID[sd.Policy]; sd.Policy != 0 && p != nil {
		s.unref(c, p)
	}
}

// finish checks what can only be checked once every operation of a commit is in: references from
// SIDs to tenants, and that no deleted tenant is still referenced. It also marks for rewriting the
// SIDs whose tenant's table changed. Problems are reported by tenant name, then SID address (not
// in map order: the same commit always gets the same message).
func (s *Store) finish(c *change) error {
	if err := s.vpnSIDs(c); err != nil {
		return err
	}
	var errs Errors
	add := func(err error) { errs = append(errs, err) }
	tenant := func(name string) *Tenant {
		if t := s.rt.tenants[name]; t != nil {
			return &t.Tenant
		}
		return nil
	}
	for _, name := range slices.Sorted(maps.Keys(c.tenants)) {
		b, t := c.tenants[name], s.rt.tenants[name]
		gone := b.had && t == nil
		tableChanged := b.had && t != nil && t.Table != b.t.Table
		if !gone && !tableChanged {
			continue
		}
		var users []netip.Addr
		for addr, sd := range s.rt.sids {
			if sd.Tenant == name {
				users = append(users, addr)
			}
		}
		slices.SortFunc(users, netip.Addr.Compare)
		for _, addr := range users {
			if gone {
				add(fieldErr(fmt.Sprintf("tenant %q", name), "", "SID %s still uses it", addr))
			} else if _, ok := c.sids[addr]; !ok {
				c.sids[addr] = sidBefore{had: true, sid: s.rt.sids[addr]}
			}
		}
	}
	for _, addr := range slices.SortedFunc(maps.Keys(c.sids), netip.Addr.Compare) {
		sd, ok := s.rt.sids[addr]
		if !ok {
			continue
		}
		validateSIDParams(&sd, tenant, add)
	}
	if len(errs) == 0 {
		return nil
	}
	return errs
}
