package bgp

// preference.go: a PE's own prefixes outrank what peers say, as in a VRF. A tenant with a vpn:
// section holds its kernel table's routes (connected and static) itself: a learned route for the
// same prefix is refused, one inside it too unless vpn.import_more_specific says otherwise, and where a
// learned prefix covers one of them the tenant gets a route that hands that part to the kernel
// (mode pass), so its own site is still reached locally. Prefixes the tenant holds through the API
// or a config file need nothing here: the store refuses BGP's route over them.

import (
	"fmt"
	"maps"
	"net/netip"

	"github.com/seg6x/seg6x/internal/model"
)

// localView is a tenant's own prefixes: its kernel table's routes.
type localView struct {
	table    uint32
	prefixes map[netip.Prefix]bool
}

// readLocal reads the kernel tables of the tenants with a vpn: section, and returns the prefixes
// whose standing changed since the last round (held locally now, or no longer).
func (im *importer) readLocal(tenants []model.Tenant, vpn map[string]*model.VPN) map[netip.Prefix]bool {
	changed := map[netip.Prefix]bool{}
	next := map[string]localView{}
	for _, t := range tenants {
		if vpn[t.Name] == nil || t.Table == 0 || im.s.opts.KernelRoutes == nil {
			continue
		}
		ps, err := im.s.opts.KernelRoutes(t.Table)
		if err != nil {
			im.s.fail("bgp: tenant %q: reading kernel table %d for its own prefixes: %v", t.Name, t.Table, err)
			next[t.Name] = im.local[t.Name] // keep what was known
			continue
		}
		lv := localView{table: t.Table, prefixes: make(map[netip.Prefix]bool, len(ps))}
		for _, p := range ps {
			lv.prefixes[p] = true
		}
		next[t.Name] = lv
	}
	for name, lv := range next {
		old := im.local[name].prefixes
		if old == nil || !maps.Equal(old, lv.prefixes) {
			for p := range old {
				changed[p] = true
			}
			for p := range lv.prefixes {
				changed[p] = true
			}
		}
	}
	for name, lv := range im.local {
		if _, ok := next[name]; !ok {
			for p := range lv.prefixes {
				changed[p] = true
			}
		}
	}
	im.local = next
	return changed
}

// coveringLocal adds to prefixes the tenants' own prefixes that lie inside one of them (a learned
// prefix that changed may now cover, or no longer cover, one).
func (im *importer) coveringLocal(prefixes map[netip.Prefix]bool) {
	for _, lv := range im.local {
		for l := range lv.prefixes {
			if prefixes[l] {
				continue
			}
			for b := l.Bits() - 1; b >= 0; b-- {
				if q, _ := l.Addr().Prefix(b); prefixes[q] {
					prefixes[l] = true
					break
				}
			}
		}
	}
}

// insideLocal is the tenant's own prefix that p lies inside (strictly), if any.
func (im *importer) insideLocal(name string, p netip.Prefix) (netip.Prefix, bool) {
	lv := im.local[name]
	for b := p.Bits() - 1; b >= 0 && len(lv.prefixes) > 0; b-- {
		if q, _ := p.Addr().Prefix(b); lv.prefixes[q] {
			return q, true
		}
	}
	return netip.Prefix{}, false
}

// coveredByLearned: a learned route the tenant would install covers its own prefix l.
func (im *importer) coveredByLearned(name string, v *model.VPN, l netip.Prefix) bool {
	for b := l.Bits() - 1; b >= 0; b-- {
		q, _ := l.Addr().Prefix(b)
		if im.local[name].prefixes[q] {
			return false // a shorter own prefix covers it first: that one's pass route reaches it too
		}
		if _, ok := im.best(v, q); ok {
			return true
		}
	}
	return false
}

// localNote says why the tenant does not take the learned route to p: it holds p itself, or p lies
// inside a prefix it holds ("" when neither).
func (im *importer) localNote(name string, v *model.VPN, p netip.Prefix) string {
	lv := im.local[name]
	if lv.prefixes[p] {
		return fmt.Sprintf("tenant %q holds %s itself (kernel table %d): a local route outranks BGP", name, p, lv.table)
	}
	if v.ImportMoreSpecific {
		return ""
	}
	if l, ok := im.insideLocal(name, p); ok {
		return fmt.Sprintf("inside %s, which tenant %q holds itself (kernel table %d); vpn.import_more_specific: true installs it",
			l, name, lv.table)
	}
	return ""
}
