package daemon

// logging_test.go: the daemon's log lines: levels and formats, the level a printf-style message gets,
// and the audit line every commit leaves (one per commit, with its origin, result, generation and
// counts; dry runs only at debug).

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"net/netip"
	"regexp"
	"strings"
	"testing"

	"github.com/seg6x/seg6x/internal/core"
	"github.com/seg6x/seg6x/internal/model"
	"github.com/seg6x/seg6x/internal/state"
	"github.com/seg6x/seg6x/tools/testsupport"
)

// jsonLines decodes one JSON object per line.
func jsonLines(t *testing.T, b *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("not a JSON line: %q: %v", l, err)
		}
		out = append(out, m)
	}
	return out
}

func TestTextLogLines(t *testing.T) {
	var b bytes.Buffer
	o := &Options{Log: &b} // the defaults: info, text
	o.logf("adopted %s: %d objects", "/run/seg6x", 3)
	o.logf("slow path unavailable: %v (fallback)", errors.New("no ring"))
	o.logf("interfaces changed, re-applying them failed: %s", "busy")
	o.logger().Debug("not shown at info")
	o.logger().With("origin", "api").Info("commit", "generation", 7)
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	stamp := `^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z `
	for i, want := range []string{
		stamp + `INFO adopted /run/seg6x: 3 objects$`,
		stamp + `WARN slow path unavailable: no ring \(fallback\)$`,
		stamp + `WARN interfaces changed, re-applying them failed: busy$`,
		stamp + `INFO commit origin=api generation=7$`,
	} {
		if i >= len(lines) || !regexp.MustCompile(want).MatchString(lines[i]) {
			t.Fatalf("line %d does not match %s:\n%s", i, want, b.String())
		}
	}
	if len(lines) != 4 {
		t.Fatalf("%d lines, want 4:\n%s", len(lines), b.String())
	}

	b.Reset()
	o = &Options{Log: &b, LogLevel: LogLevel{slog.LevelWarn}, LogFormat: "json"}
	o.logf("ready (pid %d)", 1)
	o.logf("next-hop cache: %v", errors.New("netlink gone"))
	got := jsonLines(t, &b)
	if len(got) != 1 || got[0]["level"] != "WARN" || got[0]["msg"] != "next-hop cache: netlink gone" {
		t.Fatalf("at warn, JSON: %v", got)
	}
}

// Every commit through the controller leaves one audit line, whoever made it; dry runs only at debug.
func TestAuditLinePerCommit(t *testing.T) {
	var b bytes.Buffer
	l := NewLogger(&b, slog.LevelInfo, "json")
	dir := t.TempDir()
	t.Cleanup(func() { testsupport.RemoveInstance(dir) }) // its pins too, after the store is closed
	ctl := core.New(testsupport.OpenStore(t, dir, testsupport.FakeEnv{}))
	ctl.OnCommit(auditTo(l))
	tenant := func(name string) []state.Op {
		return []state.Op{{Kind: model.OpAdd, Tenant: &model.Tenant{Name: name, Table: uint32(100 + len(name))}}}
	}
	if _, err := ctl.Apply(model.State{Tenants: []model.Tenant{{Name: "blue", Table: 99}}}, core.Options{Via: "config"}); err != nil {
		t.Fatal(err)
	}
	route := []state.Op{{Kind: model.OpAdd, RouteSet: &state.RouteSet{Route: model.Route{Tenant: "blue",
		Segs: []netip.Addr{netip.MustParseAddr("fc00:2::1")}},
		Prefixes: []netip.Prefix{netip.MustParsePrefix("198.18.0.0/24"), netip.MustParsePrefix("198.18.1.0/24")}}}}
	if _, err := ctl.Commit(route, core.Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := ctl.Commit(tenant("dry"), core.Options{DryRun: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := ctl.Commit(tenant("red"), core.Options{IfGeneration: 1}); err == nil {
		t.Fatal("a stale commit went through")
	}
	if _, err := ctl.Commit([]state.Op{{Kind: model.OpDelete, Tenant: &model.Tenant{Name: "blue"}}}, core.Options{Origin: model.OriginKernel}); err == nil {
		t.Fatal("the kernel removed the API's tenant")
	}
	got := jsonLines(t, &b)
	type line struct {
		level, origin, result string
		gen, added            float64
		kinds                 string
	}
	want := []line{
		{"INFO", "config", "ok", 1, 1, `{"tenant":{"added":1}}`},
		{"INFO", "api", "ok", 2, 2, `{"route":{"added":2}}`},
		{"WARN", "api", "stale", 2, 0, ""},
		{"WARN", "kernel", "invalid", 2, 0, ""},
	}
	if len(got) != len(want) {
		t.Fatalf("%d audit lines, want %d (dry run left out):\n%s", len(got), len(want), b.String())
	}
	for i, w := range want {
		g := got[i]
		kinds := ""
		if k, ok := g["kinds"]; ok {
			kb, _ := json.Marshal(k)
			kinds = string(kb)
		}
		if g["msg"] != "commit" || g["level"] != w.level || g["origin"] != w.origin || g["result"] != w.result ||
			g["generation"] != w.gen || g["added"] != w.added || g["changed"] != 0.0 || g["removed"] != 0.0 || kinds != w.kinds {
			t.Errorf("line %d: %v\nwant %+v", i, g, w)
		}
		if _, ok := g["duration"]; !ok {
			t.Errorf("line %d has no duration: %v", i, g)
		}
		if _, ok := g["error"]; ok != (w.result != "ok") {
			t.Errorf("line %d: error %v for result %s", i, g["error"], w.result)
		}
	}

	// At debug, a dry run is logged too.
	b.Reset()
	ctl.OnCommit(auditTo(NewLogger(&b, slog.LevelDebug, "text")))
	if _, err := ctl.Commit(tenant("dry"), core.Options{DryRun: true}); err != nil {
		t.Fatal(err)
	}
	if s := b.String(); strings.Count(s, "\n") != 1 || !strings.Contains(s, " DEBUG commit origin=api result=dry_run generation=2 added=1 changed=0 removed=0 kinds.tenant.added=1 duration=") {
		t.Fatalf("dry run at debug: %q", s)
	}
}
