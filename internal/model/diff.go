package model

// diff.go: what a commit changed (or would change), one line per object, as `apply --dry-run` and
// every change command report it.

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Diff lists objects added, changed and removed, each as a one-line description ("route
// 198.18.2.0/24 tenant blue", "tenant \"blue\""; ParseChange reads one back), and counts them per
// kind. A commit that asked for at most N lines per list (CommitOptions.DiffLimit: a bulk load)
// counts the rest in More*; Kinds counts every object, listed or not.
type Diff struct {
	Added       []string
	Changed     []string
	Removed     []string
	MoreAdded   int
	MoreChanged int
	MoreRemoved int
	Kinds       map[string]*KindCounts // by kind ("route", "tenant", ...: a line's first word)
}

// KindCounts are how many objects of one kind a diff adds, changes and removes.
type KindCounts struct {
	Added   int `json:"added"`
	Changed int `json:"changed"`
	Removed int `json:"removed"`
}

// Change is one line of a diff as an object, for JSON: what happens (op: add, change, remove) to
// which object, named by the fields its kind has.
type Change struct {
	Op     string `json:"op"`
	Kind   string `json:"kind"`
	Name   string `json:"name,omitempty"`   // interface, tenant, policy, vxlan (its device)
	Tenant string `json:"tenant,omitempty"` // route
	Prefix string `json:"prefix,omitempty"` // route
	SID    string `json:"sid,omitempty"`    // sid
	Detail string `json:"detail,omitempty"` // options, domain: what changed, as the line says it
}

// Count adds one object of the kind line names to kind's counts (kind OpDelete: removed; existed:
// changed; else added).
func (d *Diff) Count(line string, kind OpKind, existed bool) {
	k, _, _ := strings.Cut(line, " ")
	d.CountKind(k, kind, existed)
}

// CountKind adds one object of kind k (a line's first word) to its counts, as Count does.
func (d *Diff) CountKind(k string, kind OpKind, existed bool) {
	if d.Kinds == nil {
		d.Kinds = map[string]*KindCounts{}
	}
	c := d.Kinds[k]
	if c == nil {
		c = &KindCounts{}
		d.Kinds[k] = c
	}
	switch {
	case kind == OpDelete:
		c.Removed++
	case existed:
		c.Changed++
	default:
		c.Added++
	}
}

// CountListed sets Kinds from the listed lines alone (for a diff that came without counts).
func (d *Diff) CountListed() {
	d.Kinds = nil
	for _, l := range []struct {
		lines   []string
		kind    OpKind
		existed bool
	}{{d.Added, OpAdd, false}, {d.Changed, OpReplace, true}, {d.Removed, OpDelete, true}} {
		for _, s := range l.lines {
			d.Count(s, l.kind, l.existed)
		}
	}
}

// ParseChange reads one diff line (as the commit wrote it) back as an object; op is "add", "change"
// or "remove".
func ParseChange(op, line string) Change {
	kind, rest, _ := strings.Cut(line, " ")
	c := Change{Op: op, Kind: kind}
	unq := func(s string) string {
		if u, err := strconv.Unquote(s); err == nil {
			return u
		}
		return s
	}
	switch kind {
	case "route": // route PREFIX tenant NAME
		p, t, _ := strings.Cut(rest, " tenant ")
		c.Prefix, c.Tenant = p, t
	case "sid":
		c.SID = rest
	case "options", "domain":
		c.Detail = strings.TrimSuffix(strings.TrimPrefix(rest, "("), ")")
	default: // interface "N", tenant "N", policy "N", vxlan "DEV"
		c.Name = unq(rest)
	}
	return c
}

// Changes are the listed lines as objects: added, then changed, then removed.
func (d *Diff) Changes() []Change {
	out := make([]Change, 0, len(d.Added)+len(d.Changed)+len(d.Removed))
	for _, l := range []struct {
		op    string
		lines []string
	}{{"add", d.Added}, {"change", d.Changed}, {"remove", d.Removed}} {
		for _, s := range l.lines {
			out = append(out, ParseChange(l.op, s))
		}
	}
	return out
}

// diffJSON is a diff as every command's --json writes it: totals, counts per kind, and the listed
// changes as objects (fewer than the totals when the commit listed only some, or none: a summary).
type diffJSON struct {
	Added   int                    `json:"added"`
	Changed int                    `json:"changed"`
	Removed int                    `json:"removed"`
	Kinds   map[string]*KindCounts `json:"kinds"`
	Changes []Change               `json:"changes"`
}

// MarshalJSON writes d as diffJSON.
func (d *Diff) MarshalJSON() ([]byte, error) {
	a, c, r := d.Counts()
	k := d.Kinds
	if k == nil {
		k = map[string]*KindCounts{}
	}
	return json.Marshal(diffJSON{Added: a, Changed: c, Removed: r, Kinds: k, Changes: d.Changes()})
}

// Summary is d in a few lines: per kind (sorted), how many objects are added, changed and removed.
func (d *Diff) Summary() string {
	if d.Empty() {
		return "no changes\n"
	}
	var out strings.Builder
	for _, k := range slices.Sorted(maps.Keys(d.Kinds)) {
		c := d.Kinds[k]
		var parts []string
		for _, p := range []struct {
			n    int
			verb string
		}{{c.Added, "added"}, {c.Changed, "changed"}, {c.Removed, "removed"}} {
			if p.n > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", p.n, p.verb))
			}
		}
		fmt.Fprintf(&out, "%-13s %s\n", plural(k)+":", strings.Join(parts, ", "))
	}
	return out.String()
}

// plural is a kind's name for a count of them.
func plural(kind string) string {
	switch kind {
	case "options", "domain", "bgp":
		return kind
	case "policy":
		return "policies"
	}
	return kind + "s"
}

// Counts are how many objects were added, changed and removed, listed or not.
func (d *Diff) Counts() (added, changed, removed int) {
	return len(d.Added) + d.MoreAdded, len(d.Changed) + d.MoreChanged, len(d.Removed) + d.MoreRemoved
}

// Empty reports whether applying the diff changes nothing.
func (d *Diff) Empty() bool {
	a, c, r := d.Counts()
	return a+c+r == 0
}

func (d *Diff) String() string {
	if d.Empty() {
		return "no changes\n"
	}
	var out strings.Builder
	for _, l := range []struct {
		mark  string
		lines []string
		more  int
	}{{"+ ", d.Added, d.MoreAdded}, {"~ ", d.Changed, d.MoreChanged}, {"- ", d.Removed, d.MoreRemoved}} {
		for _, s := range l.lines {
			out.WriteString(l.mark)
			out.WriteString(s)
			out.WriteByte('\n')
		}
		if l.more > 0 {
			fmt.Fprintf(&out, "%s... and %d more\n", l.mark, l.more)
		}
	}
	return out.String()
}

// Same reports whether a and b encode to the same JSON (what a diff compares objects by).
func Same(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}
