package daemontest

// json_test.go: every command's --json against a daemon is one JSON document with no null where a
// list or an object belongs, 64-bit counters as numbers, and an error is {"error": {...}} with exit
// status 1.

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seg6x/seg6x/tools/benchrig"
)

func TestEveryCommandsJSON(t *testing.T) {
	r, d := setup(t, benchrig.SIDs(0, 1))
	run := func(args ...string) ([]byte, error) {
		return exec.Command("ip", append([]string{"netns", "exec", r.DutNS(), d.bin, "--dir", r.DutDir(), "--json"}, args...)...).Output()
	}
	export, err := exec.Command("ip", "netns", "exec", r.DutNS(), d.bin, "--dir", r.DutDir(), "config", "export").Output()
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "s.yaml")
	if err := os.WriteFile(file, export, 0o600); err != nil {
		t.Fatal(err)
	}
	var walk func(v any, path string) []string
	walk = func(v any, path string) (bad []string) {
		switch x := v.(type) {
		case nil:
			bad = append(bad, path+" is null")
		case map[string]any:
			for k, y := range x {
				bad = append(bad, walk(y, path+"."+k)...)
			}
		case []any:
			for i, y := range x {
				bad = append(bad, walk(y, fmt.Sprintf("%s[%d]", path, i))...)
			}
		}
		return bad
	}
	for _, args := range [][]string{
		{"show"}, {"show", "interfaces"}, {"show", "tenants"}, {"show", "routes", "--tenant", "t"}, {"show", "sids"},
		{"show", "domain"}, {"show", "kernel"}, {"status"}, {"stats"}, {"policy", "show"}, {"bgp", "show"}, {"version"},
		{"apply", "-f", file, "--dry-run"}, {"route", "show", "--origin", "bgp"},
	} {
		out, err := run(args...)
		if err != nil {
			t.Errorf("%v: %v\n%s", args, err, out)
			continue
		}
		var v any
		if err := json.Unmarshal(out, &v); err != nil {
			t.Errorf("%v: not JSON: %v\n%s", args, err, out)
			continue
		}
		if bad := walk(v, ""); len(bad) > 0 {
			t.Errorf("%v: %s\n%s", args, strings.Join(bad, "; "), out)
		}
	}
	var st struct {
		Generation any `json:"generation"`
		Daemon     bool
	}
	out, _ := run("status")
	if err := json.Unmarshal(out, &st); err != nil || !st.Daemon {
		t.Fatalf("status: %v\n%s", err, out)
	}
	if _, ok := st.Generation.(float64); !ok {
		t.Errorf("status generation %#v, want a number", st.Generation)
	}
	out, err = run("tenant", "add", "t", "table", "5")
	var e struct {
		Error struct{ Message, Code string }
	}
	if err == nil || json.Unmarshal(out, &e) != nil || e.Error.Code != "InvalidArgument" || !strings.Contains(e.Error.Message, `tenant "t": already exists`) {
		t.Errorf("a refused change under --json: %v\n%s", err, out)
	}
}
