package benchrig

// control.go: control-plane rates through the control API (the gRPC server, in-process): time to
// load N encap routes (spread over tenants and shared SR policies, in batches of one commit each) or
// N local SIDs, the latency of one more change on top of the loaded state, the latency of swapping
// one tenant's whole route table, and the memory that costs (kernel map memory, Go heap).

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/cilium/ebpf"
	pb "github.com/seg6x/seg6x/api/seg6xv1"
	"github.com/seg6x/seg6x/internal/api"
	"github.com/seg6x/seg6x/internal/dataplane"
	"github.com/seg6x/seg6x/internal/state"
	"github.com/seg6x/seg6x/tools/testsupport"
	"golang.org/x/sys/unix"
)

// ControlResult is one row of `seg6x-bench control`.
type ControlResult struct {
	Object       string  `json:"object"` // "routes" (one operation each), "route-sets" (RouteSet operations), "route-sets-packed" (their prefixes packed) or "sids"
	Count        int     `json:"count"`
	InFlight     int     `json:"in_flight"`            // commits the client kept outstanding while loading
	DiffLimit    int     `json:"diff_limit,omitempty"` // the loading commits' diff_limit (0: every object listed in the replies)
	Tenants      int     `json:"tenants,omitempty"`
	Policies     int     `json:"policies,omitempty"`
	LoadSeconds  float64 `json:"load_seconds"`
	LoadCPU      float64 `json:"load_cpu_seconds"` // CPU time (user+sys, every thread) of the load: steadier on a shared machine
	PerSecond    float64 `json:"per_second"`
	UpdateMillis float64 `json:"single_update_ms"`        // median of one more object, one commit each
	SwapMillis   float64 `json:"table_swap_ms,omitempty"` // replacing one tenant's whole table
	SwapRoutes   int     `json:"table_swap_routes,omitempty"`
	MapMiB       float64 `json:"map_mib"`     // kernel memory of the data plane's maps
	HeapMiB      float64 `json:"go_heap_mib"` // control plane's Go heap after the load
	NotSupported string  `json:"not_supported,omitempty"`
}

// routesPerTenant keeps every route a /32 inside 198.18.0.0/15 (the benchmarking range).
const routesPerTenant = 1 << 17

func nthAddr4(i int) netip.Addr {
	i %= routesPerTenant
	return netip.AddrFrom4([4]byte{198, 18 + byte(i>>16), byte(i >> 8), byte(i)})
}

func nthSID(i int) netip.Addr {
	return netip.AddrFrom16([16]byte{0xfc, 0x00, 0, 0x5, 0, 0, 0, 0, 0, 0, 0, 0, 0, byte(i >> 16), byte(i >> 8), byte(i)})
}

// controlPolicies is how many distinct segment lists the routes use (say, remote PEs).
const controlPolicies = 1000

// controlSegs are the segment lists' texts, made once: the client's own formatting is not what the
// load measures.
var controlSegs = func() (out [controlPolicies][]string) {
	for i := range out {
		out[i] = []string{fmt.Sprintf("fc00:2::%x", 1+i)}
	}
	return out
}()

func controlRoute(i int) *pb.Route {
	return &pb.Route{Tenant: "t" + strconv.Itoa(i/routesPerTenant), Prefix: netip.PrefixFrom(nthAddr4(i), 32).String(),
		Segs: controlSegs[i%controlPolicies], Src: "fc00:1::1"}
}

// controlRouteSets is routes lo..hi-1 (of one tenant) as route sets, one per segment list; packed:
// their prefixes in RouteSet.prefixes4 instead of as text.
func controlRouteSets(lo, hi int, packed bool) []*pb.Op {
	var ops []*pb.Op
	for j := lo; j < min(hi, lo+controlPolicies); j++ {
		rt := controlRoute(j)
		rt.Prefix = ""
		rs := &pb.RouteSet{Route: rt}
		for i := j; i < hi; i += controlPolicies {
			if a := nthAddr4(i); packed {
				b := a.As4()
				rs.Prefixes4 = append(rs.Prefixes4, b[0], b[1], b[2], b[3], 32)
			} else {
				rs.Prefixes = append(rs.Prefixes, netip.PrefixFrom(a, 32).String())
			}
		}
		ops = append(ops, &pb.Op{Kind: pb.Op_ADD, Object: &pb.Op_RouteSet{RouteSet: rs}})
	}
	return ops
}

