package docstest

// plugindoc_test.go: docs/plugins.md's tutorial, run as written: its C file is plugins/ttlgate.c, its
// build line builds it (against this tree's SDK header, standing in for the installed one), and its
// seg6x commands (run by bash as written, the binary and an instance directory of the test's own in
// front), in a namespace of their own with eth0 a veth, load it, run it on a SID, show it and explain
// a frame to it, each saying what the tutorial says; then the refusal it quotes.

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seg6x/seg6x/tools/testsupport"
)

// tutorialBlocks are the code blocks of docs/plugins.md's tutorial section, in order.
func tutorialBlocks(t *testing.T) []string {
	return sectionBlocks(t, "../../docs/plugins.md", "Tutorial", 3, "the C file, the build line, the seg6x commands")
}

func TestPluginTutorialAsWritten(t *testing.T) {
	blocks := tutorialBlocks(t)
	src, err := os.ReadFile("../../plugins/ttlgate.c")
	if err != nil {
		t.Fatal(err)
	}
	if blocks[0] != string(src) {
		t.Fatalf("the tutorial's C file is not plugins/ttlgate.c")
	}
	bin := testsupport.BuildSeg6x(t)
	work := t.TempDir()
	if err := os.WriteFile(filepath.Join(work, "ttlgate.c"), src, 0o600); err != nil {
		t.Fatal(err)
	}
	sdk, err := filepath.Abs("../../bpf/sdk")
	if err != nil {
		t.Fatal(err)
	}
	build := exec.Command("bash", "-euc", blocks[1])
	build.Dir, build.Env = work, append(os.Environ(), "C_INCLUDE_PATH="+sdk)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", blocks[1], err, out)
	}

	ns := "s6plugdoc"
	dir := filepath.Join("/run/seg6x-test", ns)
	testsupport.DelNetns(ns)
	if err := testsupport.AddNetns(ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		exec.Command("ip", "netns", "exec", ns, bin, "--dir", dir, "detach", "--all", "--purge").Run()
		testsupport.RemoveInstance(dir)
		testsupport.DelNetns(ns)
	})
	if err := testsupport.IPLines(ns, "link add eth0 type veth peer name eth1", "link set eth0 up", "link set eth1 up",
		"link set lo up"); err != nil {
		t.Fatal(err)
	}
	if err := testsupport.MountInstance(dir); err != nil {
		t.Fatal(err)
	}
	run := func(line string) (string, error) {
		args, ok := strings.CutPrefix(strings.TrimSpace(line), "seg6x ")
		if !ok {
			t.Fatalf("%q is not a seg6x command", line)
		}
		cmd := exec.Command("ip", "netns", "exec", ns, "bash", "-euc", bin+" --dir "+dir+" "+args)
		cmd.Dir = work
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	want := map[string][]string{ // what the tutorial says each command shows
		"plugin show ttlgate": {"ttlgate", "fc00:1::d", "min_ttl", "u8 0..255", "inner TTL / hop limit below which packets are dropped"},
		"explain":             {"plugin: drop", "DROP_PLUGIN"},
	}
	for _, line := range strings.Split(strings.TrimSpace(blocks[2]), "\n") {
		out, err := run(line)
		if err != nil {
			t.Fatalf("%s: %v\n%s", line, err, out)
		}
		for k, ws := range want {
			if strings.Contains(line, k) {
				for _, w := range ws {
					if !strings.Contains(out, w) {
						t.Errorf("%s: no %q in\n%s", line, w, out)
					}
				}
			}
		}
	}
	// The refusal the tutorial quotes.
	out, err := run("seg6x sid add fc00:1::e action plugin ttlgate min_ttl=300")
	if err == nil || !strings.Contains(out, "config: ttlgate: min_ttl=300: want an integer 0..255") {
		t.Errorf("a setting out of range: %v\n%s", err, out)
	}
}
