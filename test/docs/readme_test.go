// Package docstest runs the documentation's command examples as written, in a network namespace of
// its own, against a scratch instance: a documented command that fails is a test failure.
package docstest

// readme_test.go: the five-line example of README.md and the command tour of docs/cli.md. Each line
// is one command (comments dropped); an optional part [x] is run without and with it, alternatives
// [a|b] each, and "A | B" are two commands. The daemon line is left out (commands run without one,
// as docs/cli.md says they may); "--dir" is added to every command; the names the examples use
// (eth0, eth1, vm1) are veth devices in the namespace, with the fabric routes a node has, and the
// shipped plugins (/usr/lib/seg6x/plugins/) are this tree's, built. After each block, the state it
// built is compared with what the block says it builds.

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/seg6x/seg6x/internal/dataplane"
	"github.com/seg6x/seg6x/tools/testsupport"
)

// firstBlock is the first code block after the heading line `heading` in the file at path
// (relative to the repository's root).
func firstBlock(t *testing.T, path, heading string) []string {
	b, err := os.ReadFile("../../" + path)
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "\n"+heading+"\n")
	if !ok {
		t.Fatalf("%s has no %q section", path, heading)
	}
	_, rest, _ = strings.Cut(rest, "```\n")
	block, _, ok := strings.Cut(rest, "```\n")
	if !ok {
		t.Fatalf("%s: the section %q has no code block", path, heading)
	}
	return strings.Split(strings.TrimSpace(block), "\n")
}

// docState is what `seg6x show --json` reports, counted.
type docState struct {
	Tenants []struct{ Name string }
	Routes  []struct{ Prefix string }
	SIDs    []struct{ SID string }
	Plugins []struct{ Name string }
}

var optional = regexp.MustCompile(`\[([^\[\]]*)\]`)

// expand turns one documented line into the commands it stands for.
func expand(line string) []string {
	if i := strings.Index(line, "#"); i >= 0 {
		line = line[:i]
	}
	line = strings.Join(strings.Fields(line), " ")
	if line == "" {
		return nil
	}
	if a, b, ok := strings.Cut(line, " | "); ok {
		return append(expand(a), expand(b)...)
	}
	m := optional.FindStringSubmatchIndex(line)
	if m == nil {
		return []string{line}
	}
	var out []string
	for _, alt := range append([]string{""}, strings.Split(line[m[2]:m[3]], "|")...) {
		out = append(out, expand(line[:m[0]]+alt+line[m[1]:])...)
	}
	return out
}

func TestExpand(t *testing.T) {
	got := expand("seg6x show [tenants|routes] [--json]   # a comment")
	want := []string{"seg6x show", "seg6x show --json", "seg6x show tenants", "seg6x show tenants --json", "seg6x show routes", "seg6x show routes --json"}
	if strings.Join(got, ";") != strings.Join(want, ";") {
		t.Errorf("%q", got)
	}
	if got := expand("seg6x detach eth1 | seg6x detach --all [--purge]"); len(got) != 3 || got[2] != "seg6x detach --all --purge" {
		t.Errorf("%q", got)
	}
}

