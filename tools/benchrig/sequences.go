package benchrig

// sequences.go: which scenarios can run one after another on one rig, and an order of scenarios
// that lets a test of many of them build few rigs and load seg6x's program few times (test/bench).
// seg6x-bench builds a rig for each scenario.

import (
	"slices"
	"strings"
)

// After says whether sc can run on a rig that prev was set up on (and no other scenario since), and
// whether sc's Setup must run there first: not when sc is prev or set up as prev is (setUpAs); it
// must when both are set up by a whole seg6x configuration alone, sc's replacing prev's (unless prev
// installed so many routes that removing them takes longer than a new rig). prev nil: no.
func (sc *Scenario) After(prev *Scenario) (ok, setup bool) {
	switch {
	case prev == nil:
		return false, false
	case sc.Name == prev.Name || sc.setUpAs == prev.Name || prev.setUpAs == sc.Name || sc.setUpAs != "" && sc.setUpAs == prev.setUpAs:
		return true, false
	case sc.config != "" && prev.config != "" && !prev.many:
		return true, true
	}
	return false, false
}

// RigOrder orders scs (kept in their order otherwise) so that each scenario can run, as often as can
// be, on the rig the one before it left (After); prev is the scenario set up on the rig the first
// will run on (nil: none):
//   - a scenario set up as another one of scs (setUpAs) right after it;
//   - every scenario set up by a whole seg6x configuration alone (config) one after another, where
//     the first of them is: those with options (the next-hop cache on: the program is loaded with it,
//     and loaded again once to turn it off) first, those that install very many routes last;
//   - first of all, the run of scenarios whose first can go on from prev, if one can.
func RigOrder(scs []*Scenario, prev *Scenario) []*Scenario {
	var runs [][]*Scenario
	configPos := -1
	var configured []*Scenario
	for _, sc := range scs {
		if sc.config != "" {
			if configPos < 0 {
				configPos = len(runs)
			}
			configured = append(configured, sc)
			continue
		}
		if slices.ContainsFunc(scs, func(o *Scenario) bool { return o.Name == sc.setUpAs }) {
			continue // in its original's run
		}
		run := []*Scenario{sc}
		for _, o := range scs {
			if o.setUpAs != "" && o.setUpAs == sc.Name {
				run = append(run, o)
			}
		}
		runs = append(runs, run)
	}
	if configPos >= 0 {
		rank := func(sc *Scenario) int {
			switch {
			case sc.many:
				return 2
			case strings.Contains(sc.config, "options:"):
				return 0
			}
			return 1
		}
		slices.SortStableFunc(configured, func(a, b *Scenario) int { return rank(a) - rank(b) })
		runs = slices.Insert(runs, configPos, configured)
	}
	for i, run := range runs {
		if ok, _ := run[0].After(prev); ok {
			runs = slices.Insert(slices.Delete(runs, i, i+1), 0, run)
			break
		}
	}
	return slices.Concat(runs...)
}
