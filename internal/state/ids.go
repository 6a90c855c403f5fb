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

// carryIDs gives each object of next the id the object with the same key had in cur, then the
// smallest free id in [1, limit) to the others. what names the objects in the error when the ids
// run out.
func carryIDs[T any](cur, next []T, key func(*T) string, id func(*T) *uint32, limit uint32, what string, obj func(*T) string) error {
	old := map[string]uint32{}
	for i := range cur {
		old[key(&cur[i])] = *id(&cur[i])
	}
	used := map[uint32]bool{}
	for i := range next {
		v, ok := old[key(&next[i])]
		*id(&next[i]) = v // 0 for a new object, whatever id it carried in
		if ok {
			used[v] = true
		}
	}
	free := uint32(1)
	for i := range next {
		if *id(&next[i]) != 0 {
			continue
		}
		for free < limit && used[free] {
			free++
		}
		if free >= limit {
			return fieldErr(obj(&next[i]), "", "more than %d %s", limit-1, what)
		}
		*id(&next[i]) = free
		used[free] = true
	}
	return nil
}

// assignIDs gives next's objects the ids they had in cur, and fresh ones to new objects.
func assignIDs(cur, next *State) error {
	if err := carryIDs(cur.Tenants, next.Tenants, func(t *Tenant) string { return t.Name },
		func(t *Tenant) *uint32 { return &t.ID }, 1<<31, "tenants", tenantObj); err != nil {
		return err
	}
	if err := carryIDs(cur.Routes, next.Routes, func(r *Route) string { return r.Tenant + " " + r.Prefix.String() },
		func(r *Route) *uint32 { return &r.ID }, MaxPolicies, "routes", routeObj); err != nil {
		return err
	}
	if err := carryIDs(cur.SIDs, next.SIDs, func(s *SID) string { return s.SID.String() },
		func(s *SID) *uint32 { return &s.ID }, MaxSIDs, "SIDs", sidObj); err != nil {
		return err
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
