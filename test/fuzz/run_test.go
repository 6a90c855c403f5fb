package fuzz

// run_test.go: one fuzz phase: generate, run through BPF_PROG_TEST_RUN, read the reason counters, check
// the result, tally actions and reasons, and keep the first failures with their bytes.

import (
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"sort"
	"strings"
	"time"

	"github.com/cilium/ebpf"
	"github.com/seg6x/seg6x/internal/dataplane"
	"github.com/seg6x/seg6x/internal/slowpath"
	"github.com/seg6x/seg6x/tools/fixtures"
	"github.com/seg6x/seg6x/tools/pktcheck"
	"github.com/seg6x/seg6x/tools/pktfuzz"
)

// tally is what a run saw.
type tally struct {
	frames   int
	elapsed  time.Duration
	actions  map[string]int
	reasons  map[string]int
	kinds    map[string]int
	outcomes map[string]int // kind of frame (as built) and action
	failures []string
	failed   int
}

func newTally() *tally {
	return &tally{actions: map[string]int{}, reasons: map[string]int{}, kinds: map[string]int{}, outcomes: map[string]int{}}
}

const keepFailures = 10

// phase runs n frames of g through prog and checks each.
func phase(name string, prog *ebpf.Program, g *pktfuzz.Gen, n int, t *tally) error {
	before := make([]uint64, dataplane.ReasonSlots)
	after := make([]uint64, dataplane.ReasonSlots)
	var scratch fixtures.ReasonScratch
	if err := rig.ReasonCounts(before, &scratch); err != nil {
		return err
	}
	out := make([]byte, pktfuzz.MaxFrame+1024)
	start := time.Now()
	for i := 0; i < n; i++ {
		f := g.Next()
		ifindex, err := rig.Ifindex(f.Dev)
		if err != nil {
			return err
		}
		idx := int(ifindex)
		ret, o, err := rig.RunFrame(prog, idx, f.Data, out, f.Linear)
		if err != nil {
			return fmt.Errorf("%s frame %d: %w", name, i, err)
		}
		if err := rig.ReasonCounts(after, &scratch); err != nil {
			return err
		}
		var moved []string
		for r := range after {
			if d := after[r] - before[r]; d != 0 {
				moved = append(moved, fmt.Sprintf("%s+%d", dataplane.ReasonName(r), d))
				t.reasons[dataplane.ReasonName(r)] += int(d)
			}
		}
		before, after = after, before
		action := "action " + fmt.Sprint(ret)
		if int(ret) < len(dataplane.Actions) {
			action = dataplane.Actions[ret]
		}
		t.frames++
		t.actions[action]++
		t.kinds[f.Kind]++
		t.outcomes[strings.SplitN(f.Kind, "/", 2)[0]+" -> "+action]++
		err = verdictOK(f.Dev, action, moved, f.Data, o)
		if err == nil && len(moved) == 1 && strings.HasPrefix(moved[0], "SLOW_") {
			err = slowRecordOK(moved[0], idx, f.Data)
		}
		if err != nil {
			t.failed++
			if len(t.failures) < keepFailures {
				t.failures = append(t.failures, fmt.Sprintf("%s frame %d (%s on %s): %s, reasons %v: %v\n  in  %s\n  out %s",
					name, i, f.Kind, f.Dev, action, moved, err, hex.EncodeToString(f.Data), hex.EncodeToString(o)))
			}
		}
	}
	t.elapsed += time.Since(start)
	return nil
}

// verdictOK is the oracle for one frame: the action, the reasons it moved, and the bytes.
func verdictOK(dev, action string, moved []string, in, out []byte) error {
	one := func(drop bool) bool {
		if len(moved) != 1 || !strings.HasSuffix(moved[0], "+1") {
			return false
		}
		return strings.HasPrefix(moved[0], "DROP_") == drop
	}
	switch action {
	case "XDP_DROP": // dropped, or consumed for the daemon's slow path (its record is checked apart)
		if !one(true) && !(len(moved) == 1 && strings.HasPrefix(moved[0], "SLOW_") && strings.HasSuffix(moved[0], "+1")) {
			return fmt.Errorf("a drop must count exactly one drop or slow path reason once")
		}
		return nil
	case "XDP_PASS":
		if len(moved) > 0 && !one(false) {
			return fmt.Errorf("a pass counts at most one pass reason once")
		}
		if toPluginSID(in) { // the kernel gets the frame as the plugin left it (its pass, or End's)
			return nil
		}
		return pktcheck.Passed(in, out)
	case "XDP_REDIRECT":
		if len(moved) == 1 && moved[0] == "ICMP_TOO_BIG+1" { // answered: the ICMP error goes back
			return pktcheck.Answered(in, out)
		}
		switch {
		case len(moved) > 0:
			return fmt.Errorf("a frame that leaves counts no drop or pass reason")
		case dev == vxOracle.bridge: // every frame of a bridge port is bridged: it leaves only encapsulated
			return vxOracle.Encapsulated(in, out)
		case vxOracle.ToLocalVTEP(in):
			return vxOracle.Decapsulated(in, out)
		}
		fallthrough
	case "XDP_TX":
		if len(moved) > 0 {
			return fmt.Errorf("a frame that leaves counts no drop or pass reason")
		}
		return pktcheck.Leaving(in, out)
	}
	return fmt.Errorf("%s", action)
}

