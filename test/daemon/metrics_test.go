package daemontest

// metrics_test.go: a daemon run with --metrics, --log-format json and --config counts its config
// applies and commits on /metrics and leaves one JSON audit line per commit.

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"syscall"
	"testing"

	pb "github.com/seg6x/seg6x/api/seg6xv1"
	"github.com/seg6x/seg6x/tools/benchrig"
	"github.com/seg6x/seg6x/tools/testsupport"
)

func TestMetricsAndAuditLog(t *testing.T) {
	r, d := setupStopped(t, benchrig.SIDs(0, 1)) // a fresh instance: every counter from zero
	const addr = "127.0.0.1:19464"               // in the DUT's namespace
	if _, err := testsupport.IP(r.DutNS(), "link", "set", "lo", "up"); err != nil {
		t.Fatal(err)
	}
	d.start("--config", d.cfg, "--metrics", addr, "--log-format", "json", "--log-level", "debug")
	metrics := func() string {
		t.Helper()
		out, err := testsupport.NetnsExec(r.DutNS(), "curl", "-sf", "http://"+addr+"/metrics")
		if err != nil {
			t.Fatalf("/metrics: %v\n%s", err, out)
		}
		return out
	}
	has := func(body string, lines ...string) {
		t.Helper()
		for _, l := range lines {
			if !strings.Contains(body, l+"\n") {
				t.Errorf("/metrics has no %q", l)
			}
		}
	}
	body := metrics()
	has(body, `seg6x_config_reloads_total{result="ok"} 1`, `seg6x_config_reloads_total{result="error"} 0`,
		`seg6x_commits_total{origin="config",result="ok"} 1`, `seg6x_commits_total{origin="api",result="ok"} 0`,
		`seg6x_commit_seconds_count{origin="config"} 1`, `seg6x_reason_packets_total{reason="DROP_SLOW_BUSY"} 0`,
		`seg6x_slowpath_records_total{kind="fragment"} 0`, `seg6x_bgp_sessions{state="established"} 0`)
	if !strings.Contains(body, "seg6x_build_info{") {
		t.Error("/metrics has no seg6x_build_info")
	}

	// A commit through the API; a broken config on SIGHUP (not applied, counted as an error).
	if _, err := d.d.Client.Commit(context.Background(), &pb.CommitRequest{Ops: []*pb.Op{{Kind: pb.Op_ADD,
		Object: &pb.Op_Route{Route: &pb.Route{Tenant: "t", Prefix: "198.19.2.0/24", Segs: []string{benchrig.SIDs(0, 1)[0].String()}}}}}}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(d.cfg, []byte("routes: [{tenant: t, prefix: 198.19.1.0/24, segs: [nonsense]}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_ = d.d.Cmd.Process.Signal(syscall.SIGHUP)
	if !d.logs.WaitFor("SIGHUP:") {
		t.Fatalf("the broken config was not reported:\n%s", d.logs)
	}
	has(metrics(), `seg6x_config_reloads_total{result="error"} 1`, `seg6x_commits_total{origin="api",result="ok"} 1`)

	// Every line is JSON; one audit line per commit: the config at start, then the API's.
	var audits []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(d.logs.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("not a JSON line: %q", l)
		}
		if m["msg"] == "commit" {
			audits = append(audits, m)
		}
	}
	if len(audits) != 2 || audits[0]["origin"] != "config" || audits[1]["origin"] != "api" ||
		audits[1]["result"] != "ok" || audits[1]["added"] != 1.0 || audits[1]["generation"].(float64) <= audits[0]["generation"].(float64) {
		t.Fatalf("audit lines %v\n%s", audits, d.logs)
	}
}
