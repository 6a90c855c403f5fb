package daemontest

// usid_test.go: a route whose segment list is written as uSIDs, given to a running daemon with the
// CLI: frames leave with the containers as the SRH, show gives the notation and the containers,
// config export writes the notation back, and the daemon restarted from that file keeps it.

import (
	"encoding/json"
	"net/netip"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seg6x/seg6x/internal/model"
	"github.com/seg6x/seg6x/tools/benchrig"
)

func TestUSIDRouteFromTheCLI(t *testing.T) {
	r, d := setup(t, benchrig.SIDs(0, 1))
	// The rig routes fc00:e::/48 to the sink: a /48 block, five 16-bit uSIDs per container.
	const notation = "fc00:e::/48 100 200 300 400 500 600"
	containers := []netip.Addr{netip.MustParseAddr("fc00:e:0:100:200:300:400:500"), netip.MustParseAddr("fc00:e:0:600::")}
	run := d.cli
	cli := func(args ...string) string {
		t.Helper()
		out, err := run(args...)
		if err != nil {
			t.Fatalf("seg6x %v: %v\n%s", args, err, out)
		}
		return out
	}
	out := cli(append([]string{"route", "replace", "198.19.1.0/24", "tenant", "t", "encap", "seg6", "usids"},
		append(strings.Fields(notation), "src", benchrig.EncapSrc().String())...)...)
	if !strings.Contains(out, "~ route 198.19.1.0/24 tenant t") {
		t.Fatalf("route replace said:\n%s", out)
	}
	shown := func() model.Route {
		t.Helper()
		var routes []model.Route
		if err := json.Unmarshal([]byte(cli("show", "routes", "--json")), &routes); err != nil || len(routes) != 1 {
			t.Fatalf("show routes --json: %v %+v", err, routes)
		}
		return routes[0]
	}
	if rt := shown(); rt.USIDs == nil || rt.USIDs.String() != notation || !slices.Equal(rt.Segs, containers) {
		t.Fatalf("shown as segs %v usids %v, want %v and %s", rt.Segs, rt.USIDs, containers, notation)
	}
	if text := cli("show", "routes", "-d"); !strings.Contains(text, notation) || !strings.Contains(text, containers[1].String()) {
		t.Errorf("show routes lacks the notation or the containers:\n%s", text)
	}

	// The frames carry the two containers (H.Encaps: an SRH of both, the first one the destination).
	res, err := r.Stream(containers, nil, 20000, 300*time.Millisecond, func() error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if res.Sent == 0 || res.Good != res.Sent || res.Bad != 0 {
		t.Fatalf("sent %d, sink accepted %d, rejected %d (last rejected %x)", res.Sent, res.Good, res.Bad, res.LastBad)
	}

	// Refused with the field named; nothing changed.
	if out, err := run("route", "add", "198.19.2.0/24", "tenant", "t", "usids", "fc00:e::/48", "100", "0"); err == nil ||
		!strings.Contains(out, "route 198.19.2.0/24 tenant t: usids.ids[1]: uSID 0 ends a container") {
		t.Errorf("a zero uSID: %v\n%s", err, out)
	}

	// Exported as the notation; the daemon restarted from the export keeps it and finds nothing to do.
	export := cli("config", "export")
	if !strings.Contains(export, "usids:") || !strings.Contains(export, "block: fc00:e::/48") || strings.Contains(export, "segs:") {
		t.Fatalf("config export:\n%s", export)
	}
	file := d.cfg // the file the daemon starts from
	if err := os.WriteFile(file, []byte(export), 0o600); err != nil {
		t.Fatal(err)
	}
	if out := cli("apply", "-f", file, "--dry-run"); !strings.Contains(out, "no changes") {
		t.Errorf("apply --dry-run of the export:\n%s", out)
	}
	d.kill(syscall.SIGTERM)
	d.start() // --config file
	if rt := shown(); rt.USIDs == nil || rt.USIDs.String() != notation || !slices.Equal(rt.Segs, containers) {
		t.Fatalf("after the restart: segs %v usids %v", rt.Segs, rt.USIDs)
	}
}