// ControlOptions say how `seg6x-bench control` loads.
type ControlOptions struct {
	// RouteKinds are the route loads' forms (ControlResult.Object): "routes" (one Route operation
	// per route), "route-sets" (RouteSet operations, one per tenant and segment list in each commit),
	// "route-sets-packed" (the same with their prefixes packed, RouteSet.prefixes4).
	RouteKinds []string
	InFlight   int // commits the client keeps outstanding (1: one at a time)
	DiffLimit  int // the loading commits' diff_limit (0: the replies list every object)
}

// RunControl measures loads of each route count and SID count. It must run inside a namespace made
// for it: it creates a veth pair there for the tenant ports.
func RunControl(routeCounts, sidCounts []int, o ControlOptions) ([]ControlResult, error) {
	if err := testsupport.Run("ip", "link", "add", "cp0", "type", "veth", "peer", "name", "cp1"); err != nil {
		return nil, err
	}
	var res []ControlResult
	for _, n := range routeCounts {
		for _, kind := range o.RouteKinds {
			r, err := controlOnce(kind, n, o)
			if err != nil {
				return res, err
			}
			res = append(res, r)
		}
	}
	for _, n := range sidCounts {
		r, err := controlOnce("sids", n, o)
		if err != nil {
			return res, err
		}
		res = append(res, r)
	}
	return res, nil
}

const commitBatch = 50000

