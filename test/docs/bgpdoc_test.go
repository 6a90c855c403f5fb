package docstest

// bgpdoc_test.go: docs/bgp.md's minimal configuration, run as written: two namespaces joined by a
// veth (fab) with an access interface each (acc), each host's `ip` lines, each PE's YAML as the
// daemon's --config; each PE must learn the other's prefix with its service SID and forward to it.

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seg6x/seg6x/tools/testsupport"
)

// minimalBGP is the code blocks of the section "A minimal configuration" of docs/bgp.md, in order.
func minimalBGP(t *testing.T) []string {
	return sectionBlocks(t, "../../docs/bgp.md", "A minimal configuration", 4, "pe1's ip lines and YAML, then pe2's")
}

func TestBGPDocMinimalConfig(t *testing.T) {
	blocks := minimalBGP(t)
	bin := testsupport.BuildSeg6x(t)
	id := os.Getpid() % 1000
	ns := []string{fmt.Sprintf("s6bd%d-1", id), fmt.Sprintf("s6bd%d-2", id)}
	testsupport.DelNetns(ns...)
	if err := testsupport.AddNetns(ns...); err != nil {
		t.Fatal(err)
	}
	var daemons []*testsupport.Daemon
	var logs [2]testsupport.LogBuffer
	t.Cleanup(func() {
		for _, d := range daemons {
			d.Signal(os.Kill)
		}
		for i := range ns {
			testsupport.RemoveInstance(filepath.Join("/run/seg6x-test", ns[i]))
		}
		testsupport.DelNetns(ns...)
	})
	if err := testsupport.IPLines(ns[0], "link add fab type veth peer name fab netns "+ns[1],
		"link add acc type veth peer name acc-h", "link set fab up", "link set acc up", "link set acc-h up", "link set lo up"); err != nil {
		t.Fatal(err)
	}
	if err := testsupport.IPLines(ns[1], "link add acc type veth peer name acc-h", "link set fab up", "link set acc up",
		"link set acc-h up", "link set lo up"); err != nil {
		t.Fatal(err)
	}
	for i, n := range ns {
		var lines []string
		for _, l := range strings.Split(strings.TrimSpace(blocks[2*i]), "\n") {
			ip, ok := strings.CutPrefix(strings.TrimSpace(l), "ip ")
			if !ok {
				t.Fatalf("pe%d's host: %q is not an ip command", i+1, l)
			}
			if strings.Contains(ip, "addr add") {
				ip += " nodad" // no duplicate address detection: the link is up at once
			}
			lines = append(lines, ip)
		}
		if err := testsupport.IPLines(n, lines...); err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join("/run/seg6x-test", n)
		if err := testsupport.MountInstance(dir); err != nil {
			t.Fatal(err)
		}
		cfg := filepath.Join(dir, "seg6x.yaml")
		if err := os.WriteFile(cfg, []byte(blocks[2*i+1]), 0o600); err != nil {
			t.Fatal(err)
		}
		d, err := testsupport.StartDaemon(bin, n, dir, &logs[i], "--config", cfg)
		if err != nil {
			t.Fatalf("pe%d: %v\n%s", i+1, err, logs[i].String())
		}
		daemons = append(daemons, d)
	}
	want := []struct{ prefix, sid string }{{"198.18.2.0/24", "fc00:2:0:1::"}, {"198.18.1.0/24", "fc00:1:0:1::"}}
	for i, n := range ns {
		dir := filepath.Join("/run/seg6x-test", n)
		var got string
		for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
			out, err := exec.Command("ip", "netns", "exec", n, bin, "--dir", dir, "show", "routes", "--origin", "bgp", "--json").Output()
			var rs []struct {
				Tenant, Prefix string
				Segs           []string
				Egress         string
			}
			if err != nil || json.Unmarshal(out, &rs) != nil {
				continue
			}
			got = string(out)
			if len(rs) == 1 && rs[0].Tenant == "blue" && rs[0].Prefix == want[i].prefix && len(rs[0].Segs) == 1 && rs[0].Segs[0] == want[i].sid &&
				rs[0].Egress == "fab" {
				break
			}
			got += " (not yet)"
		}
		if strings.HasSuffix(got, " (not yet)") || got == "" {
			t.Errorf("pe%d never held blue %s via %s out of fab: %s\n%s", i+1, want[i].prefix, want[i].sid, got, logs[i].String())
		}
	}
}
