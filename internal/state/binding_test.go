package state

// binding_test.go: binding SIDs (End.B6.Encaps*) hold a reference on an SR policy like routes do:
// shared with a route of the same list, written before the SID, released with it, saved and replayed.

import (
	"net/netip"
	"testing"

	"github.com/seg6x/seg6x/internal/model"
)

func bindingSID(addr, action string, segs ...string) model.SID {
	sd := model.SID{SID: mustAddr(addr), Action: action}
	for _, s := range segs {
		sd.Segs = append(sd.Segs, mustAddr(s))
	}
	return sd
}

func policyOf(t *testing.T, st *Store, addr string) PolicyInfo {
	t.Helper()
	for _, sd := range st.SIDs() {
		if sd.SID == mustAddr(addr) {
			for _, p := range st.Policies() {
				if p.ID == sd.Policy {
					return p
				}
			}
			t.Fatalf("sid %s: policy %d not among %v", addr, sd.Policy, st.Policies())
		}
	}
	t.Fatalf("sid %s not found", addr)
	return PolicyInfo{}
}

func TestBindingSIDHoldsItsPolicy(t *testing.T) {
	st := openTemp(t)
	s := baseState()
	// An IPv6 route with the list the binding SID uses: the same policy (inner IPv6, encap).
	s.Routes = append(s.Routes, model.Route{Tenant: "blue", Prefix: mustPrefix("2001:db8:b::/48"),
		Segs: []netip.Addr{mustAddr("fc00:5::1"), mustAddr("fc00:6::64")}})
	s.SIDs = append(s.SIDs, bindingSID("fc00:1::7", "End.B6.Encaps", "fc00:5::1", "fc00:6::64"),
		bindingSID("fc00:1::8", "End.B6.Encaps.Red", "fc00:5::1", "fc00:6::64"))
	if _, err := st.Apply(s, false); err != nil {
		t.Fatal(err)
	}
	checkImage(t, st)
	p := policyOf(t, st, "fc00:1::7")
	if p.Routes != 1 || p.SIDs != 1 || p.Mode != model.ModeEncap {
		t.Errorf("End.B6.Encaps policy %+v: want 1 route and 1 binding SID, mode encap", p)
	}
	red := policyOf(t, st, "fc00:1::8")
	if red.ID == p.ID || red.Mode != model.ModeEncapRed || red.Routes != 0 || red.SIDs != 1 {
		t.Errorf("End.B6.Encaps.Red policy %+v (encap's %d): want its own encap.red policy, 1 binding SID", red, p.ID)
	}
	if got := st.Image().SIDs[mustPrefix("fc00:1::8/128")].Policy; got != red.ID {
		t.Errorf("data plane entry of fc00:1::8 names policy %d, want %d", got, red.ID)
	}

	// Saved and replayed: the same references (a route deleted later releases only its own).
	st = reopen(t, st)
	checkImage(t, st)
	if q := policyOf(t, st, "fc00:1::7"); q.ID != p.ID || q.Routes != 1 || q.SIDs != 1 {
		t.Errorf("after reopening: %+v, want %+v", q, p)
	}

	// Another list for the SID: a new policy; the old one keeps its route.
	s.SIDs[2] = bindingSID("fc00:1::7", "End.B6.Encaps", "fc00:5::2")
	if _, err := st.Apply(s, false); err != nil {
		t.Fatal(err)
	}
	if q := policyOf(t, st, "fc00:1::7"); q.ID == p.ID || q.SIDs != 1 || len(q.Segs) != 1 {
		t.Errorf("after replacing the list: %+v", q)
	}
	// The SIDs go: their policies with them (the route's stays).
	s.SIDs = s.SIDs[:2]
	if _, err := st.Apply(s, false); err != nil {
		t.Fatal(err)
	}
	checkImage(t, st)
	if n := len(st.Policies()); n != 2 {
		t.Errorf("%d policies left, want 2 (the two routes'): %+v", n, st.Policies())
	}
	st = reopen(t, st)
	if n := len(st.Policies()); n != 2 {
		t.Errorf("after reopening: %d policies, want 2: %+v", n, st.Policies())
	}
}

func TestBindingSIDValidation(t *testing.T) {
	st := openTemp(t)
	for _, c := range []struct {
		sd   model.SID
		want string
	}{
		{bindingSID("fc00:1::7", "End.B6.Encaps"), "sid fc00:1::7: segs: no SIDs; give 1 to 16"},
		{bindingSID("fc00:1::7", "End.B6.Encaps", "198.18.0.1"), "sid fc00:1::7: segs[0]: 198.18.0.1 is not a unicast IPv6 address"},
		{bindingSID("fc00:1::7", "End", "fc00:5::1"), "sid fc00:1::7: segs: End takes no segs; only End.B6.Encaps and End.B6.Encaps.Red do"},
		{model.SID{SID: mustAddr("fc00:1::7"), Action: "End", Src: mustAddr("fc00:1::1")},
			"sid fc00:1::7: src: End takes no src; only End.B6.Encaps and End.B6.Encaps.Red do"},
	} {
		sd := c.sd
		_, err := st.Commit([]Op{{Kind: model.OpAdd, SID: &sd}}, false)
		if err == nil || err.Error() != "operation 1 (add): "+c.want {
			t.Errorf("%+v: got %v, want %q", c.sd, err, c.want)
		}
	}
	if n := len(st.Policies()); n != 0 {
		t.Errorf("refused SIDs left %d policies", n)
	}
}