func controlOnce(kind string, n int, o ControlOptions) (ControlResult, error) {
	inFlight := o.InFlight
	r := ControlResult{Object: kind, Count: n, InFlight: max(inFlight, 1), DiffLimit: o.DiffLimit}
	if kind == "sids" && n+1 > state.MaxSIDs-1 {
		r.NotSupported = fmt.Sprintf("more than the %d SIDs the maps hold", state.MaxSIDs-1)
		return r, nil
	}
	if kind != "sids" && n+1 > state.MaxRoutes4/2 {
		r.NotSupported = fmt.Sprintf("more than the %d IPv4 routes the maps hold", state.MaxRoutes4/2)
		return r, nil
	}
	dir, err := os.MkdirTemp("", "seg6x-control-")
	if err != nil {
		return r, err
	}
	defer testsupport.RemoveInstance(dir)
	st, err := dataplane.OpenStore(dir, state.HostEnv{}, state.OpenOptions{})
	if err != nil {
		return r, err
	}
	defer st.Close()
	c, stop, err := api.Local(api.NewServer(st, true))
	if err != nil {
		return r, err
	}
	defer stop()
	ctx := context.Background()
	commit := func(ops []*pb.Op) error {
		_, err := c.Commit(ctx, &pb.CommitRequest{Ops: ops, DiffLimit: uint32(o.DiffLimit)})
		return err
	}
	start, cpu0 := time.Now(), cpuSeconds()
	var ops []*pb.Op
	if kind != "sids" {
		r.Tenants = (n + routesPerTenant - 1) / routesPerTenant
		for t := 0; t < r.Tenants; t++ {
			ops = append(ops, &pb.Op{Kind: pb.Op_ADD, Object: &pb.Op_Tenant{Tenant: &pb.Tenant{Name: fmt.Sprintf("t%d", t),
				Table: uint32(1000 + t), Ports: []*pb.Port{{Dev: "cp0", Vlan: uint32(10 + t)}}}}})
		}
	}
	// send commits ops: the first (tenants) before anything else, the rest with up to inFlight
	// commits outstanding (1: each waits for the previous reply before the next batch is made).
	var wg sync.WaitGroup
	var sendErr error
	var mu sync.Mutex
	slots := make(chan struct{}, max(inFlight, 1))
	first := true
	send := func(ops []*pb.Op) error {
		if first || inFlight <= 1 {
			first = false
			return commit(ops)
		}
		slots <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := commit(ops); err != nil {
				mu.Lock()
				sendErr = errors.Join(sendErr, err)
				mu.Unlock()
			}
			<-slots
		}()
		return nil
	}
	for i := 0; i < n; {
		switch kind {
		case "routes":
			ops = append(ops, &pb.Op{Kind: pb.Op_ADD, Object: &pb.Op_Route{Route: controlRoute(i)}})
			i++
		case "route-sets", "route-sets-packed":
			// The next routes up to the batch's size or the tenant's end, as one set per segment list.
			hi := min(n, i+commitBatch-len(ops), (i/routesPerTenant+1)*routesPerTenant)
			ops = append(ops, controlRouteSets(i, hi, kind == "route-sets-packed")...)
			i = hi
		default:
			ops = append(ops, &pb.Op{Kind: pb.Op_ADD, Object: &pb.Op_Sid{Sid: &pb.Sid{Sid: nthSID(i).String(), Action: "End"}}})
			i++
		}
		if len(ops) >= commitBatch || kind != "routes" && kind != "sids" {
			if err := send(ops); err != nil {
				return r, err
			}
			ops = nil
		}
	}
	if len(ops) > 0 {
		if err := send(ops); err != nil {
			return r, err
		}
	}
	wg.Wait()
	if sendErr != nil {
		return r, sendErr
	}
	r.LoadSeconds, r.LoadCPU = time.Since(start).Seconds(), cpuSeconds()-cpu0
	r.PerSecond = float64(n) / r.LoadSeconds
	r.Policies = st.Counts().Policies

	// One more object, then take it away again: 21 times, the median.
	var lat []time.Duration
	for k := 0; k < 21; k++ {
		var op *pb.Op
		if kind != "sids" {
			rt := &pb.Route{Tenant: "t0", Prefix: fmt.Sprintf("198.18.255.%d/32", k), Segs: []string{"fc00:2::1"}, Src: "fc00:1::1"}
			if n < routesPerTenant {
				rt.Prefix = netip.PrefixFrom(nthAddr4(n+k), 32).String()
			} else {
				rt.Prefix = fmt.Sprintf("198.18.255.%d/31", 2*k) // every /32 is taken: a shorter prefix
			}
			op = &pb.Op{Kind: pb.Op_ADD, Object: &pb.Op_Route{Route: rt}}
		} else {
			op = &pb.Op{Kind: pb.Op_ADD, Object: &pb.Op_Sid{Sid: &pb.Sid{Sid: nthSID(n + k).String(), Action: "End"}}}
		}
		t0 := time.Now()
		if err := commit([]*pb.Op{op}); err != nil {
			return r, err
		}
		lat = append(lat, time.Since(t0))
	}
	slices.Sort(lat)
	r.UpdateMillis = float64(lat[len(lat)/2].Microseconds()) / 1000

	if kind != "sids" {
		// Swap tenant t0's whole table for one with every segment list shifted by one.
		tr := &pb.TenantRoutes{Tenant: "t0"}
		for i := 0; i < min(n, routesPerTenant); i++ {
			rt := controlRoute(i + 1)
			rt.Tenant, rt.Prefix = "t0", netip.PrefixFrom(nthAddr4(i), 32).String()
			tr.Routes = append(tr.Routes, rt)
		}
		t0 := time.Now()
		if err := commit([]*pb.Op{{Kind: pb.Op_REPLACE, Object: &pb.Op_TenantRoutes{TenantRoutes: tr}}}); err != nil {
			return r, err
		}
		r.SwapMillis = float64(time.Since(t0).Microseconds()) / 1000
		r.SwapRoutes = len(tr.Routes)
	}
	r.MapMiB = mapMemory(dataplane.MapsOf(st))
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	r.HeapMiB = float64(ms.HeapAlloc) / (1 << 20)
	return r, nil
}

// cpuSeconds is the CPU time this process has used so far (user and system, all threads).
func cpuSeconds() float64 {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// mapMemory sums the kernel's accounting (memlock) of every data plane map.
func mapMemory(m *dataplane.Seg6xMaps) float64 {
	var total uint64
	for _, mp := range []*ebpf.Map{m.Ports, m.SidSpace, m.SidSources, m.Routes4, m.Routes6, m.Policies, m.Sids, m.TxPorts, m.PolicyStats,
		m.SidStats, m.ActionStats, m.ReasonStats} {
		if info, err := mp.Info(); err == nil {
			if b, ok := info.Memlock(); ok {
				total += b
			}
		}
	}
	return float64(total) / (1 << 20)
}
