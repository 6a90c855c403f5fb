package packagetest

// package_test.go: the Debian package end to end, on this machine: scripts/package.sh builds it
// around a freshly built binary, dpkg -i installs it; the installed binary says its version, commit,
// build date and map layout; the unit, the default config, the man pages, the completions (asked
// through the installed bash and fish scripts when those shells are here) and the docs are where
// docs/install.md says; the packaged config and a file with one tenant and one route apply in a
// network namespace of the test's own; dpkg --purge leaves none of the files, the conffile
// included. A machine that already knows a seg6x package is left alone: the test skips.

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seg6x/seg6x/internal/dataplane"
	"github.com/seg6x/seg6x/tools/testsupport"
)

const (
	// commit is what the test's build records as its commit.
	commit  = "0123456789abcdef0123456789abcdef01234567"
	runRoot = "/run/seg6x-test-pkg" // the instance directories of the smoke apply
)

// smokeYAML is the smoke apply's desired state (the format of `seg6x apply --help`).
const smokeYAML = `tenants: [{name: blue, table: 1000}]
routes:
  - {tenant: blue, prefix: 198.18.2.0/24, segs: ["fc00:2::64"], src: "fc00:1::1"}
`

func TestDebInstallsAndApplies(t *testing.T) {
	testsupport.NeedRoot(t, "dpkg -i, network namespaces, BPF")
	for _, tool := range []string{"dpkg", "dpkg-deb", "dpkg-query", "ip", "nsenter"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not found", tool)
		}
	}
	if out, err := exec.Command("dpkg-query", "-W", "-f=${Status}", "seg6x").Output(); err == nil {
		t.Skipf("a seg6x package is already known to dpkg (%s): not replacing it", out)
	}

	deb, info := buildDeb(t)
	t.Cleanup(func() { _ = exec.Command("dpkg", "--purge", "seg6x").Run() })
	testsupport.MustRun(t, "dpkg", "-i", deb)

	checkVersion(t, info)
	checkFiles(t)
	checkCompletions(t)
	smokeApply(t)

	files := strings.Fields(testsupport.MustRun(t, "dpkg-query", "-L", "seg6x"))
	testsupport.MustRun(t, "dpkg", "--purge", "seg6x")
	for _, f := range append(files, "/etc/seg6x/seg6x.yaml", "/etc/seg6x") {
		if st, err := os.Lstat(f); err == nil && (!st.IsDir() || strings.Contains(f, "seg6x")) {
			t.Errorf("%s is still there after dpkg --purge", f)
		}
	}
}

// versionInfo is what `seg6x version --json` prints.
type versionInfo struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	BuildDate string `json:"build_date"`
	MapLayout string `json:"map_layout"`
}

// buildDeb builds seg6x as `make build` does (commit and build date recorded) and packages it with
// scripts/package.sh; the .deb lands beside the binary, in the test's temporary directory.
func buildDeb(t *testing.T) (string, versionInfo) {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "seg6x")
	built := time.Now().UTC().Format(time.RFC3339)
	ld := fmt.Sprintf("-X github.com/seg6x/seg6x/internal/buildinfo.Commit=%s -X github.com/seg6x/seg6x/internal/buildinfo.BuildDate=%s", commit, built)
	testsupport.MustRun(t, "go", "build", "-ldflags", ld, "-o", bin, "../../cmd/seg6x")
	var info versionInfo
	if err := json.Unmarshal([]byte(testsupport.MustRun(t, bin, "version", "--json")), &info); err != nil {
		t.Fatal(err)
	}
	if info.Commit != commit || info.BuildDate != built || info.MapLayout != dataplane.MapLayout {
		t.Fatalf("built binary says %+v", info)
	}
	cmd := exec.Command("../../scripts/package.sh", "deb")
	cmd.Env = append(os.Environ(), "BIN="+bin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("package.sh deb: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	deb := lines[len(lines)-1]
	if filepath.Dir(deb) != filepath.Dir(bin) || !strings.HasPrefix(filepath.Base(deb), "seg6x_"+info.Version+"+git") {
		t.Fatalf("package.sh deb made %q", deb)
	}
	return deb, info
}

func checkVersion(t *testing.T, info versionInfo) {
	out := testsupport.MustRun(t, "/usr/bin/seg6x", "version")
	for _, want := range []string{"seg6x " + info.Version + "\n", "commit " + commit + "\n",
		"built " + info.BuildDate + "\n", "map layout " + dataplane.MapLayout + "\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("seg6x version lacks %q:\n%s", want, out)
		}
	}
	if v := testsupport.MustRun(t, "/usr/bin/seg6x", "--version"); v != out {
		t.Errorf("seg6x --version:\n%s\nseg6x version:\n%s", v, out)
	}
	status := testsupport.MustRun(t, "dpkg-query", "-W", "-f=${Status} ${Version}", "seg6x")
	if !strings.HasPrefix(status, "install ok installed "+info.Version+"+git") {
		t.Errorf("dpkg-query: %s", status)
	}
}

