// Package interoptest runs seg6x's BGP speaker against a peer that shares no code with GoBGP: ExaBGP 5
// (from PyPI, installed by scripts/deps.sh). SRv6 L3VPN routes go both ways, with and without SID
// transposition; malformed Prefix-SID attributes and SIDs no PE may use are refused without harm to the
// session or other routes; and a peer without the extended next hop capability is sent no VPNv4 route
// with an IPv6 next hop, and its session does not flap.
package interoptest

// rig.go: the namespaces (seg6x's, and one per ExaBGP peer joined to it by a veth), the seg6x daemon
// with its config, and what the tests read from the daemon through its CLI (--json).

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"text/template"
	"time"

	"google.golang.org/protobuf/encoding/protojson"

	pb "github.com/seg6x/seg6x/api/seg6xv1"
	"github.com/seg6x/seg6x/tools/testsupport"
)

// The lab's numbers. seg6x: AS 65000, locator fc00:11::/48, next hop fc00:ee:ff::1 (on its lo); peer
// "enh" (ExaBGP with the extended next hop capability) at fc00:ee:1::2 and peer "plain" (without) at
// fc00:ee:2::2, each on a /64 with seg6x at ::1.
const (
	asn           = 65000
	seg6xNextHop  = "fc00:ee:ff::1"
	seg6xLocator  = "fc00:11::/48"
	seg6xENH      = "fc00:ee:1::1"
	exaENHAddr    = "fc00:ee:1::2"
	seg6xPlain    = "fc00:ee:2::1"
	exaPlainAddr  = "fc00:ee:2::2"
	exaRD         = "198.18.255.2:1" // the enh peer's route distinguisher
	rtA, rtB      = "65000:100", "65000:200"
	seg6xRouterID = "198.18.255.1"
)

// seg6xYAML is the daemon's config: tenant A (End.DT46) and B (End.DT4) with a vpn: section each,
// and both ExaBGP peers as neighbors.
var seg6xYAML = template.Must(template.New("seg6x").Parse(`tenants:
  - name: A
    table: 100
    vpn: {rd: "198.18.255.1:100", import_rt: ["65000:100"], export_rt: ["65000:100"], advertise: ["198.18.1.0/24", "2001:db8:1::/64"]}
  - name: B
    table: 200
    vpn: {rd: "198.18.255.1:200", import_rt: ["65000:200"], export_rt: ["65000:200"], advertise: ["198.18.11.0/24"], behavior: End.DT4}
bgp:
  asn: 65000
  router_id: 198.18.255.1
  locator: "fc00:11::/48"
  next_hop: "fc00:ee:ff::1"
  transposition: {{.}}
  neighbors:
    - {address: "fc00:ee:1::2", asn: 65000, local_address: "fc00:ee:1::1", description: exabgp}
    - {address: "fc00:ee:2::2", asn: 65000, local_address: "fc00:ee:2::1", description: exabgp without extended next hop}
`))

type rig struct {
	bin, dir, cfg string
	ns            string // seg6x's namespace
	d             *testsupport.Daemon
	logs          *testsupport.LogBuffer
	enh, plain    *exaPeer
}

// setup builds the namespaces, starts seg6x and both ExaBGP peers; everything goes when t ends. It
// skips t without root or without ExaBGP 5.
func setup(t *testing.T) *rig {
	testsupport.NeedRoot(t, "namespaces, XDP")
	v, err := exaBGPVersion()
	if err != nil {
		t.Skipf("ExaBGP is not installed in %s (scripts/deps.sh installs it): %v", exaBGPVenv, err)
	}
	if !strings.HasPrefix(v, "5.") {
		t.Fatalf("ExaBGP in %s is version %s: want 5", exaBGPVenv, v)
	}
	r := &rig{bin: testsupport.BuildSeg6x(t), logs: &testsupport.LogBuffer{}}
	tmp := t.TempDir() // before the cleanup below, which must run first
	id := fmt.Sprintf("s6ix%d", os.Getpid()%100000)
	r.ns, r.dir, r.cfg = id+"s", filepath.Join("/run/seg6x-test", id), filepath.Join(tmp, "seg6x.yaml")
	nsENH, nsPlain := id+"e", id+"n"
	t.Cleanup(func() {
		r.enh.stop()
		r.plain.stop()
		if r.d != nil {
			kill := time.AfterFunc(10*time.Second, func() { _ = r.d.Cmd.Process.Kill() })
			r.d.Signal(syscall.SIGTERM)
			kill.Stop()
		}
		if t.Failed() {
			t.Logf("seg6x daemon log (tail):\n%s", r.logs.Tail(30))
		}
		testsupport.DelNetns(r.ns, nsENH, nsPlain)
		testsupport.RemoveInstance(r.dir)
	})
	testsupport.DelNetns(r.ns, nsENH, nsPlain) // left by a killed run of the same pid
	if err := testsupport.AddNetns(r.ns, nsENH, nsPlain); err != nil {
		t.Fatal(err)
	}
	if err := testsupport.IPLines(r.ns, "link set lo up", "-6 addr add "+seg6xNextHop+"/128 dev lo",
		"link add enh type veth peer name x0 netns "+nsENH, "link add plain type veth peer name x0 netns "+nsPlain,
		"link set enh up", "link set plain up", "-6 addr add "+seg6xENH+"/64 dev enh nodad",
		"-6 addr add "+seg6xPlain+"/64 dev plain nodad"); err != nil {
		t.Fatal(err)
	}
	for ns, addr := range map[string]string{nsENH: exaENHAddr, nsPlain: exaPlainAddr} {
		if err := testsupport.IPLines(ns, "link set lo up", "link set x0 up", "-6 addr add "+addr+"/64 dev x0 nodad"); err != nil {
			t.Fatal(err)
		}
	}
	if err := testsupport.MountInstance(r.dir); err != nil {
		t.Fatal(err)
	}
	r.writeConfig(t, false)
	if r.d, err = testsupport.StartDaemon(r.bin, r.ns, r.dir, r.logs, "--config", r.cfg); err != nil {
		t.Fatalf("%v\n%s", err, r.logs.Tail(30))
	}
	if r.enh, err = startExaBGP(exaConfig{Name: "ExaBGP (extended next hop)", NS: nsENH, Dir: filepath.Join(tmp, "enh"),
		Local: exaENHAddr, Peer: seg6xENH, RouterID: "198.18.255.2", ASN: asn, ExtendedNextHop: true}); err != nil {
		t.Fatal(err)
	}
	if r.plain, err = startExaBGP(exaConfig{Name: "ExaBGP (no extended next hop)", NS: nsPlain, Dir: filepath.Join(tmp, "plain"),
		Local: exaPlainAddr, Peer: seg6xPlain, RouterID: "198.18.255.3", ASN: asn}); err != nil {
		t.Fatal(err)
	}
	return r
}

