package daemontest

// apply_explain_test.go: `seg6x apply -f F --dev IFACE --explain FRAME` against a running daemon: the
// diff, and per frame the record now and under F (the SRH of the frame out carries F's SID, not the
// running one's); nothing is applied.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/seg6x/seg6x/internal/model"
	"github.com/seg6x/seg6x/tools/benchrig"
)

type explainJSON struct {
	Action, Class, Route, Tenant string
	Tx                           []byte
}

func TestApplyExplain(t *testing.T) {
	segs := benchrig.SIDs(0, 1)
	r, d := setup(t, segs)
	next := benchrig.SIDs(1, 1)
	file := filepath.Join(t.TempDir(), "next.yaml")
	if err := os.WriteFile(file, []byte(benchrig.HeadendConfig(next, 0)), 0o600); err != nil {
		t.Fatal(err)
	}
	dev, vlan := benchrig.TenantPort()
	cli := func(args ...string) []byte {
		t.Helper()
		out, err := exec.Command("ip", append([]string{"netns", "exec", r.DutNS(), d.bin, "--dir", r.DutDir()}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("seg6x %v: %v\n%s", args, err, out)
		}
		return out
	}
	before := cli("config", "export")
	// The text form (checked below) at the same time: each explanation loads the program.
	type result struct {
		out string
		err error
	}
	textc := make(chan result, 1)
	go func() {
		out, err := d.cli("apply", "-f", file, "--dev", dev, "--explain", fmt.Sprintf("vlan %d ipv4 198.18.0.2>198.19.1.5 udp 1000>2000", vlan))
		textc <- result{out, err}
	}()
	out := cli("apply", "-f", file, "--dev", dev, "--json",
		"--explain", fmt.Sprintf("vlan %d ipv4 198.18.0.2>198.19.1.5 udp 1000>2000", vlan),
		"--explain", fmt.Sprintf("vlan %d ipv4 198.18.0.2>198.19.1.5 udp 1000>2000", vlan+1))
	var got struct {
		Diff struct {
			Added, Changed, Removed int
			Changes                 []model.Change
		}
		Explain []struct {
			Frame, Dev string
			Now, After explainJSON
		}
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	want := []model.Change{{Op: "change", Kind: "route", Tenant: "t", Prefix: "198.19.1.0/24"}}
	if !slices.Equal(got.Diff.Changes, want) || got.Diff.Changed != 1 || got.Diff.Added+got.Diff.Removed != 0 {
		t.Errorf("diff %+v, want route 198.19.1.0/24 changed only", got.Diff)
	}
	if len(got.Explain) != 2 {
		t.Fatalf("%d explained frames, want 2:\n%s", len(got.Explain), out)
	}
	e := got.Explain[0]
	for _, x := range []struct {
		name string
		rec  explainJSON
		sid  []byte
	}{{"now", e.Now, segs[0].AsSlice()}, {"after", e.After, next[0].AsSlice()}} {
		if x.rec.Class != "tenant" || x.rec.Tenant != "t" || x.rec.Route != "198.19.1.0/24" || x.rec.Action != "redirect" {
			t.Errorf("%s: %+v, want tenant t, route 198.19.1.0/24, redirect", x.name, x.rec)
		}
		// Outer IPv6 destination: Ethernet 14 + IPv6 offset 24.
		if len(x.rec.Tx) < 54 || !bytes.Equal(x.rec.Tx[38:54], x.sid) {
			t.Errorf("%s: frame out %x, want the outer destination %x", x.name, x.rec.Tx, x.sid)
		}
	}
	if o := got.Explain[1]; o.Now.Class != "not-ours" || o.After.Class != "not-ours" || o.After.Action != "pass" {
		t.Errorf("a VLAN without a tenant: now %+v after %+v, want not-ours, pass", o.Now, o.After)
	}
	text := <-textc
	if after := cli("config", "export"); !bytes.Equal(after, before) {
		t.Errorf("apply --explain changed the running state:\n%s\nbefore:\n%s", after, before)
	}
	// The text form says the same in words.
	if text.err != nil {
		t.Fatalf("seg6x apply --explain (text): %v\n%s", text.err, text.out)
	}
	for _, want := range []string{"applied nothing (--explain)", "~ route 198.19.1.0/24 tenant t", "now:          tenant -> redirect (route 198.19.1.0/24",
		"after apply:\n", "srh segments left 0 [" + next[0].String() + "]"} {
		if !strings.Contains(text.out, want) {
			t.Errorf("text output lacks %q:\n%s", want, text.out)
		}
	}
}
