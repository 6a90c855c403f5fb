package model

// behaviors_test.go: validation follows the behavior table: every behavior accepts a SID with exactly
// the parameter it needs, refuses it without, and refuses parameters it does not take.

import (
	"net/netip"
	"strings"
	"testing"
)

func withParam(b *Behavior, p Param) SID {
	sd := SID{SID: netip.MustParseAddr("fc00:9::1"), Action: b.Name}
	switch p {
	case ParamNH4:
		sd.NH4 = netip.MustParseAddr("198.18.0.1")
	case ParamNH6:
		sd.NH6 = netip.MustParseAddr("2001:db8::1")
	case ParamTable:
		sd.Table = 100
	case ParamSegs:
		sd.Segs = []netip.Addr{netip.MustParseAddr("fc00:5::1")}
	case ParamPlugin:
		sd.Plugin = "fw"
	}
	return sd
}

func TestBehaviorTableDrivesValidation(t *testing.T) {
	check := func(sd SID) error {
		var errs Errors
		ValidateSID(&sd, func(string) *Tenant { return &Tenant{Name: "blue", Table: 100} }, func(err error) { errs = append(errs, err) })
		if len(errs) == 0 {
			return nil
		}
		return errs
	}
	for i := range Behaviors {
		b := &Behaviors[i]
		if err := check(withParam(b, b.Needs)); err != nil {
			t.Errorf("%s with %q: %v", b.Name, b.Needs, err)
		}
		if b.Needs != ParamNone {
			if err := check(withParam(b, ParamNone)); err == nil || !strings.Contains(err.Error(), string(b.Needs)) {
				t.Errorf("%s without %s: %v", b.Name, b.Needs, err)
			}
		}
		for _, p := range []Param{ParamNH4, ParamNH6, ParamTable, ParamSegs} {
			if p != b.Needs && check(withParam(b, p)) == nil {
				t.Errorf("%s accepts %s, which it does not take", b.Name, p)
			}
		}
		sd := withParam(b, b.Needs)
		sd.VLAN = 100
		if err := check(sd); (err == nil) != b.Decap {
			t.Errorf("%s (decap %t) with a VLAN: %v", b.Name, b.Decap, err)
		}
		sd = withParam(b, ParamNone)
		if b.Needs == ParamPlugin { // its plugin is not optional; its table is
			sd.Plugin = "fw"
		}
		sd.Tenant = "blue"
		if err := check(sd); (err == nil) != b.TakesTenant() {
			t.Errorf("%s (takes a tenant: %t) with a tenant: %v", b.Name, b.TakesTenant(), err)
		}
		if got := BehaviorOfKernel(b.KernelAction); b.KernelAction != 0 && got != b {
			t.Errorf("%s: kernel action %d maps back to %v", b.Name, b.KernelAction, got)
		}
	}
	if got := BehaviorOfKernel(0); got != nil {
		t.Errorf("kernel action 0 (unspecified) maps to %s", got.Name)
	}
	if err := check(SID{SID: netip.MustParseAddr("fc00:9::1"), Action: "End.B6"}); err == nil || !strings.Contains(err.Error(), "not one of") {
		t.Errorf("unknown behavior: %v", err)
	}
}
