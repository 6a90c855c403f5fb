package state

// policies.go: named SR policies with weighted segment lists (ECMP, fast reroute). Each list is an
// ordinary encap policy (its prebuilt header, shared with routes of the same list); a named policy adds
// one group per inner family: GroupBuckets slots of list policy ids, filled by weight. The headend picks
// the slot by the flow hash it already computes for the outer flow label, so one flow stays on one list.
// Marking a list down rewrites only the group's slots: its slots move to the lists still up (the flows
// on those stay where they are), and the routes that name the policy are not touched.

import (
	"fmt"
	"net/netip"
	"slices"
	"sort"
)

// Policy is a named SR policy: routes name it (Route.Policy) instead of giving a segment list.
type Policy struct {
	// Name is what routes call the policy: 1 to 32 letters, digits, '.', '_' or '-'.
	Name string `yaml:"name" json:"name"`
	// Mode is encap (H.Encaps, the default) or encap.red (H.Encaps.Red).
	Mode string `yaml:"mode,omitempty" json:"mode"`
	// Src is the outer IPv6 source (default: the kernel's choice, as for a route).
	Src      netip.Addr `yaml:"src,omitempty" json:"src,omitempty"`
	HopLimit uint8      `yaml:"hoplimit,omitempty" json:"hoplimit,omitempty"` // outer hop limit; default 64
	// Lists are the policy's segment lists (1 to 16), each flow on one of them.
	Lists  []SegList `yaml:"lists" json:"lists"`
	Origin Origin    `yaml:"-" json:"origin,omitempty"` // the front end that owns it (origins.go)
}

// SegList is one segment list of a named policy and its share of the flows.
type SegList struct {
	// Segs is the segment list: 1 to 16 SIDs, in the order the packet visits them.
	Segs []netip.Addr `yaml:"segs,omitempty" json:"segs"`
	// USIDs is the segment list written as uSIDs (usidlist.go), instead of segs.
	USIDs *USIDList `yaml:"usids,omitempty" json:"usids,omitempty"`
	// Weight is the list's share among the lists that are up (default 1); shares are kept to 1/64 of
	// the flows (GroupBuckets), and every list that is up gets at least one slot.
	Weight uint32 `yaml:"weight,omitempty" json:"weight"`
	// Down takes the list out: its flows go to the other lists at once (the routes are not touched).
	Down bool `yaml:"down,omitempty" json:"down,omitempty"`
	// PolicyID is the list's encap policy for IPv4 and IPv6 inner packets (its counters), set by the store.
	PolicyID [2]uint32 `yaml:"-" json:"policy_id,omitempty"`
}

// Limits of named policies (bpf/consts.h: POLICY_GROUP_BUCKETS, MAX_POLICY_GROUPS).
const (
	GroupBuckets   = 64
	MaxGroups      = 8192 // two per named policy (IPv4 and IPv6 inner packets)
	MaxPolicyLists = 16
	MaxWeight      = 1 << 16
	// GroupFlag marks a route's policy id as a group (POLICY_GROUP_FLAG): the low bits are its id.
	GroupFlag = 1 << 31
)

func policyObj(name string) string { return fmt.Sprintf("policy %q", name) }

// validateNamedPolicy checks p and fills its defaults; the lists' uSIDs become their segs.
func validateNamedPolicy(p *Policy, add func(error)) {
	obj := policyObj(p.Name)
	if !nameRE.MatchString(p.Name) {
		add(fieldErr(obj, "name", "1 to 32 letters, digits, '.', '_' or '-'"))
	}
	if p.Mode == "" {
		p.Mode = ModeEncap
	}
	if p.Mode != ModeEncap && p.Mode != ModeEncapRed {
		add(fieldErr(obj, "mode", "%q is not encap or encap.red", p.Mode))
	}
	if p.HopLimit == 0 {
		p.HopLimit = DefaultHopLimit
	}
	validateSrc(obj, p.Src, add)
	switch {
	case len(p.Lists) == 0:
		add(fieldErr(obj, "lists", "no segment lists; give 1 to %d", MaxPolicyLists))
	case len(p.Lists) > MaxPolicyLists:
		add(fieldErr(obj, "lists", "%d segment lists, at most %d", len(p.Lists), MaxPolicyLists))
	}
	for i := range p.Lists {
		l := &p.Lists[i]
		at := fmt.Sprintf("lists[%d].", i)
		if usidSegs(obj, at, &l.USIDs, &l.Segs, add) {
			validateSegs(obj, at+"segs", l.Segs, add)
		}
		if l.Weight == 0 {
			l.Weight = 1
		}
		if l.Weight > MaxWeight {
			add(fieldErr(obj, at+"weight", "%d, at most %d", l.Weight, MaxWeight))
		}
	}
}

