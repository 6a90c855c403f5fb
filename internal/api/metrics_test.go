package api

// metrics_test.go: what /metrics shows of a fresh server (build info, every reason at 0, every
// commit series at 0, the slow path by kind, BGP), how commits and config applies are counted, and
// the tenant and name labels of the policies' counters.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	pb "github.com/seg6x/seg6x/api/seg6xv1"
	"github.com/seg6x/seg6x/internal/buildinfo"
	"github.com/seg6x/seg6x/internal/core"
	"github.com/seg6x/seg6x/internal/dataplane"
	"github.com/seg6x/seg6x/internal/state"
	"github.com/seg6x/seg6x/tools/testsupport/testroot"
)

// metricsServer is a daemon's server over a fresh instance, with a slow path and a BGP speaker that
// report fixed numbers, its client, and a scrape of its metrics (one collector for all scrapes).
func metricsServer(t *testing.T) (*Server, pb.ControlClient, func() samples) {
	t.Helper()
	testroot.Need(t, "bpffs, BPF maps")
	dir := t.TempDir()
	st, err := dataplane.OpenStore(dir, fakeEnv{"eth1": 7, "eth2": 8}, state.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServerFor(core.New(st), true)
	srv.SetSlowPath(func() *pb.SlowPath {
		return &pb.SlowPath{Running: true, Records: 9, Fragmented: 2, Fragments: 5, Injected: 3, VxlanFragmented: 1, VxlanFragments: 2, Sent: 1}
	})
	srv.SetBGP(func(bool) *pb.BgpReply {
		return &pb.BgpReply{Running: true, Imported: 4, Neighbors: []*pb.BgpNeighbor{
			{Address: "fc00:9::1", State: "established", Received: 6, Accepted: 6, Advertised: 2},
			{Address: "fc00:9::2", State: "active"}}}
	})
	srv.SetBGPRoutes(func() (uint64, uint64, uint64) { return 7, 4, 1 })
	c, stop, err := Local(srv)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stop()
		st.Close()
		if pins, err := os.Readlink(dataplane.PinDir(dir)); err == nil {
			_ = os.RemoveAll(pins) // in the host's bpffs
		}
		dataplane.DropPins(dir)
	})
	reg := prometheus.NewRegistry()
	reg.MustRegister(newCollector(srv))
	return srv, c, func() samples {
		t.Helper()
		return gather(t, reg)
	}
}

// sample is one series as scraped: counters and gauges by value, histograms by count.
type sample struct {
	labels map[string]string
	value  float64
}

type samples map[string][]sample // by metric name

func gather(t *testing.T, g prometheus.Gatherer) samples {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := samples{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			s := sample{labels: map[string]string{}}
			for _, l := range m.GetLabel() {
				s.labels[l.GetName()] = l.GetValue()
			}
			switch {
			case m.GetCounter() != nil:
				s.value = m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				s.value = m.GetGauge().GetValue()
			case m.GetHistogram() != nil:
				s.value = float64(m.GetHistogram().GetSampleCount())
			}
			out[mf.GetName()] = append(out[mf.GetName()], s)
		}
	}
	return out
}

// get is the value of the series of name with labels (k, v pairs), and whether there is one.
func (ss samples) get(name string, kv ...string) (float64, bool) {
next:
	for _, s := range ss[name] {
		for i := 0; i+1 < len(kv); i += 2 {
			if s.labels[kv[i]] != kv[i+1] {
				continue next
			}
		}
		return s.value, true
	}
	return 0, false
}

func (ss samples) want(t *testing.T, v float64, name string, kv ...string) {
	t.Helper()
	got, ok := ss.get(name, kv...)
	if !ok || got != v {
		t.Errorf("%s%v = %v (present %v), want %v", name, kv, got, ok, v)
	}
}

