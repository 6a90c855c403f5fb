package state

// fake_test.go: an in-memory Dataplane for the store's tests (no root, no BPF): tables of entries by
// key, steps applied with undo, failures injected by interface name, and one data plane per instance
// directory that outlives a store (reopen finds it; dropping it is a lost bpffs).

import (
	"fmt"
	"reflect"
	"sync"
	"testing"
)

type fakeDP struct {
	tables   map[Table]map[any]any
	attached map[string]bool
	failOn   string // attaching this interface fails
	fresh    bool
	onApply  func([]Step) // sees the steps of every commit
}

var (
	fakesMu sync.Mutex
	fakes   = map[string]*fakeDP{}
)

// openFake returns the fake data plane of instance dir, creating it (fresh) if there is none.
func openFake(dir string) (Dataplane, error) {
	fakesMu.Lock()
	defer fakesMu.Unlock()
	if f := fakes[dir]; f != nil {
		f.fresh = false
		return f, nil
	}
	f := &fakeDP{tables: map[Table]map[any]any{}, attached: map[string]bool{}, fresh: true}
	fakes[dir] = f
	return f, nil
}

func dropFake(dir string) {
	fakesMu.Lock()
	defer fakesMu.Unlock()
	delete(fakes, dir)
}

func fakeOf(st *Store) *fakeDP { return st.Dataplane().(*fakeDP) }

func (f *fakeDP) table(t Table) map[any]any {
	if f.tables[t] == nil {
		f.tables[t] = map[any]any{}
	}
	return f.tables[t]
}

func (f *fakeDP) count(t Table) int { return len(f.tables[t]) }

func (f *fakeDP) Fresh() bool { return f.fresh }
func (f *fakeDP) Close()      {}

func (f *fakeDP) Apply(steps []Step) (func() error, error) {
	if f.onApply != nil {
		f.onApply(steps)
	}
	var undo []func()
	rollback := func() error {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
		undo = nil
		return nil
	}
	for _, st := range steps {
		switch st.Kind {
		case StepPut, StepDelete:
			f.write(st.Kind, st.Writes, &undo)
		case StepAttach:
			name, was := st.Iface.Name, f.attached[st.Iface.Name]
			if st.IfDetached && was {
				continue
			}
			if name == f.failOn {
				rollback()
				return nil, fmt.Errorf("attach %s: injected failure", name)
			}
			f.attached[name] = true
			undo = append(undo, func() { f.attached[name] = was })
		case StepDetach:
			name := st.Iface.Name
			delete(f.attached, name)
		case StepResetCounters, StepInvalidateNextHops:
		default:
			rollback()
			return nil, fmt.Errorf("unknown step %d", st.Kind)
		}
	}
	return rollback, nil
}

// write runs a put or delete; undo restores what the table held.
func (f *fakeDP) write(kind StepKind, w Writes, undo *[]func()) {
	tb := f.table(w.Table())
	switch w := w.(type) {
	case TxPortWrites:
		writeTo(tb, kind, w, undo)
	case SIDSpaceWrites:
		writeTo(tb, kind, w, undo)
	case SIDSourceWrites:
		writeTo(tb, kind, w, undo)
	case PolicyWrites:
		writeTo(tb, kind, w, undo)
	case GroupWrites:
		writeTo(tb, kind, w, undo)
	case SIDWrites:
		writeTo(tb, kind, w, undo)
	case RouteWrites:
		// Undone as the real data plane undoes it: from what the entry says the map held.
		for _, r := range w {
			k, r := r.Key, r
			if kind == StepPut {
				tb[k] = r.Val
			} else {
				delete(tb, k)
			}
			*undo = append(*undo, func() {
				if r.Had {
					tb[k] = r.Old
				} else {
					delete(tb, k)
				}
			})
		}
	case PortWrites:
		writeTo(tb, kind, w, undo)
	case VXDevWrites:
		writeTo(tb, kind, w, undo)
	case VXRxWrites:
		writeTo(tb, kind, w, undo)
	case VXRemoteWrites:
		writeTo(tb, kind, w, undo)
	case VXMACWrites:
		writeTo(tb, kind, w, undo)
	case PluginWrites:
		writeTo(tb, kind, w, undo)
	default:
		panic(fmt.Sprintf("fake data plane: writes of table %d", w.Table()))
	}
}

// writeTo writes es to tb; undo restores what tb held.
func writeTo[K comparable, V any](tb map[any]any, kind StepKind, es []Write[K, V], undo *[]func()) {
	for _, e := range es {
		k := e.Key
		old, had := tb[k]
		if kind == StepPut {
			tb[k] = e.Val
		} else {
			delete(tb, k)
		}
		*undo = append(*undo, func() {
			if had {
				tb[k] = old
			} else {
				delete(tb, k)
			}
		})
	}
}