// groupBuckets fills the slots of a group: lists that are up by weight (largest remainder; every list up
// gets at least one), placed as they would be with every list up, then the slots of lists that are down
// handed to the lists up in weighted turns, so that taking a list down moves only its own flows.
// ids are the lists' policy ids; all lists down: every slot 0 (the headend drops).
func groupBuckets(lists []SegList, ids []uint32) [GroupBuckets]uint32 {
	var out [GroupBuckets]uint32
	all := spread(lists, func(SegList) bool { return true })
	up := spread(lists, func(l SegList) bool { return !l.Down })
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
func spread(lists []SegList, keep func(SegList) bool) []int {
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
		q := uint64(GroupBuckets) * uint64(lists[i].Weight)
		n[i], rem[i] = int(q/total), q%total
		given += n[i]
	}
	byRem := slices.Clone(idx)
	sort.SliceStable(byRem, func(a, b int) bool { return rem[byRem[a]] > rem[byRem[b]] })
	for k := 0; given < GroupBuckets; k++ {
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
	out := make([]int, 0, GroupBuckets)
	cur := make([]int, len(lists))
	for len(out) < GroupBuckets {
		best := -1
		for _, i := range idx {
			cur[i] += n[i]
			if best < 0 || cur[i] > cur[best] {
				best = i
			}
		}
		cur[best] -= GroupBuckets
		out = append(out, best)
	}
	return out
}

// namedRT is a named policy as the store holds it: its definition (validated), per inner family its
// group (what routes point at: a policy whose id carries GroupFlag) and its lists' encap policies.
type namedRT struct {
	Policy
	groups  [2]*policy
	members [2][]*policy
}

// buckets is the group of family fam (0: IPv4 inner, 1: IPv6).
func (n *namedRT) buckets(fam int) [GroupBuckets]uint32 {
	ids := make([]uint32, len(n.members[fam]))
	for i, p := range n.members[fam] {
		ids[i] = p.id
	}
	return groupBuckets(n.Lists, ids)
}

// view is the policy as shown: its lists with their policy ids.
func (n *namedRT) view() Policy {
	p := clonePolicy(&n.Policy)
	for i := range p.Lists {
		for fam := range 2 {
			p.Lists[i].PolicyID[fam] = n.members[fam][i].id
		}
	}
	return p
}

func groupKey(name string, fam int) string { return fmt.Sprintf("group|%s|%d", name, fam) }

func clonePolicy(p *Policy) Policy {
	c := *p
	c.Lists = slices.Clone(p.Lists)
	for i := range c.Lists {
		c.Lists[i].Segs = slices.Clone(c.Lists[i].Segs)
		c.Lists[i].USIDs = c.Lists[i].USIDs.clone()
		c.Lists[i].PolicyID = [2]uint32{}
	}
	return c
}

type namedBefore struct {
	had     bool
	p       Policy
	gids    [2]uint32 // its groups' ids (without GroupFlag)
	buckets [2][GroupBuckets]uint32
}

// touchNamed records named policy name as it was before change c.
func (c *change) touchNamed(r *runtime, name string) {
	if _, ok := c.named[name]; ok {
		return
	}
	b := namedBefore{}
	if n := r.named[name]; n != nil {
		b.had, b.p = true, clonePolicy(&n.Policy)
		b.buckets = [2][GroupBuckets]uint32{n.buckets(0), n.buckets(1)}
		b.gids = [2]uint32{n.groups[0].id &^ GroupFlag, n.groups[1].id &^ GroupFlag}
	}
	c.named[name] = b
}

// acquireLists takes a reference on the encap policy of every list of p, for both inner families.
func (s *Store) acquireLists(c *change, p *Policy) ([2][]*policy, error) {
	var out [2][]*policy
	for fam := range 2 {
		for i, l := range p.Lists {
			m, err := s.acquire(c, policyReq{inner6: fam == 1, mode: p.Mode, segs: l.Segs, src: p.Src, hopLimit: p.HopLimit,
				obj: fmt.Sprintf("%s lists[%d]", policyObj(p.Name), i)})
			if err != nil {
				return out, err
			}
			out[fam] = append(out[fam], m)
		}
	}
	return out, nil
}

func (s *Store) applyPolicy(c *change, op Op) error {
	np := clonePolicy(op.Policy)
	obj := policyObj(np.Name)
	cur := s.rt.named[np.Name]
	if err := exists(op.Kind, cur != nil, obj); err != nil {
		return err
	}
	if cur != nil {
		if err := owned(op.Origin, cur.Origin, obj); err != nil {
			return err
		}
	}
	np.Origin = op.Origin
	if op.Kind != OpDelete {
		if err := collect(func(add func(error)) { validateNamedPolicy(&np, add) }); err != nil {
			return err
		}
		if cur != nil && same(cur.Policy, np) {
			return nil
		}
	}
	c.touchNamed(s.rt, np.Name)
	if op.Kind == OpDelete {
		if n := cur.groups[0].refs + cur.groups[1].refs; n > 0 {
			return fieldErr(obj, "", "%d routes still use it", n)
		}
		for fam := range 2 {
			for _, m := range cur.members[fam] {
				s.unref(c, m)
			}
			delete(s.rt.groupByID, cur.groups[fam].id)
		}
		delete(s.rt.named, np.Name)
		c.onUndo(func() {
			s.rt.named[cur.Name] = cur
			for fam := range 2 {
				s.rt.groupByID[cur.groups[fam].id] = cur.groups[fam]
			}
		})
		c.note(op.Kind, true, obj)
		return nil
	}
	members, err := s.acquireLists(c, &np)
	if err != nil {
		return err
	}
	if cur == nil {
		n := &namedRT{Policy: np, members: members}
		for fam := range 2 {
			gid, err := s.rt.groupIDs.alloc()
			if err != nil {
				return fieldErr(obj, "", "%v", err)
			}
			c.onUndo(func() { s.rt.groupIDs.release(gid, false) })
			g := &policy{id: GroupFlag | gid, key: groupKey(np.Name, fam), inner6: fam == 1, group: n}
			n.groups[fam] = g
			s.rt.groupByID[g.id] = g
			c.onUndo(func() { delete(s.rt.groupByID, g.id) })
		}
		s.rt.named[np.Name] = n
		c.onUndo(func() { delete(s.rt.named, np.Name) })
		c.note(op.Kind, false, obj)
		return nil
	}
	for fam := range 2 {
		for _, m := range cur.members[fam] {
			s.unref(c, m)
		}
	}
	old, oldMembers := cur.Policy, cur.members
	cur.Policy, cur.members = np, members
	c.onUndo(func() { cur.Policy, cur.members = old, oldMembers })
	c.note(op.Kind, true, obj)
	return nil
}

// groupWrites are the puts and deletes of the groups of the named policies change c touched.
func (s *Store) groupWrites(c *change) (puts, dels GroupWrites) {
	for name, b := range c.named {
		n := s.rt.named[name]
		for fam := range 2 {
			switch {
			case n != nil:
				v := GroupSpec{Buckets: n.buckets(fam)}
				e := Write[uint32, GroupSpec]{Key: n.groups[fam].id &^ GroupFlag, Val: v, Had: b.had}
				if b.had {
					if b.buckets[fam] == v.Buckets {
						continue
					}
					e.Old = GroupSpec{Buckets: b.buckets[fam]}
				}
				puts = append(puts, e)
			case b.had:
				dels = append(dels, Write[uint32, GroupSpec]{Key: b.gids[fam], Old: GroupSpec{Buckets: b.buckets[fam]}, Had: true})
			}
		}
	}
	return puts, dels
}
