package daemontest

// apply_prune_test.go: `seg6x apply -f` against a running daemon refuses a file that would remove an
// interface or a tenant (an empty file, a truncated one) unless --prune says it is meant, and changes
// nothing then; --dry-run says so; a file that removes nothing of the kind needs no --prune.

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

func TestApplyNeedsPrune(t *testing.T) {
	r, d := setup(t, benchrig.SIDs(0, 1))
	run := func(args ...string) (string, error) {
		out, err := exec.Command("ip", append([]string{"netns", "exec", r.DutNS(), d.bin, "--dir", r.DutDir()}, args...)...).CombinedOutput()
		return string(out), err
	}
	counts := func() (ifaces, tenants, routes int) {
		t.Helper()
		out, err := run("show", "--json")
		if err != nil {
			t.Fatalf("show: %v\n%s", err, out)
		}
		var s struct {
			Interfaces []json.RawMessage `json:"interfaces"`
			Tenants    []json.RawMessage `json:"tenants"`
			Routes     []json.RawMessage `json:"routes"`
		}
		if err := json.Unmarshal([]byte(out), &s); err != nil {
			t.Fatalf("show --json: %v\n%s", err, out)
		}
		return len(s.Interfaces), len(s.Tenants), len(s.Routes)
	}
	i0, t0, r0 := counts()
	if i0 == 0 || t0 == 0 || r0 == 0 {
		t.Fatalf("the rig's state: %d interfaces, %d tenants, %d routes", i0, t0, r0)
	}
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.yaml")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := run("apply", "-f", empty)
	if err == nil || !strings.Contains(out, `would remove tenant "t", interface "`) || !strings.Contains(out, "nothing applied (apply it with --prune") {
		t.Errorf("apply of an empty file: %v\n%s", err, out)
	}
	if i, tn, rt := counts(); i != i0 || tn != t0 || rt != r0 {
		t.Errorf("refused, yet the state went from %d/%d/%d to %d/%d/%d", i0, t0, r0, i, tn, rt)
	}
	if out, err := run("apply", "-f", empty, "--dry-run"); err != nil || !strings.Contains(out, "(applying it needs --prune: it would remove") {
		t.Errorf("apply --dry-run of an empty file: %v\n%s", err, out)
	}

	// The running state without its routes: removes routes only, no --prune needed.
	export, err := run("config", "export")
	if err != nil {
		t.Fatal(err)
	}
	noRoutes := export[:strings.Index(export, "routes:")]
	f := filepath.Join(dir, "noroutes.yaml")
	if err := os.WriteFile(f, []byte(noRoutes), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := run("apply", "-f", f); err != nil || out != fmt.Sprintf("routes:       %d removed\n", r0) {
		t.Errorf("apply removing routes only: %v\n%s", err, out)
	}
	if i, tn, rt := counts(); i != i0 || tn != t0 || rt != 0 {
		t.Errorf("after removing the routes: %d/%d/%d objects", i, tn, rt)
	}

	if out, err := run("apply", "-f", empty, "--prune", "--diff"); err != nil || !strings.Contains(out, "- tenant \"t\"\n") {
		t.Errorf("apply --prune --diff of an empty file: %v\n%s", err, out)
	}
	if i, tn, rt := counts(); i+tn+rt != 0 {
		t.Errorf("after apply --prune of an empty file: %d/%d/%d objects", i, tn, rt)
	}
}
