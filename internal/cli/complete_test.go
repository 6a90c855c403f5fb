package cli

// complete_test.go: shell completion through cobra's __complete, as the bash, zsh and fish scripts
// ask for it: behaviors after "action", the keywords each command takes next, names from a daemon
// (a stand-in serving Status and Show on a socket), and, with no daemon, nothing, exit 0 and the
// instance directory left uncreated.

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	pb "github.com/seg6x/seg6x/api/seg6xv1"
	"github.com/seg6x/seg6x/internal/api"
	"github.com/seg6x/seg6x/internal/model"
	"google.golang.org/grpc"
)

// completions runs `seg6x __complete flags... words...` and returns the candidates (without their
// descriptions).
func completions(t *testing.T, flags []string, words ...string) []string {
	t.Helper()
	root := NewRoot()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(io.Discard)
	root.SetArgs(append(append([]string{"__complete"}, flags...), words...))
	if err := root.Execute(); err != nil {
		t.Fatalf("__complete %q: %v", words, err)
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if strings.HasPrefix(line, ":") { // the directive ends the list
			break
		}
		name, _, _ := strings.Cut(line, "\t")
		got = append(got, name)
	}
	return got
}

func TestCompleteKeywordsAndBehaviors(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "instance")
	noDaemon := []string{"--dir", dir}
	routeAll := slices.Clone(routeKeys)
	cases := []struct {
		words []string
		want  []string
	}{
		{[]string{"sid", "add", "fc00::1", "action", ""}, model.Actions},
		{[]string{"sid", "replace", "fc00::1", "action", "End.DT"}, []string{"End.DT4", "End.DT6", "End.DT46"}},
		{[]string{"sid", "add", "fc00::1", ""}, []string{"action"}},
		{[]string{"sid", "add", "fc00::1", "action", "End.DT4", ""}, []string{"table", "tenant", "vlan"}},
		{[]string{"sid", "add", "fcbb::/48", "action", "End.X", ""}, []string{"flavors", "lblen", "nflen", "nh6"}},
		{[]string{"sid", "add", "fc00::1", "action", "End", "flavors", "psp,u"}, []string{"psp,usp", "psp,usd"}},
		{[]string{"tenant", "add", "blue", ""}, []string{"dev", "gateway", "mss-clamp", "table", "vlan"}},
		{[]string{"tenant", "add", "blue", "table", "100", "dev", "eth1", ""}, []string{"dev", "gateway", "mss-clamp", "vlan"}},
		{[]string{"tenant", "add", "blue", "mss-clamp", ""}, []string{"auto", "off"}},
		{[]string{"route", "add", "198.18.2.0/24", ""}, routeAll},
		{[]string{"route", "add", "198.18.2.0/24", "tenant", "blue", "mode", ""}, []string{"encap", "encap.red"}},
		{[]string{"route", "add", "198.18.2.0/24", "tenant", "blue", "encap", ""}, []string{"seg6"}},
		{[]string{"route", "add", "198.18.2.0/24", "tenant", "blue", "usids", "fcbb::/32", "100", "s"}, []string{"segs", "src"}},
		{[]string{"route", "add", "198.18.2.0/24", "usids", "fcbb::/32", "100", "src", "fc00::1", "u"}, nil},
		{[]string{"route", "del", "198.18.2.0/24", ""}, []string{"tenant"}},
		{[]string{"policy", "add", "east", ""}, []string{"mode", "src", "hoplimit", "list"}},
		{[]string{"policy", "add", "east", "mode", ""}, []string{"encap", "encap.red"}},
		{[]string{"policy", "add", "east", "list", "fc00::1", ""}, []string{"list", "weight", "down"}},
		{[]string{"policy", "add", "east", "list", "fc00::1", "down", ""}, []string{"list", "weight"}},
		{[]string{"domain", "set", ""}, []string{"locators", "sources"}},
		{[]string{"attach", "eth0", "--role", ""}, []string{"fabric", "access", "auto"}},
		{[]string{"attach", "--mode", ""}, []string{"xdp", "generic", "tc"}},
		// Names from the daemon: none runs, so nothing (and no error).
		{[]string{"tenant", "del", ""}, nil},
		{[]string{"route", "add", "198.18.2.0/24", "tenant", ""}, nil},
		{[]string{"sid", "del", ""}, nil},
		{[]string{"policy", "down", ""}, nil},
	}
	for _, c := range cases {
		got := completions(t, noDaemon, c.words...)
		if !slices.Equal(got, c.want) {
			t.Errorf("%q: got %q, want %q", c.words, got, c.want)
		}
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("completion touched the instance directory %s: %v", dir, err)
	}
	// Interfaces: the host's.
	ifs, err := net.Interfaces()
	if err != nil || len(ifs) == 0 {
		t.Skip("no network interfaces to complete")
	}
	if got := completions(t, noDaemon, "tenant", "add", "blue", "dev", ""); !slices.Contains(got, ifs[0].Name) {
		t.Errorf("tenant add ... dev: %q lacks %s", got, ifs[0].Name)
	}
}

