package api

// metrics.go: the daemon's HTTP endpoint: Prometheus /metrics (counters read from the per-CPU maps,
// the controller's commit counts and the daemon's reporters at scrape time) and /healthz (every
// configured interface has its program attached). Who a policy serves: policyowners.go.

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	pb "github.com/seg6x/seg6x/api/seg6xv1"
	"github.com/seg6x/seg6x/internal/buildinfo"
	"github.com/seg6x/seg6x/internal/dataplane"
	"github.com/seg6x/seg6x/internal/state"
)

// policyLabels: the policy's id and segment list (as before), and who it serves (policyOwners).
var policyLabels = []string{"policy", "segs", "tenant", "name"}

const policyHelp = " policy: its id; segs: its segment list; tenant: the tenant whose routes use it (several: their names" +
	" sorted, joined by commas; empty when only binding SIDs do); name: the named policy it is a segment list of (empty for" +
	" a route's own segment list; several: joined by commas)."

var (
	descBuildInfo   = prometheus.NewDesc("seg6x_build_info", "Always 1: the daemon's release, commit (-dirty: built from a modified tree), build date and map layout.", []string{"version", "commit", "build_date", "map_layout"}, nil)
	descPolicyPkts  = prometheus.NewDesc("seg6x_policy_packets_total", "Packets encapsulated by an SR policy."+policyHelp, policyLabels, nil)
	descPolicyBytes = prometheus.NewDesc("seg6x_policy_bytes_total", "Bytes (as received) encapsulated by an SR policy."+policyHelp, policyLabels, nil)
	descSIDPkts     = prometheus.NewDesc("seg6x_sid_packets_total", "Packets processed by a local SID.", []string{"sid", "action"}, nil)
	descSIDBytes    = prometheus.NewDesc("seg6x_sid_bytes_total", "Bytes processed by a local SID.", []string{"sid", "action"}, nil)
	descPluginPkts  = prometheus.NewDesc("seg6x_plugin_packets_total", "Packets a plugin's SIDs received, by outcome: the verdict its function returned (abort, drop, pass, end, dt4, dt6, dt46, encap) or why there was none or it was refused (empty, bad_verdict, malformed); non-zero only.", []string{"plugin", "outcome"}, nil)
	descPluginDrops = prometheus.NewDesc("seg6x_plugin_drops_total", "Packets a plugin dropped, by its own reason; non-zero only.", []string{"plugin", "reason"}, nil)
	descPluginSID   = prometheus.NewDesc("seg6x_plugin_sid_packets_total", "Packets a plugin SID received, by outcome (as seg6x_plugin_packets_total); non-zero only.", []string{"sid", "plugin", "outcome"}, nil)
	descActionPkts  = prometheus.NewDesc("seg6x_xdp_action_packets_total", "Packets by XDP verdict.", []string{"action"}, nil)
	descActionBytes = prometheus.NewDesc("seg6x_xdp_action_bytes_total", "Bytes by XDP verdict.", []string{"action"}, nil)
	descReasonPkts  = prometheus.NewDesc("seg6x_reason_packets_total", "Packets dropped (DROP_*), handed to the daemon's slow path (SLOW_*), answered with an ICMP error (ICMP_*) or handed to the kernel (PASS_*), by reason; every reason the program has, from the start.", []string{"reason"}, nil)
	descObjects     = prometheus.NewDesc("seg6x_objects", "Objects installed.", []string{"kind"}, nil)
	descAPIErrors   = prometheus.NewDesc("seg6x_api_errors_total", "API calls that failed.", nil, nil)
	descGeneration  = prometheus.NewDesc("seg6x_generation", "Commits applied to the instance.", nil, nil)
	descCommits     = prometheus.NewDesc("seg6x_commits_total", "Commits since the daemon started, by front end (origin: api (the API and CLI), config (the --config file), links (the interface watcher), kernel (the kernel mirror), bgp) and result (ok, dry_run, invalid, stale, error).", []string{"origin", "result"}, nil)
	descCommitSecs  = prometheus.NewDesc("seg6x_commit_seconds", "Time an applied commit took (checks, map writes, journal; not the wait for the lock), by origin.", []string{"origin"}, nil)
	descReloads     = prometheus.NewDesc("seg6x_config_reloads_total", "Applies of the --config file (at start and on SIGHUP), by result: ok, error (not read, refused or failed: the running state unchanged).", []string{"result"}, nil)
	descRunSeconds  = prometheus.NewDesc("seg6x_prog_run_seconds_total", "XDP program run time (only while kernel.bpf_stats_enabled=1).", nil, nil)
	descRunCount    = prometheus.NewDesc("seg6x_prog_run_count_total", "XDP program runs (only while kernel.bpf_stats_enabled=1).", nil, nil)
	descAttached    = prometheus.NewDesc("seg6x_interface_attached", "1 if the interface has the seg6x program attached.", []string{"interface"}, nil)
	descSlow        = prometheus.NewDesc("seg6x_slowpath_total", "The daemon's slow path: records read, packets fragmented, fragments and answers run back in, records failed or lost (ring full).", []string{"what"}, nil)
	descSlowRecords = prometheus.NewDesc("seg6x_slowpath_records_total", "Slow path records handled, by kind (SLOW_KIND_*): fragment (an IPv4 packet fragmented, its fragments run in), inject (an answer run in), fragment6 (a VXLAN encapsulation's outer IPv6 packet fragmented, sent), send (a multi-buffer frame sent for a driver that cannot).", []string{"kind"}, nil)
	descSlowFrames  = prometheus.NewDesc("seg6x_slowpath_frames_total", "Frames the slow path ran in or sent, by kind of record (fragment, fragment6: one per fragment).", []string{"kind"}, nil)
	descSlowRunning = prometheus.NewDesc("seg6x_slowpath_running", "1 while the daemon reads the slow path ring.", nil, nil)
	descBGPRunning  = prometheus.NewDesc("seg6x_bgp_running", "1 while the BGP speaker runs (the state has a bgp: section).", nil, nil)
	descBGPSessions = prometheus.NewDesc("seg6x_bgp_sessions", "BGP neighbors by session state (idle, connect, active, opensent, openconfirm, established).", []string{"state"}, nil)
	descBGPUp       = prometheus.NewDesc("seg6x_bgp_neighbor_up", "1 while the session with the neighbor is established.", []string{"neighbor"}, nil)
	descBGPNbRoutes = prometheus.NewDesc("seg6x_bgp_neighbor_routes", "VPN routes now received from a neighbor, accepted of them, refused of them (in no tenant), and advertised to it (direction).", []string{"neighbor", "direction"}, nil)
	descBGPFlaps    = prometheus.NewDesc("seg6x_bgp_neighbor_flaps_total", "Times the established session with the neighbor went down since the daemon started.", []string{"neighbor"}, nil)
	descBGPRefused  = prometheus.NewDesc("seg6x_bgp_refused_routes_total", "Learned routes refused since the daemon started, by reason: rt_not_imported (no tenant imports its route targets), local_prefix (the tenant holds the prefix itself), bad_sid (no usable service SID), own_sid (one of this node's SIDs), not_installable (the state refused it).", []string{"reason"}, nil)
	descBGPRoutes   = prometheus.NewDesc("seg6x_bgp_routes", "Learned BGP routes now: learned (best paths held, one per RD and prefix), installed (routes in tenants), refused (a tenant imports it but the state refused it, or it could not be read).", []string{"what"}, nil)
)