func checkFiles(t *testing.T) {
	unit := read(t, "/usr/lib/systemd/system/seg6x.service")
	if !strings.Contains(unit, "\nExecStart=/usr/bin/seg6x ") {
		t.Errorf("the unit does not run /usr/bin/seg6x:\n%s", unit)
	}
	for _, line := range strings.Split(unit, "\n") {
		if doc, ok := strings.CutPrefix(line, "Documentation=file://"); ok {
			if _, err := os.Stat(doc); err != nil {
				t.Errorf("the unit's documentation: %v", err)
			}
		}
	}
	if got, want := read(t, "/etc/seg6x/seg6x.yaml"), read(t, "../../deploy/seg6x.yaml"); got != want {
		t.Errorf("/etc/seg6x/seg6x.yaml is not deploy/seg6x.yaml")
	}
	for _, f := range []string{"README.md", "CHANGELOG.md", "docs/README.md", "docs/operations.md", "docs/install.md", "docs/design/bgp-interop.md",
		"docs/plugins.md", "examples/plugins/ttlgate.c"} {
		read(t, "/usr/share/doc/seg6x/"+f)
	}
	// The plugin SDK, and the shipped plugins built.
	if got, want := read(t, "/usr/include/seg6x/seg6x_plugin.h"), read(t, "../../bpf/sdk/seg6x/seg6x_plugin.h"); got != want {
		t.Errorf("/usr/include/seg6x/seg6x_plugin.h is not the SDK's header")
	}
	if obj := read(t, "/usr/lib/seg6x/plugins/ttlgate.o"); !strings.HasPrefix(obj, "\x7fELF") {
		t.Errorf("/usr/lib/seg6x/plugins/ttlgate.o is no ELF object")
	}
	// A man page per command, which groff renders.
	for _, page := range []string{"seg6x", "seg6x-apply", "seg6x-tenant-add", "seg6x-route-add", "seg6x-sid-add", "seg6x-version"} {
		src := gunzip(t, "/usr/share/man/man1/"+page+".1.gz")
		if !strings.Contains(src, "\n.TH \""+strings.ToUpper(page)+"\" \"1\"") {
			t.Errorf("%s.1: no .TH line: %.80q", page, src)
		}
	}
	if _, err := exec.LookPath("groff"); err == nil {
		cmd := exec.Command("groff", "-man", "-Tutf8", "-P-cbou") // plain text: no overstriking
		cmd.Stdin = strings.NewReader(gunzip(t, "/usr/share/man/man1/seg6x-sid-add.1.gz"))
		out, err := cmd.Output()
		if err != nil || !bytes.Contains(out, []byte("SYNOPSIS")) || !bytes.Contains(out, []byte("End.DT46")) {
			t.Errorf("groff seg6x-sid-add.1: %v\n%s", err, out)
		}
	}
	for f, want := range map[string]string{
		"/usr/share/bash-completion/completions/seg6x":    "__start_seg6x",
		"/usr/share/zsh/vendor-completions/_seg6x":        "#compdef seg6x",
		"/usr/share/fish/vendor_completions.d/seg6x.fish": "__complete",
	} {
		if !strings.Contains(read(t, f), want) {
			t.Errorf("%s lacks %q", f, want)
		}
	}
}

