package daemontest

// systemd_test.go: the daemon run the way systemd runs deploy/seg6x.service (a mount namespace of
// its own, mounts not propagated back) is stopped, killed, restarted and upgraded under a counted
// stream: every frame arrives, because the pins live in the host's bpffs, not in a mount that dies
// with the daemon's namespace.

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seg6x/seg6x/internal/dataplane"
	"github.com/seg6x/seg6x/tools/benchrig"
	"github.com/seg6x/seg6x/tools/testsupport"
)

func TestHitlessInOwnMountNamespace(t *testing.T) {
	segs := benchrig.SIDs(0, 2)
	// The rig's own daemon (ip netns exec, a bpffs mounted for it) is not used: no daemon, no pins.
	r, d := setupStopped(t, segs)
	if err := dataplane.Purge(r.DutDir()); err != nil { // its bpffs too
		t.Fatal(err)
	}
	if err := dataplane.EnsureBPFFS(dataplane.HostBPFFS); err != nil { // what systemd mounts at boot
		t.Fatal(err)
	}
	dir := r.DutDir() + "-sd" // a new instance: nothing mounted for it
	testsupport.RemoveInstance(dir)
	t.Cleanup(func() {
		if err := dataplane.Purge(dir); err != nil {
			t.Errorf("purge: %v", err)
		}
		testsupport.RemoveInstance(dir)
	})
	logs := &testsupport.LogBuffer{}
	var cur *testsupport.Daemon
	start := func(bin string) error {
		var err error
		cur, err = testsupport.StartDaemonAsSystemd(bin, r.DutNS(), dir, logs, "--config", d.cfg)
		return err
	}
	stop := func(sig syscall.Signal) {
		if cur != nil {
			cur.Signal(sig)
			cur = nil
		}
	}
	t.Cleanup(func() { stop(syscall.SIGKILL) })
	if err := start(d.bin); err != nil {
		t.Fatalf("%v\n%s", err, logs)
	}
	host := dataplane.HostPinDir(dir)
	if l, err := os.Readlink(dataplane.PinDir(dir)); err != nil || l != host {
		t.Fatalf("%s: link to %q (%v), want a link to %s", dataplane.PinDir(dir), l, err, host)
	}
	// An upgrade: another binary, and maps that look like an older layout's (made again, filled from
	// the saved state, links switched).
	upgraded := filepath.Join(t.TempDir(), "seg6x-new")
	if b, err := os.ReadFile(d.bin); err != nil || os.WriteFile(upgraded, b, 0o755) != nil {
		t.Fatal(err)
	}
	var linksWhileStopped int
	restarts := 0
	res, err := streamWhile(r, tenantFlows, []benchrig.Pattern{benchrig.EncapOutput(segs)}, 40000, 5500*time.Millisecond, func() error {
		if err := flowing(cur.Client, 2000); err != nil {
			return err
		}
		for i, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL, syscall.SIGTERM} {
			stop(sig) // systemctl stop / a crash / the stop of an upgrade
			bin := d.bin
			if i == 0 {
				ents, _ := os.ReadDir(filepath.Join(host, "links"))
				linksWhileStopped = len(ents)
			}
			if i == 2 {
				if err := os.Rename(filepath.Join(host, dataplane.MapLayout), filepath.Join(host, "maps-v1")); err != nil {
					return err
				}
				bin = upgraded
			}
			time.Sleep(150 * time.Millisecond) // forwarding with no daemon at all
			if err := start(bin); err != nil {
				return err
			}
			restarts++
			if err := flowing(cur.Client, 2000); err != nil { // through the new daemon's program
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, logs)
	}
	stop(syscall.SIGTERM)
	t.Logf("%d restarts; sent %d, arrived correct %d, wrong %d; %d links pinned while stopped", restarts, res.Sent, res.Good, res.Bad, linksWhileStopped)
	if linksWhileStopped != 2 {
		t.Errorf("%d links in %s while the daemon was stopped, want 2 (both interfaces)", linksWhileStopped, host)
	}
	if restarts != 3 || strings.Count(logs.String(), "adopted") != 4 || !strings.Contains(logs.String(), "removed the maps of [maps-v1]") {
		t.Fatalf("restarts %d; the daemon's log:\n%s", restarts, logs)
	}
	if res.Sent < 100000 || res.Good != res.Sent || res.Bad != 0 {
		t.Fatalf("sent %d, sink accepted %d, rejected %d (last rejected %x)\n%s", res.Sent, res.Good, res.Bad, res.LastBad, logs)
	}
}

// The shipped unit keeps its hardening (a mount namespace of its own: the test above is why that
// is safe) and is valid for systemd (systemd-analyze verify, with ExecStart on the built binary).
func TestUnitKeepsHardening(t *testing.T) {
	b, err := os.ReadFile("../../deploy/seg6x.service")
	if err != nil {
		t.Fatal(err)
	}
	unit := string(b)
	for _, want := range []string{"\nProtectSystem=strict\n", "\nPrivateTmp=yes\n", "\nReadWritePaths=/run/seg6x /sys/fs/bpf\n", "\nRuntimeDirectoryPreserve=yes\n"} {
		if !strings.Contains(unit, want) {
			t.Errorf("deploy/seg6x.service lacks %q", strings.TrimSpace(want))
		}
	}
	if _, err := exec.LookPath("systemd-analyze"); err != nil {
		t.Logf("no systemd-analyze: the unit's syntax is not verified here")
		return
	}
	bin := testsupport.BuildSeg6x(t)
	f := filepath.Join(t.TempDir(), "seg6x.service")
	if err := os.WriteFile(f, []byte(strings.ReplaceAll(unit, "/usr/local/bin/seg6x", bin)), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("systemd-analyze", "verify", f).CombinedOutput(); err != nil {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
}
