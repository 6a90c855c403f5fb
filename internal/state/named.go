package state

// named.go: the running named policies (internal/model's policies.go): each one's lists and the
// GroupBuckets slots of its two groups (IPv4 and IPv6 inner packets), filled by weight.

import (
	"fmt"
	"slices"
	"sort"

	"github.com/seg6x/seg6x/internal/model"
)

// groupBuckets fills the slots of a group: lists that are up by weight (largest remainder; every list up
// gets at least one), placed as they would be with every list up, then the slots of lists that are down
// handed to the lists up in weighted turns, so that taking a list down moves only its own flows.
// ids are the lists' policy ids; all lists down: every slot 0 (the headend drops).
func groupBuckets(lists []model.SegList, ids []uint32) [model.GroupBuckets]uint32 {
	var out [model.GroupBuckets]uint32
	all := spread(lists, func(model.SegList) bool { return true })
	up := spread(lists, func(l model.SegList) bool { return !l.Down })
	if len(up) == 0 {
		return out
	}
	next := 0
	for b, li := range all {
		if lists[li].Down {
			li = up[next%len(up)]
			next++
		}
		out[b] = ids[li]
	}
	return out
}

// spread is GroupBuckets slots of the lists that pass keep, by weight, interleaved; nil if none passes.
func spread(lists []model.SegList, keep func(model.SegList) bool) []int {
	var total uint64
	var idx []int
	for i, l := range lists {
		if keep(l) {
			idx = append(idx, i)
			total += uint64(l.Weight)
		}
	}
	if len(idx) == 0 {
		return nil
	}
	n := make([]int, len(lists))
	rem := make([]uint64, len(lists))
	given := 0
	for _, i := range idx {
		q := uint64(model.GroupBuckets) * uint64(lists[i].Weight)
		n[i], rem[i] = int(q/total), q%total
		given += n[i]
	}
	byRem := slices.Clone(idx)
	sort.SliceStable(byRem, func(a, b int) bool { return rem[byRem[a]] > rem[byRem[b]] })
	for k := 0; given < model.GroupBuckets; k++ {
		n[byRem[k%len(byRem)]]++
		given++
	}
	// Every list kept gets a slot: taken from the list with the most.
	for _, i := range idx {
		if n[i] == 0 {
			most := idx[0]
			for _, j := range idx {
				if n[j] > n[most] {
					most = j
				}
			}
			n[most]--
			n[i]++
		}
	}
	// Interleaved (smooth weighted round robin), so a list's slots are spread over the table.
	out := make([]int, 0, model.GroupBuckets)
	cur := make([]int, len(lists))
	for len(out) < model.GroupBuckets {
		best := -1
		for _, i := range idx {
			cur[i] += n[i]
			if best < 0 || cur[i] > cur[best] {
				best = i
			}
		}
		cur[best] -= model.GroupBuckets
		out = append(out, best)
	}
	return out
}

// namedRT is a named policy as the store holds it: its definition (validated), per inner family its
// group (what routes point at: a policy whose id carries GroupFlag) and its lists' encap policies.
type namedRT struct {
	model.Policy
	groups  [2]*policy
	members [2][]*policy
}

// buckets is the group of family fam (0: IPv4 inner, 1: IPv6).
func (n *namedRT) buckets(fam int) [model.GroupBuckets]uint32 {
	ids := make([]uint32, len(n.members[fam]))
	for i, p := range n.members[fam] {
		ids[i] = p.id
	}
	return groupBuckets(n.Lists, ids)
}

// view is the policy as shown: its lists with their policy ids.
func (n *namedRT) view() model.Policy {
	p := model.ClonePolicy(&n.Policy)
	for i := range p.Lists {
		for fam := range 2 {
			p.Lists[i].PolicyID[fam] = n.members[fam][i].id
		}
	}
	return p
}

func groupKey(name string, fam int) string { return fmt.Sprintf("group|%s|%d", name, fam) }