// bgpStates are the session states, each counted from the start (seg6x_bgp_sessions).
var bgpStates = []string{"idle", "connect", "active", "opensent", "openconfirm", "established"}

// collector reads the metrics at scrape time.
type collector struct {
	srv *Server

	mu     sync.Mutex
	owners policyOwners // of the generation it was computed for
}

func newCollector(s *Server) *collector { return &collector{srv: s} }

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descBuildInfo, descPolicyPkts, descPolicyBytes, descSIDPkts, descSIDBytes, descPluginPkts, descPluginDrops, descPluginSID, descActionPkts,
		descActionBytes, descReasonPkts, descObjects, descAPIErrors, descGeneration, descCommits, descCommitSecs, descReloads,
		descRunSeconds, descRunCount, descAttached, descSlow, descSlowRecords, descSlowFrames, descSlowRunning,
		descBGPRunning, descBGPSessions, descBGPUp, descBGPNbRoutes, descBGPRoutes, descBGPFlaps, descBGPRefused} {
		ch <- d
	}
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	counter := func(d *prometheus.Desc, v uint64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	b := buildinfo.Get(dataplane.MapLayout)
	if b.Modified {
		b.Commit += "-dirty"
	}
	gauge(descBuildInfo, 1, b.Version, b.Commit, b.BuildDate, b.MapLayout)

	var st *pb.StatsReply
	var owners policyOwners
	var err error
	c.srv.ctl.Read(func(s *state.Store) {
		if st, err = stats(s); err == nil {
			owners = c.policyOwners(s)
		}
	})
	if err != nil {
		c.srv.ctl.Fail(err)
		ch <- prometheus.NewInvalidMetric(descPolicyPkts, err)
	} else {
		for _, p := range st.Policies {
			labels := []string{strconv.Itoa(int(p.Id)), strings.Join(p.Segs, ","), owners.tenantsOf(p), namesOf(p)}
			counter(descPolicyPkts, p.Count.Packets, labels...)
			counter(descPolicyBytes, p.Count.Bytes, labels...)
		}
		for _, s := range st.Sids {
			counter(descSIDPkts, s.Count.Packets, s.Sid, s.Action)
			counter(descSIDBytes, s.Count.Bytes, s.Sid, s.Action)
			for o, v := range s.PluginOutcomes {
				counter(descPluginSID, v.GetPackets(), s.Sid, s.Plugin, o)
			}
		}
		for _, p := range st.Plugins {
			for o, v := range p.Outcomes {
				counter(descPluginPkts, v.GetPackets(), p.Name, o)
			}
			for r, v := range p.Drops {
				counter(descPluginDrops, v.GetPackets(), p.Name, r)
			}
		}
		for a, v := range st.Actions {
			counter(descActionPkts, v.Packets, a)
			counter(descActionBytes, v.Bytes, a)
		}
		for _, r := range dataplane.ReasonTable { // every reason, 0 until it counts (stats leaves those out)
			counter(descReasonPkts, st.Reasons[r.Name].GetPackets(), r.Name)
		}
	}
	c.srv.mu.Lock()
	slow, bgp, routes := c.srv.slow, c.srv.bgp, c.srv.routes
	c.srv.mu.Unlock()
	if slow != nil {
		collectSlowPath(slow(), counter, gauge)
	}
	if bgp != nil {
		collectBGP(bgp(false), routes, counter, gauge)
	}

	status := c.srv.status()
	gauge(descObjects, float64(status.Tenants), "tenants")
	gauge(descObjects, float64(status.Routes4), "routes_ipv4")
	gauge(descObjects, float64(status.Routes6), "routes_ipv6")
	gauge(descObjects, float64(status.Policies), "policies")
	gauge(descObjects, float64(status.Sids), "sids")
	gauge(descObjects, float64(len(status.Interfaces)), "interfaces")
	counter(descAPIErrors, status.ApiErrors)
	gauge(descGeneration, float64(status.Generation))
	if status.BpfStats {
		ch <- prometheus.MustNewConstMetric(descRunSeconds, prometheus.CounterValue, float64(status.ProgRunNs)/1e9)
		counter(descRunCount, status.ProgRunCount)
	}
	for _, it := range status.Interfaces {
		v := 0.0
		if it.ProgId != 0 {
			v = 1
		}
		gauge(descAttached, v, it.Name)
	}

	counts, lats := c.srv.ctl.CommitStats()
	for _, n := range counts {
		counter(descCommits, n.N, n.Origin, n.Result)
	}
	for _, l := range lats {
		ch <- prometheus.MustNewConstHistogram(descCommitSecs, l.Count, l.Sum, l.Buckets, l.Origin)
	}
	ok, failed := c.srv.reloads.ok.Load(), c.srv.reloads.failed.Load()
	counter(descReloads, ok, "ok")
	counter(descReloads, failed, "error")
}

