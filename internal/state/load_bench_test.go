package state

// load_bench_test.go: the control plane's own cost of loading routes in bulk (the route sets of
// `seg6x-bench control`), without a data plane: what Store.Commit does besides writing the maps.
// go test -run - -bench LoadRouteSets -benchtime 3x ./internal/state/

import (
	"net/netip"
	"testing"

	"github.com/seg6x/seg6x/internal/model"
)

// nullDP takes every step and writes nothing.
type nullDP struct{ entries int }

func (d *nullDP) Apply(steps []Step) (func() error, error) {
	for _, s := range steps {
		if s.Writes != nil {
			d.entries += s.Writes.Len()
		}
	}
	return func() error { return nil }, nil
}
func (d *nullDP) Reconcile(*Image, ProgramOptions) (*ReconcileReport, error) {
	return &ReconcileReport{}, nil
}
func (d *nullDP) Fresh() bool                              { return true }
func (d *nullDP) Close()                                   {}
func (d *nullDP) Stats([]uint32, []uint32) (*Stats, error) { return &Stats{}, nil }
func (d *nullDP) PluginStats([]uint32, []PluginBind) (*PluginStats, error) {
	return &PluginStats{}, nil
}
func (d *nullDP) Trace(TraceFilter, ProgramOptions) (TraceSession, error) { return nil, nil }
func (d *nullDP) Explain(uint32, []byte, ExplainOptions) (*TraceRecord, error) {
	return nil, nil
}
func (d *nullDP) InvalidateNextHops() error { return nil }

// BenchmarkLoadRouteSets: 1M /32 routes over 8 tenants and 1000 segment lists, commits of 50000.
func BenchmarkLoadRouteSets(b *testing.B) {
	const n, perTenant, lists, batch = 1000000, 1 << 17, 1000, 50000
	segs := make([][]netip.Addr, lists)
	for i := range segs {
		segs[i] = []netip.Addr{netip.AddrFrom16([16]byte{0xfc, 0, 0, 2, 14: byte(i >> 8), 15: byte(i)})}
	}
	for it := 0; it < b.N; it++ {
		b.StopTimer()
		dir := b.TempDir()
		st, err := Open(dir, fakeEnv{"eth1": 7}, func(string) (Dataplane, error) { return &nullDP{}, nil })
		if err != nil {
			b.Fatal(err)
		}
		var ops []Op
		for t := 0; t < (n+perTenant-1)/perTenant; t++ {
			ops = append(ops, Op{Kind: model.OpAdd, Tenant: &model.Tenant{Name: "t" + string(rune('0'+t)), Table: uint32(1000 + t),
				Ports: []model.Port{{Dev: "eth1", VLAN: uint16(10 + t)}}}})
		}
		if _, err := st.Commit(ops, false); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		for lo := 0; lo < n; {
			hi := min(n, lo+batch, (lo/perTenant+1)*perTenant)
			ops = ops[:0]
			for j := lo; j < min(hi, lo+lists); j++ {
				set := &RouteSet{Route: model.Route{Tenant: "t" + string(rune('0'+j/perTenant)), Segs: segs[j%lists]}}
				for i := j; i < hi; i += lists {
					k := i % perTenant
					set.Prefixes = append(set.Prefixes, netip.PrefixFrom(netip.AddrFrom4([4]byte{198, 18 + byte(k>>16), byte(k >> 8), byte(k)}), 32))
				}
				ops = append(ops, Op{Kind: model.OpAdd, RouteSet: set})
			}
			if _, err := st.Commit(ops, false); err != nil {
				b.Fatal(err)
			}
			lo = hi
		}
		b.StopTimer()
		if c := st.Counts(); c.Routes4 != n {
			b.Fatalf("%d routes loaded, want %d", c.Routes4, n)
		}
		st.Close()
		b.StartTimer()
	}
}