func TestMetricsFromTheStart(t *testing.T) {
	_, _, scrape := metricsServer(t)
	ss := scrape()

	b := buildinfo.Get(dataplane.MapLayout)
	if b.Modified {
		b.Commit += "-dirty"
	}
	ss.want(t, 1, "seg6x_build_info", "version", b.Version, "commit", b.Commit, "build_date", b.BuildDate, "map_layout", dataplane.MapLayout)
	if len(dataplane.ReasonTable) < 20 || len(ss["seg6x_reason_packets_total"]) != len(dataplane.ReasonTable) {
		t.Errorf("%d reason series, the program has %d reasons", len(ss["seg6x_reason_packets_total"]), len(dataplane.ReasonTable))
	}
	for _, r := range dataplane.ReasonTable {
		ss.want(t, 0, "seg6x_reason_packets_total", "reason", r.Name)
	}
	for _, o := range core.CommitOrigins {
		for _, r := range core.CommitResults {
			ss.want(t, 0, "seg6x_commits_total", "origin", o, "result", r)
		}
		ss.want(t, 0, "seg6x_commit_seconds", "origin", o)
	}
	ss.want(t, 0, "seg6x_config_reloads_total", "result", "ok")
	ss.want(t, 0, "seg6x_config_reloads_total", "result", "error")
	for kind, n := range map[string][2]float64{"fragment": {2, 5}, "inject": {3, 3}, "fragment6": {1, 2}, "send": {1, 1}} {
		ss.want(t, n[0], "seg6x_slowpath_records_total", "kind", kind)
		ss.want(t, n[1], "seg6x_slowpath_frames_total", "kind", kind)
	}
	ss.want(t, 9, "seg6x_slowpath_total", "what", "records")
	ss.want(t, 1, "seg6x_bgp_running")
	for _, st := range bgpStates {
		n := map[string]float64{"established": 1, "active": 1}[st]
		ss.want(t, n, "seg6x_bgp_sessions", "state", st)
	}
	ss.want(t, 1, "seg6x_bgp_neighbor_up", "neighbor", "fc00:9::1")
	ss.want(t, 0, "seg6x_bgp_neighbor_up", "neighbor", "fc00:9::2")
	ss.want(t, 6, "seg6x_bgp_neighbor_routes", "neighbor", "fc00:9::1", "direction", "received")
	ss.want(t, 2, "seg6x_bgp_neighbor_routes", "neighbor", "fc00:9::1", "direction", "advertised")
	ss.want(t, 7, "seg6x_bgp_routes", "what", "learned")
	ss.want(t, 4, "seg6x_bgp_routes", "what", "installed")
	ss.want(t, 1, "seg6x_bgp_routes", "what", "refused")
}

// Commits are counted by origin and result as they end, refused ones too; config applies by result.
func TestMetricsCountCommits(t *testing.T) {
	srv, c, scrape := metricsServer(t)
	ctx := context.Background()
	if _, err := c.Commit(ctx, &pb.CommitRequest{Ops: []*pb.Op{tenantOp(pb.Op_ADD, "blue", 100)}}); err != nil {
		t.Fatal(err)
	}
	ss := scrape()
	ss.want(t, 1, "seg6x_commits_total", "origin", "api", "result", "ok")
	ss.want(t, 0, "seg6x_commits_total", "origin", "api", "result", "invalid")
	ss.want(t, 1, "seg6x_commit_seconds", "origin", "api")

	// Refused: a route of a tenant that does not exist; and one made for an old generation.
	if _, err := c.Commit(ctx, &pb.CommitRequest{Ops: []*pb.Op{routeOp(pb.Op_ADD, "nosuch", "198.18.0.0/24", "fc00:2::1")}}); err == nil {
		t.Fatal("a route of no tenant was accepted")
	}
	if _, err := c.Commit(ctx, &pb.CommitRequest{Ops: []*pb.Op{tenantOp(pb.Op_ADD, "red", 200)}, IfGeneration: 9}); err == nil {
		t.Fatal("a stale commit was accepted")
	}
	if _, err := c.Commit(ctx, &pb.CommitRequest{Ops: []*pb.Op{tenantOp(pb.Op_ADD, "red", 200)}, DryRun: true}); err != nil {
		t.Fatal(err)
	}
	srv.CountConfigReload(nil)
	srv.CountConfigReload(errors.New("config: bad"))
	srv.CountConfigReload(errors.New("config: bad again"))
	ss = scrape()
	ss.want(t, 1, "seg6x_commits_total", "origin", "api", "result", "ok")
	ss.want(t, 1, "seg6x_commits_total", "origin", "api", "result", "invalid")
	ss.want(t, 1, "seg6x_commits_total", "origin", "api", "result", "stale")
	ss.want(t, 1, "seg6x_commits_total", "origin", "api", "result", "dry_run")
	ss.want(t, 1, "seg6x_commit_seconds", "origin", "api") // applied commits only
	ss.want(t, 1, "seg6x_config_reloads_total", "result", "ok")
	ss.want(t, 2, "seg6x_config_reloads_total", "result", "error")
	ss.want(t, 1, "seg6x_generation")
}