// The fake observes nothing: zero counters, traces without records, no explanations.
func (f *fakeDP) Stats(policies, sids []uint32) (*Stats, error) {
	return &Stats{Actions: map[string]Counter{}, Reasons: map[string]Counter{}, Policies: map[uint32]Counter{}, SIDs: map[uint32]Counter{}}, nil
}
func (f *fakeDP) PluginStats(slots []uint32, binds []PluginBind) (*PluginStats, error) {
	return &PluginStats{Slots: map[uint32]PluginCounters{}, Binds: map[uint32][]Counter{}}, nil
}
func (f *fakeDP) Trace(TraceFilter, ProgramOptions) (TraceSession, error) {
	return nil, fmt.Errorf("the fake data plane has no trace")
}
func (f *fakeDP) Explain(uint32, []byte, ExplainOptions) (*TraceRecord, error) {
	return nil, fmt.Errorf("the fake data plane has no explain")
}
func (f *fakeDP) InvalidateNextHops() error { return nil }

// imageTables is im as the fake's tables hold it.
func imageTables(im *Image) map[Table]map[any]any {
	out := map[Table]map[any]any{TableTxPorts: {}, TableSIDSpace: {}, TableSIDSources: {}, TablePolicies: {}, TableSIDs: {},
		TableRoutes: {}, TablePorts: {}, TableGroups: {}, TableVXDevs: {}, TableVXRx: {}, TableVXRemotes: {}, TableVXMACs: {}}
	for _, idx := range im.TxPorts {
		out[TableTxPorts][idx] = idx
	}
	for _, p := range im.SIDSpace {
		out[TableSIDSpace][p] = struct{}{}
	}
	for _, p := range im.SIDSources {
		out[TableSIDSources][p] = struct{}{}
	}
	for id, p := range im.Policies {
		out[TablePolicies][id] = p
	}
	for a, v := range im.SIDs {
		out[TableSIDs][a] = v
	}
	for k, v := range im.Routes {
		out[TableRoutes][k] = v
	}
	for k, v := range im.Ports {
		out[TablePorts][k] = v
	}
	for k, v := range im.Groups {
		out[TableGroups][k] = v
	}
	for k, v := range im.VX.Devs {
		out[TableVXDevs][k] = v
	}
	for k, v := range im.VX.Rx {
		out[TableVXRx][k] = v
	}
	for k := range im.VX.Remotes {
		out[TableVXRemotes][k] = struct{}{}
	}
	for k, v := range im.VX.MACs {
		out[TableVXMACs][k] = v
	}
	return out
}

// tableDiff lists what differs between a table and the image's: keys missing or holding another
// value, and stale keys (policy slots may outlive their policy: an array map never loses one).
func tableDiff(tb Table, have, want map[any]any) (wrong, stale []any) {
	for k, v := range want {
		if hv, ok := have[k]; !ok || !reflect.DeepEqual(hv, v) {
			wrong = append(wrong, k)
		}
	}
	if tb != TablePolicies {
		for k := range have {
			if _, ok := want[k]; !ok {
				stale = append(stale, k)
			}
		}
	}
	return wrong, stale
}

func (f *fakeDP) Reconcile(im *Image, opts ProgramOptions) (*ReconcileReport, error) {
	rep := &ReconcileReport{}
	for tb, want := range imageTables(im) {
		have := f.table(tb)
		wrong, stale := tableDiff(tb, have, want)
		for _, k := range wrong {
			have[k] = want[k]
		}
		for _, k := range stale {
			delete(have, k)
		}
		rep.Written += len(wrong)
		rep.Removed += len(stale)
	}
	f.attached = map[string]bool{}
	for _, it := range im.Interfaces {
		f.attached[it.Name] = true
		rep.Attached++
	}
	return rep, nil
}

// checkImage: what the fake holds after the commits so far is exactly the store's image.
func checkImage(t *testing.T, st *Store) {
	t.Helper()
	f := fakeOf(st)
	for tb, want := range imageTables(st.Image()) {
		wrong, stale := tableDiff(tb, f.tables[tb], want)
		for _, k := range wrong {
			t.Errorf("table %d key %v: data plane has %v, image %v", tb, k, f.tables[tb][k], want[k])
		}
		for _, k := range stale {
			t.Errorf("table %d: stale key %v = %v", tb, k, f.tables[tb][k])
		}
	}
}
