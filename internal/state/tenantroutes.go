package state

// tenantroutes.go: a tenant's route table as the engine holds it: the tenant with its route index
// (routeindex.go), the routes' origins (routeorigins.go), their uSID notation and counts per prefix
// length; a route's policy found through its id (policyOf, policyOfRoute), and the route as the API
// shows it (routeView).

import (
	"net/netip"
	"slices"

	"github.com/seg6x/seg6x/internal/model"
)

// tenantRT is a tenant with its route table. tableID names the table version in the data plane;
// replacing the whole table moves it to a new tableID.
type tenantRT struct {
	model.Tenant
	tableID uint32
	routes  routeIndex     // routeindex.go
	plens   [2][129]uint32 // routes per prefix length: [0] IPv4, [1] IPv6
	// origins holds the origin of each route whose origin is not the tenant's (BGP's routes in a
	// tenant of the API; routeorigins.go).
	origins originIndex
	// usids holds the uSID notation of each route written with one (Route.USIDs; its policy has the
	// containers); nil when there is none. Its lists are never changed once stored.
	usids map[netip.Prefix]*model.USIDList
}

// routeOrigin is the origin of the tenant's route for p.
func (t *tenantRT) routeOrigin(p netip.Prefix) model.Origin {
	if o, ok := t.origins.get(p); ok {
		return o
	}
	return t.Origin
}

// setOrigin records o as the origin of the route for p (the tenant's origin is not stored).
func (t *tenantRT) setOrigin(p netip.Prefix, o model.Origin) {
	if o == t.Origin {
		t.origins.del(p)
		return
	}
	t.origins.set(p, o)
}

// setUSIDs records u (nil: none) as the uSID notation of the route for p.
func (t *tenantRT) setUSIDs(p netip.Prefix, u *model.USIDList) {
	if u == nil {
		delete(t.usids, p)
		return
	}
	if t.usids == nil {
		t.usids = map[netip.Prefix]*model.USIDList{}
	}
	t.usids[p] = u
}

func (t *tenantRT) countRoute(p netip.Prefix, delta int) {
	fam := famOf(p)
	t.plens[fam][p.Bits()] = uint32(int(t.plens[fam][p.Bits()]) + delta)
}

// policyOf is the policy id names (nil: none).
func (r *runtime) policyOf(id uint32) *policy {
	switch {
	case id == 0:
		return passPolicy
	case id&model.GroupFlag != 0:
		return r.groupByID[id]
	}
	return r.polByID[id]
}

// policyOfRoute is the policy of tenant t's route for p (nil: no route).
func (r *runtime) policyOfRoute(t *tenantRT, p netip.Prefix) *policy {
	if id, ok := t.routes.get(p); ok {
		return r.policyOf(id)
	}
	return nil
}

// routeView is the API form of tenant t's route for p, whose policy is pol.
func routeView(t *tenantRT, p netip.Prefix, pol *policy) model.Route {
	if pol.group != nil {
		return model.Route{Tenant: t.Name, Prefix: p, Policy: pol.group.Name, ID: pol.id, Origin: t.routeOrigin(p)}
	}
	return model.Route{Tenant: t.Name, Prefix: p, Mode: pol.mode, Segs: slices.Clone(pol.segs), Src: pol.src,
		HopLimit: pol.hopLimit, ID: pol.id, UsedSrc: pol.usedSrc, Origin: t.routeOrigin(p), USIDs: t.usids[p].Clone()}
}
