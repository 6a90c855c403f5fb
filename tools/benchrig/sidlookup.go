package benchrig

// sidlookup.go: the cost of finding a local SID, for `seg6x-bench micro`: fixtures the program returns
// unchanged (so one test run can repeat the same packet many times, without the per-run timer reads
// that blur single runs), timed with SID prefixes on and off in the same program (sid_conf), rounds
// interleaved. An exact /128 SID is one hash lookup either way; a destination that is no /128 SID
// pays the prefix trie only while some SID is served by prefix (bpf/sidlookup.h). Since SID lookups
// are cached per CPU (sid_cache), a repeated frame pays the tables on its first run only: the rows
// are the cached lookup's cost.

import (
	"fmt"
	"time"

	"github.com/cilium/ebpf"
	"github.com/seg6x/seg6x/internal/dataplane"
	"github.com/seg6x/seg6x/tools/fixtures"
)

// LookupRow is one case of the SID lookup table.
type LookupRow struct {
	Case        string  `json:"case"`
	Description string  `json:"description"`
	Action      string  `json:"action"`
	PrefixesNs  float64 `json:"prefixes_on_ns_per_pkt"`  // median over the rounds, SID prefixes configured
	NoPrefixNs  float64 `json:"prefixes_off_ns_per_pkt"` // the same program with sid_conf.prefixes = 0
	Repeat      uint32  `json:"repeat"`
	Rounds      int     `json:"rounds"`
	// With --baseline: the other build's program on the same frame, prefixes on, in the same rounds.
	BaselineNs float64 `json:"baseline_ns_per_pkt,omitempty"`
}

// lookupCases: the program's floor (a frame it passes right after parsing), an exact SID hit, and a
// fabric destination that is no SID at all (the miss every transit packet takes).
var lookupCases = []string{"arp_passes", "end_sl0", "transit_ipv6_not_ours"}

// SIDLookups times lookupCases, repeat runs per test run, rounds rounds alternating prefixes on and
// off. The fixture configuration has SIDs by prefix (uSID locators), so "on" is how it runs. base (nil:
// none) is another build's program, timed with prefixes on in every round.
func SIDLookups(rig *fixtures.Rig, repeat uint32, rounds int, base *ebpf.Program) ([]LookupRow, error) {
	all, err := fixtures.Load()
	if err != nil {
		return nil, err
	}
	conf := dataplane.MapsOf(rig.Store).SidConf
	set := func(on bool) error {
		v := dataplane.Seg6xSidConf{}
		if on {
			v.Prefixes = 1
		}
		if err := conf.Put(uint32(0), &v); err != nil {
			return err
		}
		return dataplane.InvalidateCachedAnswers(dataplane.MapsOf(rig.Store)) // as the control plane does
	}
	defer set(true)
	var out []LookupRow
	for _, name := range lookupCases {
		f := fixtures.Find(all, name)
		if f == nil {
			return nil, fmt.Errorf("lookup case %s has no fixture", name)
		}
		var on, off, baseNs []float64
		for i := 0; i < rounds; i++ {
			if base != nil {
				if err := set(true); err != nil {
					return nil, err
				}
				r, err := rig.RunRepeated(base, f, repeat)
				if err != nil {
					return nil, err
				}
				if want := dataplane.ActionIndex(f.Action); int(r.Action) != want {
					return nil, fmt.Errorf("%s: the baseline returned %s", name, dataplane.Actions[r.Action])
				}
				baseNs = append(baseNs, float64(r.PerRun)/float64(time.Nanosecond))
			}
			for _, pref := range []bool{i%2 == 0, i%2 != 0} { // alternate which goes first
				if err := set(pref); err != nil {
					return nil, err
				}
				r, err := rig.RunRepeated(nil, f, repeat)
				if err != nil {
					return nil, err
				}
				if want := dataplane.ActionIndex(f.Action); int(r.Action) != want {
					return nil, fmt.Errorf("%s returned %s, fixture expects %s", name, dataplane.Actions[r.Action], f.Action)
				}
				ns := float64(r.PerRun) / float64(time.Nanosecond)
				if pref {
					on = append(on, ns)
				} else {
					off = append(off, ns)
				}
			}
		}
		out = append(out, LookupRow{Case: name, Description: f.Description, Action: f.Action, PrefixesNs: median(on),
			NoPrefixNs: median(off), Repeat: repeat, Rounds: rounds, BaselineNs: median(baseNs)})
	}
	return out, nil
}
