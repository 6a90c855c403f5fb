package model

// policies.go: named SR policies with weighted segment lists (ECMP, fast reroute), and their checks.
// Each list is an ordinary encap policy (its prebuilt header, shared with routes of the same list); a
// named policy adds one group per inner family: GroupBuckets slots of list policy ids, filled by weight
// (internal/state's named.go). The headend picks the slot by the flow hash it already computes for the
// outer flow label, so one flow stays on one list. Marking a list down rewrites only the group's slots:
// its slots move to the lists still up (the flows on those stay where they are), and the routes that
// name the policy are not touched.

import (
	"fmt"
	"net/netip"
	"slices"
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

// PolicyObj names named policy name in errors and diffs.
func PolicyObj(name string) string { return fmt.Sprintf("policy %q", name) }

// ValidateNamedPolicy checks p and fills its defaults; the lists' uSIDs become their segs.
func ValidateNamedPolicy(p *Policy, add func(error)) {
	obj := PolicyObj(p.Name)
	if !nameRE.MatchString(p.Name) {
		add(FieldErr(obj, "name", "1 to 32 letters, digits, '.', '_' or '-'"))
	}
	if p.Mode == "" {
		p.Mode = ModeEncap
	}
	if p.Mode != ModeEncap && p.Mode != ModeEncapRed {
		add(FieldErr(obj, "mode", "%q is not encap or encap.red", p.Mode))
	}
	if p.HopLimit == 0 {
		p.HopLimit = DefaultHopLimit
	}
	validateSrc(obj, p.Src, add)
	switch {
	case len(p.Lists) == 0:
		add(FieldErr(obj, "lists", "no segment lists; give 1 to %d", MaxPolicyLists))
	case len(p.Lists) > MaxPolicyLists:
		add(FieldErr(obj, "lists", "%d segment lists, at most %d", len(p.Lists), MaxPolicyLists))
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
			add(FieldErr(obj, at+"weight", "%d, at most %d", l.Weight, MaxWeight))
		}
	}
}

// ClonePolicy deep-copies p.
func ClonePolicy(p *Policy) Policy {
	c := *p
	c.Lists = slices.Clone(p.Lists)
	for i := range c.Lists {
		c.Lists[i].Segs = slices.Clone(c.Lists[i].Segs)
		c.Lists[i].USIDs = c.Lists[i].USIDs.Clone()
		c.Lists[i].PolicyID = [2]uint32{}
	}
	return c
}
