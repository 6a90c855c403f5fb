package api

// policyowners.go: who an SR policy serves, for the tenant and name labels of its metrics: the tenants
// whose routes use it (giving its segment list, or naming a named policy it is a list of) and the
// named policies it is a list of. Finding the tenants walks every route, so it is done once per
// generation of the state, not on every scrape.

import (
	"maps"
	"slices"
	"strings"

	pb "github.com/seg6x/seg6x/api/seg6xv1"
	"github.com/seg6x/seg6x/internal/model"
	"github.com/seg6x/seg6x/internal/state"
)

// policyOwners are the tenants of every policy, as of one generation.
type policyOwners struct {
	gen    uint64
	ok     bool
	direct map[uint32][]string // policy id -> tenants of the routes with its segment list, sorted
	byName map[string][]string // named policy -> tenants of the routes that name it, sorted
}

// policyOwners returns the owners of st's policies, walking its routes only when its generation is
// not the one they were found for. Called with the controller's lock held.
func (c *collector) policyOwners(st *state.Store) policyOwners {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.owners.ok && c.owners.gen == st.Gen() {
		return c.owners
	}
	direct, byName := map[uint32]map[string]bool{}, map[string]map[string]bool{}
	add := func(set map[string]bool, tenant string) map[string]bool {
		if set == nil {
			set = map[string]bool{}
		}
		set[tenant] = true
		return set
	}
	st.EachRoute(func(r model.Route) bool {
		switch {
		case r.Policy != "":
			byName[r.Policy] = add(byName[r.Policy], r.Tenant)
		case r.ID != 0: // 0: a pass route, no policy
			direct[r.ID] = add(direct[r.ID], r.Tenant)
		}
		return true
	})
	c.owners = policyOwners{gen: st.Gen(), ok: true, direct: make(map[uint32][]string, len(direct)),
		byName: make(map[string][]string, len(byName))}
	for id, set := range direct {
		c.owners.direct[id] = slices.Sorted(maps.Keys(set))
	}
	for name, set := range byName {
		c.owners.byName[name] = slices.Sorted(maps.Keys(set))
	}
	return c.owners
}

// tenantsOf names the tenants policy p serves, sorted and joined by commas ("" when no route uses
// it: only binding SIDs).
func (o policyOwners) tenantsOf(p *pb.PolicyStats) string {
	names := listNames(p.Lists)
	if len(names) == 0 {
		return strings.Join(o.direct[p.Id], ",")
	}
	set := map[string]bool{}
	for _, t := range o.direct[p.Id] {
		set[t] = true
	}
	for _, n := range names {
		for _, t := range o.byName[n] {
			set[t] = true
		}
	}
	return strings.Join(slices.Sorted(maps.Keys(set)), ",")
}

// namesOf names the named policies p is a segment list of, joined by commas ("" for a route's own
// segment list).
func namesOf(p *pb.PolicyStats) string { return strings.Join(listNames(p.Lists), ",") }

// listNames are the named policies of a policy's lists ("NAME list N", sorted by the state), each once.
func listNames(lists []string) []string {
	var out []string
	for _, l := range lists {
		name, _, _ := strings.Cut(l, " list ")
		if len(out) == 0 || out[len(out)-1] != name {
			out = append(out, name)
		}
	}
	return out
}
