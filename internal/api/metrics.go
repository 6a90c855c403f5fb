package api

// metrics.go: the daemon's HTTP endpoint: Prometheus /metrics (counters read from the per-CPU maps
// at scrape time) and /healthz (every configured interface has its program attached).

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	pb "github.com/seg6x/seg6x/api/seg6xv1"
)

var (
	descPolicyPkts  = prometheus.NewDesc("seg6x_policy_packets_total", "Packets encapsulated by an SR policy.", []string{"policy", "segs"}, nil)
	descPolicyBytes = prometheus.NewDesc("seg6x_policy_bytes_total", "Bytes (as received) encapsulated by an SR policy.", []string{"policy", "segs"}, nil)
	descSIDPkts     = prometheus.NewDesc("seg6x_sid_packets_total", "Packets processed by a local SID.", []string{"sid", "action"}, nil)
	descSIDBytes    = prometheus.NewDesc("seg6x_sid_bytes_total", "Bytes processed by a local SID.", []string{"sid", "action"}, nil)
	descActionPkts  = prometheus.NewDesc("seg6x_xdp_action_packets_total", "Packets by XDP verdict.", []string{"action"}, nil)
	descActionBytes = prometheus.NewDesc("seg6x_xdp_action_bytes_total", "Bytes by XDP verdict.", []string{"action"}, nil)
	descReasonPkts  = prometheus.NewDesc("seg6x_reason_packets_total", "Packets dropped (DROP_*) or handed to the kernel (PASS_*), by reason.", []string{"reason"}, nil)
	descObjects     = prometheus.NewDesc("seg6x_objects", "Objects installed.", []string{"kind"}, nil)
	descAPIErrors   = prometheus.NewDesc("seg6x_api_errors_total", "API calls that failed.", nil, nil)
	descGeneration  = prometheus.NewDesc("seg6x_generation", "Commits applied to the instance.", nil, nil)
	descRunSeconds  = prometheus.NewDesc("seg6x_prog_run_seconds_total", "XDP program run time (only while kernel.bpf_stats_enabled=1).", nil, nil)
	descRunCount    = prometheus.NewDesc("seg6x_prog_run_count_total", "XDP program runs (only while kernel.bpf_stats_enabled=1).", nil, nil)
	descAttached    = prometheus.NewDesc("seg6x_interface_attached", "1 if the interface has the seg6x program attached.", []string{"interface"}, nil)
	descSlow        = prometheus.NewDesc("seg6x_slowpath_total", "The daemon's slow path: records read, packets fragmented, fragments and answers run back in, records failed or lost (ring full).", []string{"what"}, nil)
	descSlowRunning = prometheus.NewDesc("seg6x_slowpath_running", "1 while the daemon reads the slow path ring.", nil, nil)
)

type collector struct{ srv *Server }

func (c collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descPolicyPkts, descPolicyBytes, descSIDPkts, descSIDBytes, descActionPkts,
		descActionBytes, descReasonPkts, descObjects, descAPIErrors, descGeneration, descRunSeconds, descRunCount, descAttached, descSlow, descSlowRunning} {
		ch <- d
	}
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	st, err := c.srv.Stats(context.Background(), &pb.StatsRequest{})
	status := c.srv.status()
	counter := func(d *prometheus.Desc, v uint64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	if err != nil {
		ch <- prometheus.NewInvalidMetric(descPolicyPkts, err)
	} else {
		for _, p := range st.Policies {
			id, segs := strconv.Itoa(int(p.Id)), strings.Join(p.Segs, ",")
			counter(descPolicyPkts, p.Count.Packets, id, segs)
			counter(descPolicyBytes, p.Count.Bytes, id, segs)
		}
		for _, s := range st.Sids {
			counter(descSIDPkts, s.Count.Packets, s.Sid, s.Action)
			counter(descSIDBytes, s.Count.Bytes, s.Sid, s.Action)
		}
		for a, v := range st.Actions {
			counter(descActionPkts, v.Packets, a)
			counter(descActionBytes, v.Bytes, a)
		}
		for r, v := range st.Reasons {
			counter(descReasonPkts, v.Packets, r)
		}
		if sp := st.SlowPath; sp != nil {
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
		}
	}
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
	reg.MustRegister(collector{s})
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
