package plugincfg

// describe.go: the text about a schema's keys: each key's type, the help listing (`seg6x plugin
// show NAME`), and what an unknown key's error suggests instead.

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/cilium/ebpf/btf"
)

// maxListed is how many names an error or a type lists before it cuts the list.
const maxListed = 10

// describe is the leaf's Type.
func (l *leaf) describe() string {
	switch l.kind {
	case kindBool:
		return "bool (true, false)"
	case kindEnum:
		name := "enum"
		if l.enum.Name != "" {
			name += " " + l.enum.Name
		}
		if len(l.enum.Values) == 0 {
			return name + " " + intRange(l.Size, l.signed)
		}
		return name + " (" + enumNames(l.enum) + ")"
	}
	sign := "u"
	if l.signed {
		sign = "s"
	}
	return sign + strconv.Itoa(int(l.Size*8)) + " " + intRange(l.Size, l.signed)
}

// enumNames lists an enum's names (the first maxListed of them).
func enumNames(e *btf.Enum) string {
	names := make([]string, 0, maxListed+1)
	for i, v := range e.Values {
		if i == maxListed {
			names = append(names, fmt.Sprintf("... (%d names)", len(e.Values)))
			break
		}
		names = append(names, v.Name)
	}
	return strings.Join(names, ", ")
}

// Describe is the help text about the keys, one line for each member path (an array's indexes
// as {0..N-1}): the key, what it takes, its help.
func (sc *Schema) Describe() string {
	if len(sc.leaves) == 0 {
		return sc.name + ": no settings\n"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%d bytes), settings key=value:\n", sc.name, sc.size)
	wk, wt := 0, 0
	for _, g := range sc.groups {
		wk = max(wk, len(g.pattern))
		wt = max(wt, len(sc.leaves[g.first].Type))
	}
	for _, g := range sc.groups {
		l := sc.leaves[g.first]
		help := l.Help
		if l.Required {
			help = joinWords(help, "(required)")
		}
		line := fmt.Sprintf("  %-*s  %-*s  %s", wk, g.pattern, wt, l.Type, help)
		b.WriteString(strings.TrimRight(line, " "))
		b.WriteByte('\n')
	}
	return b.String()
}

// unknownKey is the error about a key the schema does not have, with what the operator may have
// meant: an index out of range, a struct's members, the keys (or the closest ones).
func (sc *Schema) unknownKey(k string) error {
	if len(sc.leaves) == 0 {
		return fmt.Errorf("unknown key %s: this plugin has no settings", shown(k))
	}
	var below []string
	for _, l := range sc.leaves {
		if strings.HasPrefix(l.Name, k+".") {
			below = append(below, l.Name)
		}
	}
	norm := normKey(k)
	var near []int // groups that differ from k in an index only, or lie below such a member
	for i, g := range sc.groups {
		if g.norm == norm || strings.HasPrefix(g.norm, norm+".") {
			near = append(near, i)
		}
	}
	switch {
	case len(below) > 0 && len(below) <= maxListed:
		return fmt.Errorf("unknown key %s: it has members; set them: %s", shown(k), strings.Join(below, ", "))
	case len(below) > 0:
		return fmt.Errorf("unknown key %s: it has members; set them: %s", shown(k), listed(sc.patterns(near)))
	case len(near) > 0:
		return fmt.Errorf("unknown key %s: no such index; the keys: %s", shown(k), listed(sc.patterns(near)))
	}
	if len(sc.groups) <= maxListed {
		return fmt.Errorf("unknown key %s; the keys: %s", shown(k), strings.Join(sc.patterns(nil), ", "))
	}
	return fmt.Errorf("unknown key %s; the closest keys: %s (of %d)", shown(k), strings.Join(sc.closest(norm), ", "), len(sc.groups))
}

// listed joins names, the first maxListed of them.
func listed(names []string) string {
	if len(names) > maxListed {
		return strings.Join(names[:maxListed], ", ") + fmt.Sprintf(", ... (%d keys)", len(names))
	}
	return strings.Join(names, ", ")
}

// patterns are the groups' patterns (of the groups at idx; all when nil).
func (sc *Schema) patterns(idx []int) []string {
	if idx == nil {
		for i := range sc.groups {
			idx = append(idx, i)
		}
	}
	out := make([]string, len(idx))
	for i, g := range idx {
		out[i] = sc.groups[g].pattern
	}
	return out
}

// closest are the maxListed group patterns nearest to norm (by edit distance, then struct order).
func (sc *Schema) closest(norm string) []string {
	dist := make([]int, len(sc.groups))
	idx := make([]int, len(sc.groups))
	for i, g := range sc.groups {
		dist[i] = editDistance(norm, g.norm)
		idx[i] = i
	}
	// insertion sort: stable, and the groups are few
	for i := 1; i < len(idx); i++ {
		for j := i; j > 0 && dist[idx[j]] < dist[idx[j-1]]; j-- {
			idx[j], idx[j-1] = idx[j-1], idx[j]
		}
	}
	return sc.patterns(idx[:maxListed])
}

// normKey is a key with every index as N: rules.3.dport -> rules.N.dport.
func normKey(k string) string {
	parts := strings.Split(k, ".")
	for i, p := range parts {
		if p != "" && strings.Trim(p, "0123456789") == "" {
			parts[i] = "N"
		}
	}
	return strings.Join(parts, ".")
}

// editDistance is the Levenshtein distance between a and b (bytes); a long a counts as far.
func editDistance(a, b string) int {
	if len(a) > 128 {
		return len(a)
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