// The policies' counters name the tenants whose routes use them and the named policies they are
// lists of, and follow the state as it changes.
func TestMetricsPolicyLabels(t *testing.T) {
	_, c, scrape := metricsServer(t)
	ctx := context.Background()
	commit := func(ops ...*pb.Op) {
		t.Helper()
		if _, err := c.Commit(ctx, &pb.CommitRequest{Ops: ops}); err != nil {
			t.Fatal(err)
		}
	}
	commit(tenantOp(pb.Op_ADD, "blue", 100), tenantOp(pb.Op_ADD, "red", 200),
		&pb.Op{Kind: pb.Op_ADD, Object: &pb.Op_Policy{Policy: &pb.Policy{Name: "gold", Lists: []*pb.SegList{{Segs: []string{"fc00:3::1"}}}}}},
		routeOp(pb.Op_ADD, "blue", "198.18.0.0/24", "fc00:2::1"),
		routeOp(pb.Op_ADD, "red", "198.18.0.0/24", "fc00:2::1"), // the same segment list: one policy for both
		routeOp(pb.Op_ADD, "blue", "198.18.1.0/24", "fc00:2::2"),
		&pb.Op{Kind: pb.Op_ADD, Object: &pb.Op_Route{Route: &pb.Route{Tenant: "red", Prefix: "198.18.2.0/24", Policy: "gold"}}})
	labels := func() []string {
		var out []string
		for _, s := range scrape()["seg6x_policy_packets_total"] {
			out = append(out, fmt.Sprintf("segs=%s tenant=%s name=%s", s.labels["segs"], s.labels["tenant"], s.labels["name"]))
			if s.labels["policy"] == "" {
				t.Errorf("no policy id: %v", s.labels)
			}
		}
		sort.Strings(out)
		return out
	}
	want := []string{
		"segs=fc00:2::1 tenant=blue,red name=",
		"segs=fc00:2::2 tenant=blue name=",
		"segs=fc00:3::1 tenant=red name=gold", // the list's IPv4 and IPv6 policies
		"segs=fc00:3::1 tenant=red name=gold",
	}
	if got := labels(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("policy series:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Red's route moves to blue's segment list: the labels follow the next generation.
	commit(routeOp(pb.Op_REPLACE, "red", "198.18.0.0/24", "fc00:2::2"))
	want[0], want[1] = "segs=fc00:2::1 tenant=blue name=", "segs=fc00:2::2 tenant=blue,red name="
	if got := labels(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("after the change, policy series:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// /metrics serves the same in Prometheus' text format.
func TestMetricsHTTP(t *testing.T) {
	srv, _, _ := metricsServer(t)
	hs := httptest.NewServer(srv.HTTPHandler())
	defer hs.Close()
	resp, err := hs.Client().Get(hs.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, want := range []string{"# TYPE seg6x_build_info gauge", `seg6x_reason_packets_total{reason="DROP_`,
		`seg6x_commit_seconds_bucket{origin="api",le="0.001"} 0`, `seg6x_commits_total{origin="bgp",result="ok"} 0`,
		`seg6x_slowpath_records_total{kind="fragment6"} 1`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics has no %s", want)
		}
	}
	if t.Failed() {
		t.Logf("/metrics:\n%s", body)
	}
}
