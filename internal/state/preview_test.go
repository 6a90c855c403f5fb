package state

// preview_test.go: Store.Preview shows the state an apply would make and leaves the running one as
// it was (data plane, saved state, generation).

import (
	"reflect"
	"strings"
	"testing"
)

func TestPreviewShowsNextStateAndChangesNothing(t *testing.T) {
	st := openTemp(t)
	if _, err := st.Apply(baseState(), false); err != nil {
		t.Fatal(err)
	}
	before, gen := st.Image(), st.Gen()
	blueID, _ := st.TableIDOf("blue")

	next := baseState()
	next.Routes[0].Prefix = mustPrefix("198.18.3.0/24") // blue's table is swapped
	next.SIDs = next.SIDs[:1]
	var inside *Image
	var newBlueID uint32
	d, err := st.Preview(next, func(p *Store) {
		inside = p.Image()
		newBlueID, _ = p.TableIDOf("blue")
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := "- route 198.18.2.0/24 tenant blue\n- sid fc00:1::65"; !strings.Contains(d.String(), want) {
		t.Fatalf("diff:\n%v\nwant it to contain:\n%s", d, want)
	}
	if newBlueID == blueID {
		t.Fatalf("blue's table id %d in the preview: a changed table is swapped to a new id", newBlueID)
	}
	if len(inside.SIDs) != 1 || len(inside.Routes) != 1 {
		t.Fatalf("preview image: %d SIDs, %d routes; want 1 and 1", len(inside.SIDs), len(inside.Routes))
	}
	for k := range inside.Routes {
		if k.Prefix != mustPrefix("198.18.3.0/24") || k.TableID != newBlueID {
			t.Fatalf("preview route %+v, want 198.18.3.0/24 in table %d", k, newBlueID)
		}
	}
	if !reflect.DeepEqual(st.Image(), before) || st.Gen() != gen {
		t.Fatalf("the running state changed under a preview (generation %d -> %d)", gen, st.Gen())
	}
	if id, _ := st.TableIDOf("blue"); id != blueID {
		t.Fatalf("blue's table id %d after the preview, want %d", id, blueID)
	}
	checkImage(t, st)
	// A second preview of the same change gets the same ids (nothing leaked from the first).
	var again uint32
	if _, err := st.Preview(next, func(p *Store) { again, _ = p.TableIDOf("blue") }); err != nil || again != newBlueID {
		t.Fatalf("second preview: blue table id %d (first %d), err %v", again, newBlueID, err)
	}
	// An invalid state is refused before f runs.
	bad := baseState()
	bad.Routes[0].Tenant = "red"
	ran := false
	if _, err := st.Preview(bad, func(*Store) { ran = true }); err == nil || ran {
		t.Fatalf("invalid state: err %v, f ran %v", err, ran)
	}
	// The reopened instance has the applied state, not the previewed one.
	if !reflect.DeepEqual(reopen(t, st).Image(), before) {
		t.Fatal("the saved state holds the preview")
	}
}
