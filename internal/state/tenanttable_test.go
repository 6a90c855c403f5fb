package state

// tenanttable_test.go: a tenant's table is its own VRF: the kernel's reserved tables and a table
// another tenant has are refused, naming the field; keeping or changing a tenant's own table is not.
// The kernel mirror's tenants describe the kernel's own tables (main, often, and shared): not refused.

import (
	"strings"
	"testing"

	"github.com/seg6x/seg6x/internal/model"
)

func TestTenantTables(t *testing.T) {
	st := openTemp(t)
	add := func(tn model.Tenant) error {
		_, err := st.Commit([]Op{{Kind: model.OpReplace, Tenant: &tn}}, false)
		return err
	}
	if err := add(model.Tenant{Name: "blue", Table: 100}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		tn   model.Tenant
		want string
	}{
		{model.Tenant{Name: "red", Table: 100}, `tenant "red": table: 100 already belongs to tenant "blue"`},
		{model.Tenant{Name: "red", Table: 253}, `tenant "red": table: 253 is the kernel's default table`},
		{model.Tenant{Name: "red", Table: 254}, `tenant "red": table: 254 is the kernel's main table`},
		{model.Tenant{Name: "red", Table: 255}, `tenant "red": table: 255 is the kernel's local table`},
		{model.Tenant{Name: "blue", Table: 255}, `tenant "blue": table: 255 is the kernel's local table`},
	} {
		gen := st.Gen()
		err := add(c.tn)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.tn, err, c.want)
		}
		if st.Gen() != gen {
			t.Errorf("%+v: refused, yet the generation moved", c.tn)
		}
	}
	for _, tn := range []model.Tenant{{Name: "blue", Table: 100}, {Name: "red", Table: 101}, {Name: "green"}, {Name: "blue", Table: 102},
		{Name: "red", Table: 100}, {Name: "violet", Table: 256}} {
		if err := add(tn); err != nil {
			t.Errorf("%+v: %v", tn, err)
		}
	}
	for _, tn := range []model.Tenant{{Name: "k254", Table: 254}, {Name: "k254b", Table: 254}, {Name: "k100", Table: 100}} {
		if _, err := st.Commit([]Op{{Kind: model.OpReplace, Origin: model.OriginKernel, Tenant: &tn}}, false); err != nil {
			t.Errorf("mirror tenant %+v: %v", tn, err)
		}
	}
}
