package state

// change.go: the record of one commit in progress: what each touched object was before (from which
// the map writes and the diff are computed), the route edits, and the undo log that rolls the
// in-memory state back when the commit fails.

import (
	"net/netip"
	"slices"

	"github.com/seg6x/seg6x/internal/model"
)

type routeKey struct {
	tenant string
	prefix netip.Prefix
}

type tenantBefore struct {
	had     bool
	t       model.Tenant
	tableID uint32
	plens   [2][129]uint32
}

type swapBefore struct {
	tableID uint32
	routes  routeIndex
}

type sidBefore struct {
	had bool
	sid model.SID
}

type ifaceBefore struct {
	had bool
	it  model.Interface
}

// change is what one commit did to the in-memory state, and how to undo it.
type change struct {
	optsBefore   *model.Options
	domainBefore *model.Domain
	bgpTouched   bool // the bgp section was replaced or deleted; bgpBefore is what it was
	bgpBefore    *model.BGP
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
	plugins      map[string]pluginBefore
	newBinds     []uint32 // plugin configuration slots handed out (one a later operation replaced is freed)
	newPols      []*policy
	pols         map[*policy]int // policies whose refcount changed: what it was before (rollback restores it)
	lastPol      *policy         // the policy acquire found or made last (policies leave the map only after a commit)
	undo         []undoStep
	rt           *runtime // the state the change is made to
	diff         *model.Diff
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
		named: map[string]namedBefore{}, vxlans: map[string]vxlanBefore{}, plugins: map[string]pluginBefore{}, pols: map[*policy]int{},
		undo: make([]undoStep, 0, n+8), diffLimit: diffLimit,
		diff: &model.Diff{Added: make([]string, 0, listed), Changed: []string{}, Removed: []string{}}}
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
	oldOrigin model.Origin
	oldUSIDs  *model.USIDList
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
func (c *change) note(kind model.OpKind, existed bool, what string) {
	c.diff.Count(what, kind, existed)
	if l, more := c.diffList(kind, existed); c.diffLimit <= 0 || len(*l) < c.diffLimit {
		*l = append(*l, what)
	} else {
		*more++
	}
}

// noteRoute is note for the route for p of tenant, its line made only when it is listed.
func (c *change) noteRoute(kind model.OpKind, existed bool, p netip.Prefix, tenant string) {
	c.diff.CountKind("route", kind, existed)
	if l, more := c.diffList(kind, existed); c.diffLimit <= 0 || len(*l) < c.diffLimit {
		*l = append(*l, model.RouteName(p, tenant))
	} else {
		*more++
	}
}

func (c *change) diffList(kind model.OpKind, existed bool) (*[]string, *int) {
	switch {
	case kind == model.OpDelete:
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