// checkCompletions asks the installed binary, and the installed bash and fish scripts where those
// shells are here, to complete a behavior.
func checkCompletions(t *testing.T) {
	out := testsupport.MustRun(t, "/usr/bin/seg6x", "__complete", "sid", "add", "fc00::1", "action", "End.DT")
	if !strings.Contains(out, "End.DT46\t") {
		t.Errorf("__complete sid add fc00::1 action End.DT:\n%s", out)
	}
	want := "End.DT4 End.DT6 End.DT46"
	if _, err := os.Stat("/usr/share/bash-completion/bash_completion"); err == nil {
		// bash-completion loads /usr/share/bash-completion/completions/seg6x on first use.
		script := `source /usr/share/bash-completion/bash_completion; _completion_loader seg6x
COMP_LINE="seg6x sid add fc00::1 action End.DT"; COMP_POINT=${#COMP_LINE}; COMP_TYPE=9
COMP_WORDS=(seg6x sid add fc00::1 action End.DT); COMP_CWORD=5
__start_seg6x seg6x End.DT action 2>/dev/null; echo "${COMPREPLY[*]}"`
		if got := strings.TrimSpace(testsupport.MustRun(t, "bash", "-c", script)); got != want {
			t.Errorf("bash completes %q, want %q", got, want)
		}
	}
	if _, err := exec.LookPath("fish"); err == nil {
		// fish reads /usr/share/fish/vendor_completions.d/seg6x.fish by itself.
		out := testsupport.MustRun(t, "fish", "-c", `complete -C "seg6x sid add fc00::1 action End.DT"`)
		var got []string
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			name, _, _ := strings.Cut(line, "\t")
			got = append(got, name)
		}
		if strings.Join(got, " ") != want {
			t.Errorf("fish completes %q, want %q", got, want)
		}
	}
}

// smokeApply applies the packaged config (a dry run: it changes nothing) and a tenant with a route in
// a network namespace of the test's own, on an instance of the test's own. nsenter --net keeps this
// mount namespace's /sys, where the instance's pins go (ip netns exec would give a fresh one).
func smokeApply(t *testing.T) {
	ns := fmt.Sprintf("s6pkg%d", os.Getpid())
	testsupport.DelNetns(ns)
	if err := testsupport.AddNetns(ns); err != nil {
		t.Fatal(err)
	}
	defer testsupport.DelNetns(ns)
	if err := os.MkdirAll(runRoot, 0o700); err != nil {
		t.Fatal(err)
	}
	parent, err := os.MkdirTemp(runRoot, "apply")
	if err != nil {
		t.Fatal(err)
	}
	inst := filepath.Join(parent, "instance")
	defer func() {
		testsupport.RemoveInstance(inst)
		os.RemoveAll(parent)
		os.Remove(runRoot) // only when no other test's instance is in it
	}()
	seg6x := func(args ...string) string {
		t.Helper()
		return testsupport.MustRun(t, "nsenter", append([]string{"--net=/run/netns/" + ns, "/usr/bin/seg6x", "--dir", inst}, args...)...)
	}
	if out := seg6x("apply", "-f", "/etc/seg6x/seg6x.yaml", "--dry-run"); strings.TrimSpace(out) != "no changes" {
		t.Errorf("apply --dry-run of the packaged config: %q", out)
	}
	file := filepath.Join(t.TempDir(), "smoke.yaml")
	if err := os.WriteFile(file, []byte(smokeYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	seg6x("apply", "-f", file)
	var st struct {
		Tenants []struct {
			Name  string `json:"name"`
			Table uint32 `json:"table"`
		} `json:"tenants"`
		Routes []struct {
			Tenant string   `json:"tenant"`
			Prefix string   `json:"prefix"`
			Segs   []string `json:"segs"`
		} `json:"routes"`
	}
	out := seg6x("show", "--json")
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("show --json: %v\n%s", err, out)
	}
	if len(st.Tenants) != 1 || st.Tenants[0].Name != "blue" || st.Tenants[0].Table != 1000 ||
		len(st.Routes) != 1 || st.Routes[0].Tenant != "blue" || st.Routes[0].Prefix != "198.18.2.0/24" ||
		len(st.Routes[0].Segs) != 1 || st.Routes[0].Segs[0] != "fc00:2::64" {
		t.Errorf("show --json after the apply:\n%s", out)
	}
	if out := seg6x("apply", "-f", file); strings.TrimSpace(out) != "no changes" {
		t.Errorf("the same file again: %q", out)
	}
	seg6x("detach", "--all", "--purge")
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Error(err)
	}
	return string(b)
}

func gunzip(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Error(err)
		return ""
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Errorf("%s: %v", path, err)
		return ""
	}
	b, err := io.ReadAll(z)
	if err != nil {
		t.Errorf("%s: %v", path, err)
	}
	return string(b)
}
