package api

// dashboard_test.go: the Grafana dashboard (deploy/grafana/seg6x-dashboard.json) is valid JSON whose
// every panel queries something, and every metric its queries name is one the daemon exports (taken
// from the collector itself: a renamed metric fails here).

import (
	"encoding/json"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

const dashboardFile = "../../deploy/grafana/seg6x-dashboard.json"

type dashPanel struct {
	ID         int         `json:"id"`
	Type       string      `json:"type"`
	Title      string      `json:"title"`
	Datasource *dashSource `json:"datasource"`
	Targets    []struct {
		Expr       string      `json:"expr"`
		Datasource *dashSource `json:"datasource"`
	} `json:"targets"`
	Panels []dashPanel `json:"panels"` // a collapsed row's
}

type dashSource struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

type dashboard struct {
	Title      string      `json:"title"`
	UID        string      `json:"uid"`
	Panels     []dashPanel `json:"panels"`
	Templating struct {
		List []struct {
			Name  string          `json:"name"`
			Type  string          `json:"type"`
			Query json.RawMessage `json:"query"`
		} `json:"list"`
	} `json:"templating"`
}

// readDashboard parses the dashboard and returns it with every query it makes (panel targets and
// template variables), each with where it is.
func readDashboard(t *testing.T) (dashboard, map[string]string) {
	t.Helper()
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	queries := map[string]string{} // query -> where
	var walk func(ps []dashPanel)
	walk = func(ps []dashPanel) {
		for _, p := range ps {
			walk(p.Panels)
			for _, tg := range p.Targets {
				queries[tg.Expr] = "panel " + p.Title
			}
		}
	}
	walk(d.Panels)
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		var q struct {
			Query string `json:"query"`
		}
		if err := json.Unmarshal(v.Query, &q); err != nil {
			var s string
			if err := json.Unmarshal(v.Query, &s); err != nil {
				t.Fatalf("variable %s: query %s", v.Name, v.Query)
			}
			q.Query = s
		}
		queries[q.Query] = "variable " + v.Name
	}
	return d, queries
}

// The dashboard is valid, names its data source through a variable (it imports into any Grafana), and
// every panel queries at least one seg6x metric.
func TestDashboardIsValid(t *testing.T) {
	d, _ := readDashboard(t)
	if d.Title == "" || d.UID == "" {
		t.Errorf("title %q, uid %q", d.Title, d.UID)
	}
	hasVar := false
	for _, v := range d.Templating.List {
		hasVar = hasVar || (v.Type == "datasource" && v.Name == "datasource")
	}
	if !hasVar {
		t.Error("no datasource template variable")
	}
	ids := map[int]string{}
	n := 0
	var walk func(ps []dashPanel)
	walk = func(ps []dashPanel) {
		for _, p := range ps {
			if prev, dup := ids[p.ID]; dup || p.ID == 0 {
				t.Errorf("panel %q: id %d (also %q)", p.Title, p.ID, prev)
			}
			ids[p.ID] = p.Title
			walk(p.Panels)
			if p.Type == "row" {
				continue
			}
			n++
			if p.Title == "" || p.Datasource == nil || p.Datasource.UID != "${datasource}" {
				t.Errorf("panel %q: no title, or a data source not from the variable: %+v", p.Title, p.Datasource)
			}
			if len(p.Targets) == 0 {
				t.Errorf("panel %q has no target", p.Title)
			}
			for _, tg := range p.Targets {
				if !metricRE.MatchString(tg.Expr) {
					t.Errorf("panel %q: query %q names no seg6x metric", p.Title, tg.Expr)
				}
				if tg.Datasource != nil && tg.Datasource.UID != "${datasource}" {
					t.Errorf("panel %q: target data source %+v", p.Title, tg.Datasource)
				}
			}
		}
	}
	walk(d.Panels)
	if n < 10 {
		t.Errorf("%d panels", n)
	}
}

var (
	metricRE = regexp.MustCompile(`\bseg6x_[a-zA-Z0-9_]+`)
	fqNameRE = regexp.MustCompile(`fqName: "([^"]+)"`)
)

// described names the metrics col declares (Describe: no data plane needed).
func described(t *testing.T, col prometheus.Collector) map[string]bool {
	t.Helper()
	descs := make(chan *prometheus.Desc, 100)
	col.Describe(descs)
	close(descs)
	out := map[string]bool{}
	for d := range descs {
		m := fqNameRE.FindStringSubmatch(d.String())
		if m == nil {
			t.Fatalf("no name in %s", d)
		}
		out[m[1]] = true
	}
	return out
}

// checkQueries fails t for every metric a dashboard query names that is not in exported (a
// histogram's _bucket, _sum and _count series by its name), and for each area of the dashboard that
// shows none of its metrics.
func checkQueries(t *testing.T, exported, histogram map[string]bool) {
	t.Helper()
	_, queries := readDashboard(t)
	used := map[string]bool{}
	for q, where := range queries {
		for _, name := range metricRE.FindAllString(q, -1) {
			base := name
			for _, suffix := range []string{"_bucket", "_sum", "_count"} {
				if b, ok := strings.CutSuffix(name, suffix); ok && histogram[b] {
					base = b
				}
			}
			used[base] = true
			if !exported[base] {
				t.Errorf("%s: %s is not a metric the daemon exports (query %s)", where, name, q)
			}
		}
	}
	for _, m := range []string{"seg6x_objects", "seg6x_policy_packets_total", "seg6x_sid_packets_total", "seg6x_reason_packets_total",
		"seg6x_xdp_action_packets_total", "seg6x_slowpath_records_total", "seg6x_bgp_sessions", "seg6x_bgp_routes",
		"seg6x_commit_seconds", "seg6x_commits_total", "seg6x_config_reloads_total"} {
		if !used[m] {
			t.Errorf("the dashboard does not show %s", m)
		}
	}
	if t.Failed() {
		t.Logf("exported: %s", strings.Join(slices.Sorted(maps.Keys(exported)), " "))
	}
}

// Every metric the dashboard's queries name is one the daemon's collector exports, as gathered from a
// server with every reporter a daemon attaches (a histogram also by its _bucket, _sum and _count
// series; a metric it exports only sometimes, like the program run time while
// kernel.bpf_stats_enabled=1, by its description).
func TestDashboardQueriesNameExportedMetrics(t *testing.T) {
	srv, _, _ := metricsServer(t)
	col := newCollector(srv)
	reg := prometheus.NewRegistry()
	reg.MustRegister(col)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	exported, histogram := described(t, col), map[string]bool{}
	for _, mf := range mfs {
		exported[mf.GetName()] = true
		histogram[mf.GetName()] = mf.GetType().String() == "HISTOGRAM"
	}
	if !histogram["seg6x_commit_seconds"] {
		t.Error("seg6x_commit_seconds is not gathered as a histogram")
	}
	checkQueries(t, exported, histogram)
}

// The same without root (no data plane to gather from): against the metrics the collector describes.
func TestDashboardQueriesNameDescribedMetrics(t *testing.T) {
	exported := described(t, newCollector(&Server{}))
	checkQueries(t, exported, map[string]bool{"seg6x_commit_seconds": exported["seg6x_commit_seconds"]})
}
