package state

// diff.go: the object-level difference between two states, as shown by `apply --dry-run`.

import (
	"encoding/json"
	"fmt"
)

// Diff lists objects added, changed and removed, each as a one-line description.
type Diff struct {
	Added   []string `json:"added"`
	Changed []string `json:"changed"`
	Removed []string `json:"removed"`
}

// Empty reports whether applying the diff changes nothing.
func (d *Diff) Empty() bool { return len(d.Added)+len(d.Changed)+len(d.Removed) == 0 }

func (d *Diff) String() string {
	if d.Empty() {
		return "no changes\n"
	}
	out := ""
	for _, s := range d.Added {
		out += "+ " + s + "\n"
	}
	for _, s := range d.Changed {
		out += "~ " + s + "\n"
	}
	for _, s := range d.Removed {
		out += "- " + s + "\n"
	}
	return out
}

func same(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

func diffSet[T any](d *Diff, kind string, cur, next []T, key func(T) string) {
	old := map[string]T{}
	for _, o := range cur {
		old[key(o)] = o
	}
	seen := map[string]bool{}
	for _, n := range next {
		k := key(n)
		seen[k] = true
		o, ok := old[k]
		switch {
		case !ok:
			d.Added = append(d.Added, fmt.Sprintf("%s %s", kind, k))
		case !same(o, n):
			d.Changed = append(d.Changed, fmt.Sprintf("%s %s", kind, k))
		}
	}
	for _, o := range cur {
		if k := key(o); !seen[k] {
			d.Removed = append(d.Removed, fmt.Sprintf("%s %s", kind, k))
		}
	}
}

func diffObjects(cur, next *State) *Diff {
	d := &Diff{Added: []string{}, Changed: []string{}, Removed: []string{}}
	if cur.Options != next.Options {
		d.Changed = append(d.Changed, fmt.Sprintf("options (nexthop_cache_ms %d -> %d)", cur.Options.NextHopCacheMs, next.Options.NextHopCacheMs))
	}
	diffSet(d, "interface", cur.Interfaces, next.Interfaces, func(i Interface) string { return i.Name })
	diffSet(d, "tenant", cur.Tenants, next.Tenants, func(t Tenant) string { return t.Name })
	diffSet(d, "route", cur.Routes, next.Routes, func(r Route) string { return r.Prefix.String() + " tenant " + r.Tenant })
	diffSet(d, "sid", cur.SIDs, next.SIDs, func(s SID) string { return s.SID.String() })
	return d
}