// writeConfig writes the daemon's config file with the given transposition setting.
func (r *rig) writeConfig(t *testing.T, transposition bool) {
	t.Helper()
	var b bytes.Buffer
	_ = seg6xYAML.Execute(&b, transposition)
	if err := os.WriteFile(r.cfg, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
}

// apply writes the config with the given transposition setting and applies it to the running daemon.
func (r *rig) apply(t *testing.T, transposition bool) {
	t.Helper()
	r.writeConfig(t, transposition)
	if out, err := exec.Command(r.bin, "--dir", r.dir, "apply", "-f", r.cfg).CombinedOutput(); err != nil {
		t.Fatalf("seg6x apply -f: %v\n%s", err, out)
	}
}

// seg6x runs the CLI on the daemon's instance and returns its standard output.
func (r *rig) seg6x(args ...string) ([]byte, error) {
	out, err := exec.Command(r.bin, append([]string{"--dir", r.dir}, args...)...).Output()
	if ee, ok := err.(*exec.ExitError); ok {
		err = fmt.Errorf("seg6x %s: %v: %s", strings.Join(args, " "), err, ee.Stderr)
	}
	return out, err
}

// bgp is `seg6x bgp show routes --json`: sessions, learned and advertised routes.
func (r *rig) bgp() (*pb.BgpReply, error) {
	out, err := r.seg6x("bgp", "show", "routes", "--json")
	if err != nil {
		return nil, err
	}
	rep := &pb.BgpReply{}
	if err := protojson.Unmarshal(out, rep); err != nil {
		return nil, fmt.Errorf("bgp show routes --json: %v: %.300s", err, out)
	}
	return rep, nil
}

// neighbor is the session to addr as the daemon's API reports it (`bgp show neighbors`), nil if absent.
func (r *rig) neighbor(addr string) (*pb.BgpNeighbor, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	rep, err := r.d.Client.Bgp(ctx, &pb.BgpRequest{})
	if err != nil {
		return nil, err
	}
	for _, n := range rep.Neighbors {
		if n.Address == addr {
			return n, nil
		}
	}
	return nil, nil
}

// route is one route of `seg6x show routes --json`.
type route struct {
	Tenant, Prefix, Origin string
	Segs                   []string
}

// routes is `seg6x show routes --json` by "tenant prefix".
func (r *rig) routes() (map[string]route, error) {
	out, err := r.seg6x("show", "routes", "--json")
	if err != nil {
		return nil, err
	}
	var rs []route
	if err := json.Unmarshal(out, &rs); err != nil {
		return nil, fmt.Errorf("show routes --json: %v: %.300s", err, out)
	}
	m := map[string]route{}
	for _, rt := range rs {
		m[rt.Tenant+" "+rt.Prefix] = rt
	}
	return m, nil
}

// serviceSIDs is each vpn tenant's service SID (`seg6x show tenants --json`).
func (r *rig) serviceSIDs() (map[string]string, error) {
	out, err := r.seg6x("show", "tenants", "--json")
	if err != nil {
		return nil, err
	}
	var ts []struct {
		Name string
		VPN  *struct {
			ServiceSID string `json:"service_sid"`
		} `json:"vpn"`
	}
	if err := json.Unmarshal(out, &ts); err != nil {
		return nil, fmt.Errorf("show tenants --json: %v: %.300s", err, out)
	}
	m := map[string]string{}
	for _, tn := range ts {
		if tn.VPN != nil {
			m[tn.Name] = tn.VPN.ServiceSID
		}
	}
	return m, nil
}

// waitFor polls cond every 100 ms until it holds, for at most limit; then t fails with cond's last
// word on what is missing.
func waitFor(t *testing.T, what string, limit time.Duration, cond func() (bool, string)) {
	t.Helper()
	var last string
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		var ok bool
		if ok, last = cond(); ok {
			return
		}
	}
	t.Fatalf("%s: not within %s: %s", what, limit, last)
}