// collectSlowPath reports the daemon's slow path: its running state, its counters, and its records by
// kind (bpf/structs.h: SLOW_KIND_*).
func collectSlowPath(sp *pb.SlowPath, counter func(*prometheus.Desc, uint64, ...string), gauge func(*prometheus.Desc, float64, ...string)) {
	running := 0.0
	if sp.Running {
		running = 1
	}
	gauge(descSlowRunning, running)
	counter(descSlow, sp.Records, "records")
	counter(descSlow, sp.Fragmented, "fragmented")
	counter(descSlow, sp.Fragments, "fragments")
	counter(descSlow, sp.VxlanFragmented, "vxlan_fragmented")
	counter(descSlow, sp.VxlanFragments, "vxlan_fragments")
	counter(descSlow, sp.Sent, "multibuf_sent")
	counter(descSlow, sp.Injected, "injected")
	counter(descSlow, sp.Failed, "failed")
	counter(descSlow, sp.Lost, "lost")
	for _, k := range []struct {
		kind            string
		records, frames uint64
	}{
		{"fragment", sp.Fragmented, sp.Fragments},
		{"inject", sp.Injected, sp.Injected},
		{"fragment6", sp.VxlanFragmented, sp.VxlanFragments},
		{"send", sp.Sent, sp.Sent},
	} {
		counter(descSlowRecords, k.records, k.kind)
		counter(descSlowFrames, k.frames, k.kind)
	}
}

