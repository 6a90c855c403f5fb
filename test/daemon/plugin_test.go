package daemontest

// plugin_test.go: a plugin replaced a hundred times under a counted stream through its SID: every
// frame arrives, none meets an empty slot or a plugin that aborts; then the daemon restarted: the
// plugin comes back from the saved state and the stream still flows.

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	pb "github.com/seg6x/seg6x/api/seg6xv1"
	"github.com/seg6x/seg6x/tools/benchrig"
	"github.com/seg6x/seg6x/tools/testsupport"
)

// twoBuilds are two objects of the tutorial plugin that differ (their line information: the second
// is built from the source shifted down a line), so that loading one after the other replaces it.
func twoBuilds(t *testing.T) [2][]byte {
	src, err := os.ReadFile("../../plugins/ttlgate.c")
	if err != nil {
		t.Fatal(err)
	}
	shifted := filepath.Join(t.TempDir(), "ttlgate.c")
	if err := os.WriteFile(shifted, append([]byte("\n"), src...), 0o600); err != nil {
		t.Fatal(err)
	}
	a, b := testsupport.BuildPlugin(t, "../../plugins/ttlgate.c"), testsupport.BuildPlugin(t, shifted)
	if string(a) == string(b) {
		t.Fatal("the two builds are the same object")
	}
	return [2][]byte{a, b}
}

func TestPluginReplacedUnderTraffic(t *testing.T) {
	r, d := setup(t, benchrig.SIDs(0, 1))
	objs := twoBuilds(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "ttlgate.o")
	if err := os.WriteFile(file, objs[0], 0o600); err != nil {
		t.Fatal(err)
	}
	sid := netip.MustParseAddr("fc00:d::d")
	cfg := filepath.Join(dir, "plugin.yaml")
	// min_ttl 1: before the last segment ttlgate acts as End, which sends the frames to the sink.
	if err := os.WriteFile(cfg, []byte(benchrig.PluginEndConfig("gate", file, sid, map[string]string{"min_ttl": "1"})), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := d.cli("apply", "-f", cfg, "--prune"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	c := d.d.Client
	ctx := context.Background()
	frames, pat := benchrig.EndFrames(sid, []int{0, 1, 2})
	stream := func(d time.Duration, during func() error) (benchrig.StreamResult, error) {
		return r.StreamFrames(frames, []benchrig.Pattern{pat}, 40000, d, during)
	}
	replaced := 0
	res, err := streamRunsWhile(stream, 2500*time.Millisecond, func() error {
		if err := flowing(c, 2000); err != nil {
			return err
		}
		for i, end := 0, time.Now().Add(20*time.Second); replaced < 100 && time.Now().Before(end); i++ {
			op := &pb.Op{Kind: pb.Op_REPLACE, Object: &pb.Op_Plugin{Plugin: &pb.Plugin{Name: "gate", File: file, Object: objs[(i+1)%2]}}}
			if _, err := c.Commit(ctx, &pb.CommitRequest{Ops: []*pb.Op{op}}); err != nil {
				return fmt.Errorf("replacement %d: %w", i, err)
			}
			replaced++
		}
		return flowing(c, 2000) // the last replacement under traffic too
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, d.logs)
	}
	t.Logf("%d replacements; sent %d, arrived %d, wrong %d", replaced, res.Sent, res.Good, res.Bad)
	if replaced < 100 {
		t.Fatalf("only %d replacements during the stream", replaced)
	}
	if res.Sent == 0 || res.Good != res.Sent || res.Bad != 0 {
		t.Fatalf("sent %d, arrived %d, wrong %d (last wrong %x)\n%s", res.Sent, res.Good, res.Bad, res.LastBad, d.logs)
	}
	st, err := c.Stats(ctx, &pb.StatsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, reason := range []string{"DROP_PLUGIN_ABORT", "DROP_PLUGIN_VERDICT", "DROP_PLUGIN_MALFORMED", "DROP_PLUGIN"} {
		if n := st.Reasons[reason].GetPackets(); n != 0 {
			t.Errorf("%s counted %d packets", reason, n)
		}
	}
	var ended uint64
	for _, p := range st.Plugins {
		if p.Name == "gate" {
			ended = p.Outcomes["end"].GetPackets()
			if len(p.Outcomes) != 1 {
				t.Errorf("outcomes %v: every packet should have gone on as End", p.Outcomes)
			}
		}
	}
	// Each replacement's counters are its slot's: the last one has counted part of the stream.
	if ended == 0 {
		t.Errorf("the plugin in its last slot counted no End: %v", st.Plugins)
	}

	// Restarted (killed): the plugin is loaded again from the saved state, and frames still flow.
	d.kill(syscall.SIGKILL)
	d.start("--config", cfg)
	d.logs.WaitFor("ready (pid")
	out, err := d.cli("plugin", "show", "gate")
	if err != nil || !strings.Contains(out, "fc00:d::d") {
		t.Fatalf("after a restart: %v\n%s", err, out)
	}
	res, err = r.StreamFrames(frames, []benchrig.Pattern{pat}, 20000, 300*time.Millisecond, func() error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if res.Sent == 0 || res.Good != res.Sent || res.Bad != 0 {
		t.Fatalf("after a restart: sent %d, arrived %d, wrong %d", res.Sent, res.Good, res.Bad)
	}
}