// The policy keywords offered are the ones parsePolicy takes, where they are offered.
func TestCompletePolicyKeywordsParse(t *testing.T) {
	words := []string{"mode", "encap", "src", "fc00::1", "hoplimit", "9", "list", "fc00::2", "weight", "2", "down", "list", "fc00::3"}
	if _, err := parsePolicy("east", words); err != nil {
		t.Fatal(err)
	}
}

// fakeDaemon answers Status and Show with a fixed state, as a daemon's socket does.
type fakeDaemon struct {
	pb.UnimplementedControlServer
	st model.State
}

func (f *fakeDaemon) Status(context.Context, *pb.StatusRequest) (*pb.StatusReply, error) {
	return &pb.StatusReply{Daemon: true}, nil
}

func (f *fakeDaemon) Show(_ *pb.ShowRequest, stream pb.Control_ShowServer) error {
	return stream.Send(&pb.StateChunk{State: api.StateToPB(&f.st), Generation: 1})
}

func TestCompleteNamesFromDaemon(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "seg6x.sock")
	lis, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	seg := netip.MustParseAddr("fc00:2::64")
	gs := grpc.NewServer()
	pb.RegisterControlServer(gs, &fakeDaemon{st: model.State{
		Tenants: []model.Tenant{{Name: "blue", Table: 100}, {Name: "red", Table: 200}},
		Routes: []model.Route{{Tenant: "blue", Prefix: netip.MustParsePrefix("198.18.2.0/24"), Segs: []netip.Addr{seg}},
			{Tenant: "red", Prefix: netip.MustParsePrefix("198.18.2.0/24"), Segs: []netip.Addr{seg}}},
		Policies: []model.Policy{{Name: "east", Lists: []model.SegList{{Segs: []netip.Addr{seg}}, {Segs: []netip.Addr{seg}, Down: true}}}},
		SIDs:     []model.SID{{SID: netip.MustParseAddr("fc00:1::64"), Action: "End.DT4", Tenant: "blue"}},
	}})
	go gs.Serve(lis)
	defer gs.Stop()
	flags := []string{"--socket", sock}
	cases := []struct {
		words []string
		want  []string
	}{
		{[]string{"tenant", "del", ""}, []string{"blue", "red"}},
		{[]string{"tenant", "replace", "r"}, []string{"red"}},
		{[]string{"route", "add", "198.18.3.0/24", "tenant", ""}, []string{"blue", "red"}},
		{[]string{"route", "del", ""}, []string{"198.18.2.0/24"}},
		{[]string{"route", "del", "198.18.2.0/24", "tenant", ""}, []string{"blue", "red"}},
		{[]string{"sid", "add", "fc00:1::65", "action", "End.DT6", "tenant", ""}, []string{"blue", "red"}},
		{[]string{"sid", "del", ""}, []string{"fc00:1::64"}},
		{[]string{"policy", "del", ""}, []string{"east"}},
		{[]string{"policy", "up", "east", ""}, []string{"0", "1"}},
		{[]string{"route", "add", "198.18.3.0/24", "tenant", "blue", "policy", ""}, []string{"east"}},
	}
	for _, c := range cases {
		if got := completions(t, flags, c.words...); !slices.Equal(got, c.want) {
			t.Errorf("%q: got %q, want %q", c.words, got, c.want)
		}
	}
}
