package state

// errorder_test.go: the problems a commit can only find once every operation is in (a deleted
// tenant still used by SIDs, SIDs naming a tenant that is gone) come in one order, tenant name then
// SID address, not the order of a map: the same commit always gets the same message.

import (
	"testing"

	"github.com/seg6x/seg6x/internal/model"
)

func TestFinishErrorsInOrder(t *testing.T) {
	st := openTemp(t)
	if _, err := st.Apply(baseState(), false); err != nil {
		t.Fatal(err)
	}
	var ops []Op
	for _, a := range []string{"fc00:1::72", "fc00:1::70", "fc00:1::71"} {
		ops = append(ops, Op{Kind: model.OpAdd, SID: &model.SID{SID: mustAddr(a), Action: "End.DT4", Tenant: "blue"}})
	}
	ops = append(ops, Op{Kind: model.OpReplace, TenantRoutes: &TenantRoutes{Tenant: "blue"}},
		Op{Kind: model.OpDelete, Tenant: &model.Tenant{Name: "blue"}})
	want := `tenant "blue": SID fc00:1::64 still uses it
tenant "blue": SID fc00:1::70 still uses it
tenant "blue": SID fc00:1::71 still uses it
tenant "blue": SID fc00:1::72 still uses it
sid fc00:1::70: tenant: unknown tenant "blue"
sid fc00:1::71: tenant: unknown tenant "blue"
sid fc00:1::72: tenant: unknown tenant "blue"`
	for i := 0; i < 20; i++ { // map order differs from one iteration to the next
		if _, err := st.Commit(ops, true); err == nil || err.Error() != want {
			t.Fatalf("commit %d: error\n%v\nwant\n%s", i, err, want)
		}
	}
}