// newDocNode makes the namespace and scratch instance the examples run in, and returns a function
// that runs one documented command there.
func newDocNode(t *testing.T, tag string) func(cmd string) (string, error) {
	bin := testsupport.BuildSeg6x(t)
	ns := fmt.Sprintf("s6%s%d", tag, os.Getpid()%1000)
	testsupport.DelNetns(ns)
	if err := testsupport.AddNetns(ns); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join("/run/seg6x-test", ns)
	t.Cleanup(func() {
		_ = dataplane.Purge(dir)
		testsupport.RemoveInstance(dir)
		testsupport.DelNetns(ns)
	})
	if err := testsupport.IPLines(ns,
		"link add eth0 type veth peer name fab0", "link add eth1 type veth peer name acc1", "link add vm1 type veth peer name vm1p",
		"link set lo up", "link set eth0 up", "link set fab0 up", "link set eth1 up", "link set acc1 up", "link set vm1 up", "link set vm1p up",
		"-6 addr add fc00:1::1/64 dev eth0 nodad", "-6 neigh add fc00:1::2 lladdr 02:00:00:00:00:02 dev eth0 nud permanent",
		"-6 route add fc00::/16 via fc00:1::2 dev eth0", "-6 route add fcbb::/32 via fc00:1::2 dev eth0",
		"addr add 198.18.9.1/24 dev eth1",
	); err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	plugins := filepath.Join(work, "plugins")
	if err := os.MkdirAll(plugins, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"firewall", "dump", "ttlgate"} {
		if err := os.WriteFile(filepath.Join(plugins, p+".o"), testsupport.BuildPlugin(t, "../../plugins/"+p+".c"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return func(cmd string) (string, error) {
		args := strings.Fields(strings.ReplaceAll(cmd, "/usr/lib/seg6x/plugins/", plugins+"/"))
		c := exec.Command("nsenter", append([]string{"--net=/run/netns/" + ns, bin, "--dir", dir}, args[1:]...)...)
		c.Dir = work
		out, err := c.CombinedOutput()
		return string(out), err
	}
}

// state reads the instance's state through the CLI.
func state(t *testing.T, run func(string) (string, error)) docState {
	var st docState
	out, err := run("seg6x show --json")
	if err != nil || json.Unmarshal([]byte(out), &st) != nil {
		t.Fatalf("seg6x show --json: %v\n%s", err, out)
	}
	return st
}

// runBlock runs every command a documented block stands for and returns how many ran.
func runBlock(t *testing.T, doc string, lines []string, run func(string) (string, error)) int {
	ran := 0
	for _, line := range lines {
		for _, cmd := range expand(line) {
			if !strings.HasPrefix(cmd, "seg6x ") {
				t.Fatalf("%s: %q: not a seg6x command", doc, cmd)
			}
			if strings.HasPrefix(cmd, "seg6x daemon") {
				continue
			}
			if strings.HasPrefix(cmd, "seg6x detach --all") {
				// Before removing everything: the state the examples built.
				if st := state(t, run); len(st.Tenants) != 1 || len(st.Routes) != 2 || len(st.SIDs) != 4 || len(st.Plugins) != 1 {
					t.Errorf("%s: the state the examples built: %+v", doc, st)
				}
			}
			if strings.HasPrefix(cmd, "seg6x apply -f seg6x.yaml") {
				if out, err := run("seg6x config export -o seg6x.yaml"); err != nil { // the operator's file
					t.Fatalf("config export: %v\n%s", err, out)
				}
			}
			out, err := run(cmd)
			if err != nil {
				t.Errorf("%s: %s\n%v\n%s", doc, cmd, err, out)
			}
			ran++
		}
	}
	return ran
}

// The README's five-line example: two ports, a tenant, a route and a SID, each as written, and
// nothing else.
func TestReadmeExampleRunsAsWritten(t *testing.T) {
	run := newDocNode(t, "rd")
	lines := firstBlock(t, "README.md", "## A five-line example")
	if ran := runBlock(t, "README.md", lines, run); ran != 5 {
		t.Errorf("README.md: %d commands ran, want the 5 the example shows", ran)
	}
	st := state(t, run)
	if len(st.Tenants) != 1 || st.Tenants[0].Name != "blue" || len(st.Routes) != 1 || len(st.SIDs) != 1 {
		t.Errorf("README.md: the example should leave tenant blue, one route and one SID: %+v", st)
	}
	if out, err := run("seg6x show interfaces"); err != nil || !strings.Contains(out, "eth0") || !strings.Contains(out, "eth1") {
		t.Errorf("README.md: eth0 and eth1 should be attached: %v\n%s", err, out)
	}
}

// docs/cli.md's tour of every command, as written.
func TestCLIDocExamplesRunAsWritten(t *testing.T) {
	run := newDocNode(t, "cd")
	if ran := runBlock(t, "docs/cli.md", firstBlock(t, "docs/cli.md", "## Every command, by example"), run); ran < 20 {
		t.Errorf("docs/cli.md: only %d commands ran", ran)
	}
}
