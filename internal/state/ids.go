package state

// ids.go: resolving host names/addresses into a desired state, and the data plane ids (tenant,
// policy, SID counters) that stay the same for the same object across applies.

import (
	"fmt"
	"slices"
)

// Limits of the id spaces (MAX_POLICIES, MAX_SIDS in bpf/consts.h); 0 is never used.
const (
	MaxPolicies = 65536
	MaxSIDs     = 16384
)

func resolve(s *State, env Env) error {
	var errs Errors
	for i := range s.Interfaces {
		it := &s.Interfaces[i]
		idx, err := env.Ifindex(it.Name)
		if err != nil {
			errs = append(errs, fieldErr(fmt.Sprintf("interface %q", it.Name), "name", "%v", err))
		}
		it.Ifindex = idx
		if it.Mode == "" {
			it.Mode = "native"
		}
	}
	for i := range s.Tenants {
		t := &s.Tenants[i]
		for j := range t.Ports {
			idx, err := env.Ifindex(t.Ports[j].Dev)
			if err != nil {
				errs = append(errs, fieldErr(tenantObj(t), "dev", "%v", err))
			}
			t.Ports[j].Ifindex = idx
		}
	}
	for i := range s.Routes {
		r := &s.Routes[i]
		if r.Src.IsValid() {
			r.UsedSrc = r.Src
			continue
		}
		src, err := env.SourceFor(r.Segs[0])
		if err != nil {
			errs = append(errs, fieldErr(routeObj(r), "src", "%v", err))
		}
		r.UsedSrc = src
	}
	if len(errs) == 0 {
		return nil
	}
	return errs
}

// allocator hands out the smallest free id in [1, max).
type allocator struct {
	used map[uint32]bool
	max  uint32
	next uint32
}

func newAllocator(max uint32) *allocator {
	return &allocator{used: map[uint32]bool{}, max: max, next: 1}
}

func (a *allocator) take(id uint32) { a.used[id] = true }

func (a *allocator) get() (uint32, bool) {
	for ; a.next < a.max; a.next++ {
		if !a.used[a.next] {
			a.used[a.next] = true
			return a.next, true
		}
	}
	return 0, false
}

// assignIDs gives next's objects the ids they had in cur, and fresh ones to new objects.
func assignIDs(cur, next *State) error {
	tenantIDs := map[string]uint32{}
	for _, t := range cur.Tenants {
		tenantIDs[t.Name] = t.ID
	}
	routeIDs := map[string]uint32{}
	for _, r := range cur.Routes {
		routeIDs[r.Tenant+" "+r.Prefix.String()] = r.ID
	}
	sidIDs := map[string]uint32{}
	for _, sd := range cur.SIDs {
		sidIDs[sd.SID.String()] = sd.ID
	}

	ta := newAllocator(1 << 31)
	for i := range next.Tenants {
		if id, ok := tenantIDs[next.Tenants[i].Name]; ok {
			next.Tenants[i].ID = id
			ta.take(id)
		}
	}
	for i := range next.Tenants {
		if next.Tenants[i].ID == 0 {
			next.Tenants[i].ID, _ = ta.get()
		}
	}

	ra := newAllocator(MaxPolicies)
	for i := range next.Routes {
		r := &next.Routes[i]
		if id, ok := routeIDs[r.Tenant+" "+r.Prefix.String()]; ok {
			r.ID = id
			ra.take(id)
		}
	}
	for i := range next.Routes {
		r := &next.Routes[i]
		if r.ID == 0 {
			id, ok := ra.get()
			if !ok {
				return fieldErr(routeObj(r), "", "more than %d routes", MaxPolicies-1)
			}
			r.ID = id
		}
	}

	sa := newAllocator(MaxSIDs)
	for i := range next.SIDs {
		if id, ok := sidIDs[next.SIDs[i].SID.String()]; ok {
			next.SIDs[i].ID = id
			sa.take(id)
		}
	}
	for i := range next.SIDs {
		sd := &next.SIDs[i]
		if sd.ID == 0 {
			id, ok := sa.get()
			if !ok {
				return fieldErr(sidObj(sd), "", "more than %d SIDs", MaxSIDs-1)
			}
			sd.ID = id
		}
	}
	sortState(next)
	return nil
}

// sortState orders objects so state.json and show output are stable.
func sortState(s *State) {
	slices.SortFunc(s.Interfaces, func(a, b Interface) int { return cmpStr(a.Name, b.Name) })
	slices.SortFunc(s.Tenants, func(a, b Tenant) int { return cmpStr(a.Name, b.Name) })
	slices.SortFunc(s.Routes, func(a, b Route) int {
		if c := cmpStr(a.Tenant, b.Tenant); c != 0 {
			return c
		}
		if c := a.Prefix.Addr().Compare(b.Prefix.Addr()); c != 0 {
			return c
		}
		return a.Prefix.Bits() - b.Prefix.Bits()
	})
	slices.SortFunc(s.SIDs, func(a, b SID) int { return a.SID.Compare(b.SID) })
}

func cmpStr(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