// pluginSIDs are the plugin SIDs of the phase under way (none outside the plugin phase).
var pluginSIDs = map[netip.Addr]bool{}

// toPluginSID says whether frame is IPv6 to one of pluginSIDs.
func toPluginSID(frame []byte) bool {
	etype, off, err := pktcheck.L2(frame)
	if err != nil || etype != 0x86DD || len(frame) < off+40 {
		return false
	}
	return pluginSIDs[netip.AddrFrom16([16]byte(frame[off+24:off+40]))]
}

// slowRecordOK reads the record a frame that moved reason (SLOW_*+1) put on the slow path's ring and
// checks it: the port it came in on, and for a packet to fragment the packet itself and the fragments
// the daemon's code makes of it (RFC 791, independently checked), for an answer the ICMP error for the
// decapsulated packet.
func slowRecordOK(reason string, ifindex int, in []byte) error {
	ring.SetDeadline(time.Now().Add(time.Second))
	rec, err := ring.Read()
	if err != nil {
		return fmt.Errorf("%s but no slow path record: %w", reason, err)
	}
	m, frame, err := slowpath.Decode(rec.RawSample)
	if err != nil {
		return err
	}
	switch reason {
	case "SLOW_FRAGMENT+1":
		if m.Kind != slowpath.KindFragment || int(m.Ifindex) != ifindex {
			return fmt.Errorf("fragment record of kind %d for ifindex %d, frame from %d", m.Kind, m.Ifindex, ifindex)
		}
		if err := pktcheck.ToFragment(in, frame, int(m.L3off), int(m.Mtu)); err != nil {
			return err
		}
		frags, err := slowpath.Expand(m, frame)
		if errors.Is(err, slowpath.ErrBeyondMax) && pktcheck.BeyondIPv4Max(frame[m.L3off:]) {
			return nil // refused, and counted by the daemon as a failed record
		}
		if err != nil {
			return err
		}
		return pktcheck.Fragments(frame, int(m.L3off), min(int(m.Mtu), slowpath.MaxInjectFrame-int(m.L3off)), frags)
	case "SLOW_VXLAN_FRAGMENT+1":
		if tf0, err := rig.Ifindex("tf0"); err != nil || m.Kind != slowpath.KindFragment6 || m.Ifindex != tf0 {
			return fmt.Errorf("VXLAN fragment record of kind %d for ifindex %d, want the underlay towards the remote, tf0", m.Kind, m.Ifindex)
		}
		if err := vxOracle.Encapsulated(in, frame); err != nil {
			return fmt.Errorf("the frame to fragment: %w", err)
		}
		frags, err := slowpath.Expand(m, frame)
		if err != nil {
			return err
		}
		return pktcheck.Fragments6(frame, int(m.L3off), int(m.Mtu), frags)
	case "SLOW_DECAP_ICMP+1":
		if m.Kind != slowpath.KindInject {
			return fmt.Errorf("answer record of kind %d", m.Kind)
		}
		return pktcheck.DecapAnswered(in, frame)
	}
	return fmt.Errorf("unknown slow path reason %s", reason)
}

// report formats the tally: rate, then counts per action, per reason and per kind of frame.
func (t *tally) report() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d frames in %s: %.0f frames/s (generation, BPF_PROG_TEST_RUN, counter read and oracle per frame)\n",
		t.frames, t.elapsed.Round(time.Millisecond), float64(t.frames)/t.elapsed.Seconds())
	for _, m := range []struct {
		title string
		c     map[string]int
	}{{"actions", t.actions}, {"reasons", t.reasons}, {"frames", t.kinds}, {"outcomes", t.outcomes}} {
		keys := make([]string, 0, len(m.c))
		for k := range m.c {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool {
			return m.c[keys[i]] > m.c[keys[j]] || m.c[keys[i]] == m.c[keys[j]] && keys[i] < keys[j]
		})
		fmt.Fprintf(&b, "%s:\n", m.title)
		for _, k := range keys {
			fmt.Fprintf(&b, "  %-24s %9d\n", k, m.c[k])
		}
	}
	fmt.Fprintf(&b, "failures: %d\n", t.failed)
	return b.String()
}
