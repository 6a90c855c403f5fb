package bgp

// notes.go: why a learned path went into no tenant, one precise note per reason, as `seg6x bgp show
// routes` prints it: the path could not be read, its SID cannot be used (sidcheck.go), no tenant
// imports its route targets, the tenant that does serves the other family, holds the prefix itself
// (preference.go), or uses another path for it.

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// whyUnused is the note of path lp that no tenant took.
func (im *importer) whyUnused(lp learnedPath) string {
	if lp.err != "" {
		return lp.err
	}
	r := &lp.route
	if why := im.node.sidProblem(r.SID); why != "" {
		return why
	}
	var notes []string
	for _, name := range slices.Sorted(maps.Keys(im.vpn)) {
		v := im.vpn[name]
		if !slices.ContainsFunc(r.RTs, func(rt string) bool { return slices.Contains(v.ImportRT, rt) }) {
			continue
		}
		switch {
		case v.Behavior == EndDT4 && !r.Prefix.Addr().Is4(), v.Behavior == EndDT6 && r.Prefix.Addr().Is4():
			notes = append(notes, fmt.Sprintf("tenant %q imports it but serves only %s (vpn.behavior %s)", name,
				map[string]string{EndDT4: "IPv4", EndDT6: "IPv6"}[v.Behavior], v.Behavior))
		case im.refused[name][r.Prefix] != "":
			notes = append(notes, im.refused[name][r.Prefix])
		default:
			if b, ok := im.best(v, r.Prefix); ok && (b.RD != r.RD || b.NextHop != r.NextHop || b.SID != r.SID) {
				notes = append(notes, fmt.Sprintf("tenant %q uses another path for %s (RD %s, next hop %s)", name, r.Prefix, b.RD, b.NextHop))
			}
		}
	}
	if len(notes) > 0 {
		return strings.Join(notes, "; ")
	}
	return fmt.Sprintf("no tenant imports its route targets (%s)", strings.Join(r.RTs, ", "))
}

// pathRefusal is the reason label (refusals.go) and the note of a learned path that no tenant can
// take whatever the tenants hold: unreadable, an unusable SID, or route targets nobody imports; ""
// when some tenant may take it.
func (im *importer) pathRefusal(lp learnedPath) (label, note string) {
	r := &lp.route
	switch {
	case lp.err != "":
		return RefusedBadSID, lp.err
	case im.node.sidProblem(r.SID) != "":
		why := im.node.sidProblem(r.SID)
		if strings.Contains(why, "this node's") {
			return RefusedOwnSID, why
		}
		return RefusedBadSID, why
	}
	for _, v := range im.vpn {
		if slices.ContainsFunc(r.RTs, func(rt string) bool { return slices.Contains(v.ImportRT, rt) }) {
			return "", ""
		}
	}
	return RefusedRTNotImported, fmt.Sprintf("no tenant imports its route targets (%s)", strings.Join(r.RTs, ", "))
}

// countRefusal tells the speaker (metrics, the log's summary) of a refusal of k (a path's key, or a
// tenant's prefix; what names it in the log) when it is new or its reason changed; told holds what
// was told. Label "" is no refusal.
func countRefusal[K comparable](im *importer, told map[K]string, k K, what func() string, label, note string) {
	if told[k] == label {
		return
	}
	if label == "" {
		delete(told, k)
		return
	}
	told[k] = label
	im.s.refused(label, what()+": "+note)
}