// collectBGP reports the BGP speaker: whether it runs, its sessions by state and per neighbor (routes,
// flaps), its learned routes, and the routes it refused by reason.
func collectBGP(rep *pb.BgpReply, routes BGPRouteCounter, counter func(*prometheus.Desc, uint64, ...string),
	gauge func(*prometheus.Desc, float64, ...string)) {
	running := 0.0
	if rep.GetRunning() {
		running = 1
	}
	gauge(descBGPRunning, running)
	byState := map[string]int{}
	for _, n := range rep.GetNeighbors() {
		byState[n.State]++
		up := 0.0
		if n.State == "established" {
			up = 1
		}
		gauge(descBGPUp, up, n.Address)
		gauge(descBGPNbRoutes, float64(n.Received), n.Address, "received")
		gauge(descBGPNbRoutes, float64(n.Accepted), n.Address, "accepted")
		gauge(descBGPNbRoutes, float64(n.Refused), n.Address, "refused")
		gauge(descBGPNbRoutes, float64(n.Advertised), n.Address, "advertised")
		counter(descBGPFlaps, n.Flaps, n.Address)
	}
	for reason, n := range rep.GetRefusedRoutes() {
		counter(descBGPRefused, n, reason)
	}
	for _, s := range bgpStates {
		gauge(descBGPSessions, float64(byState[s]), s)
	}
	learned, installed, refused := uint64(0), rep.GetImported(), uint64(0)
	if routes != nil {
		learned, installed, refused = routes()
	}
	gauge(descBGPRoutes, float64(learned), "learned")
	gauge(descBGPRoutes, float64(installed), "installed")
	gauge(descBGPRoutes, float64(refused), "refused")
}

// reloadCounts counts the daemon's applies of its --config file.
type reloadCounts struct{ ok, failed atomic.Uint64 }

// CountConfigReload counts one apply of the daemon's --config file (at start or on SIGHUP) that
// ended with err.
func (s *Server) CountConfigReload(err error) {
	if err != nil {
		s.reloads.failed.Add(1)
	} else {
		s.reloads.ok.Add(1)
	}
}

// Health reports nil when every configured interface has a program attached.
func (s *Server) Health() error {
	st := s.status()
	for _, it := range st.Interfaces {
		if it.ProgId == 0 {
			return fmt.Errorf("interface %s has no program attached", it.Name)
		}
	}
	return nil
}

// HTTPHandler serves /metrics and /healthz.
func (s *Server) HTTPHandler() http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(newCollector(s))
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		if err := s.Health(); err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	return mux
}
