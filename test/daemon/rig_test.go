package daemontest

// rig_test.go: the benchmark rig and the seg6x daemon in its DUT namespace, shared by the tests
// (built once per run of the package, not once per test: over a second each). setup hands a test
// that daemon serving exactly the test's configuration, checked, with a log of the test's own; a
// test that fails takes the rig down, so the next one builds a fresh one. Streams that last as long
// as what runs under them (streamWhile, flowing), and this process's threads let off the
// generator's CPU again (allCPUs).

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	pb "github.com/seg6x/seg6x/api/seg6xv1"
	"github.com/seg6x/seg6x/internal/dataplane"
	"github.com/seg6x/seg6x/tools/benchrig"
	"github.com/seg6x/seg6x/tools/testsupport"
	"golang.org/x/sys/unix"
)

// shared is the rig and its daemon while tests use them (nil before the first and after a failure).
var shared struct {
	r   *benchrig.Rig
	d   *daemon
	tmp string // holds the daemon's config file
}

func TestMain(m *testing.M) {
	_ = unix.SchedGetaffinity(0, &processCPUs)
	code := m.Run()
	teardown()
	os.Exit(code)
}

// teardown stops the shared daemon and removes the shared rig.
func teardown() {
	if shared.d != nil {
		shared.d.kill(syscall.SIGKILL)
	}
	if shared.r != nil {
		shared.r.Down()
	}
	if shared.tmp != "" {
		_ = os.RemoveAll(shared.tmp)
	}
	shared.r, shared.d, shared.tmp = nil, nil, ""
}

// processCPUs are the CPUs this process could run on when it started.
var processCPUs unix.CPUSet

// allCPUs lets every thread of this process run on processCPUs again. The rig pins the thread that
// runs its generator to one CPU and leaves it so; a daemon forked from such a thread inherits the pin
// and competes with the generator's busy wait on that one CPU (its start takes twice as long, and
// the stream falls behind). Called while no stream runs.
func allCPUs() {
	if processCPUs.Count() == 0 {
		return
	}
	tasks, _ := os.ReadDir("/proc/self/task")
	for _, task := range tasks {
		if tid, err := strconv.Atoi(task.Name()); err == nil {
			_ = unix.SchedSetaffinity(tid, &processCPUs)
		}
	}
}

// setup gives t the shared rig (built first if there is none) with its daemon serving exactly
// HeadendConfig(segs, 0), written to d.cfg: the running daemon's state made equal to the file (apply
// --prune: whatever an earlier test added goes), or a daemon started on it when none runs or it runs
// with other arguments than --config d.cfg; either way `apply --dry-run` must then find no changes.
// A trace drops what an earlier one left in the pinned trace ring itself (dataplane.ArmTrace): the
// trace and capture tests share the ring and count on it. d.logs holds only what the daemon logs
// from then on. What the reset does not undo is the data plane's counters: a test that counts from
// zero uses setupStopped.
func setup(t *testing.T, segs []netip.Addr) (*benchrig.Rig, *daemon) {
	t.Helper()
	return setupRig(t, segs, false)
}

// setupStopped is setup without a daemon, on a fresh instance: the daemon stopped, the instance's
// pins (maps, links: the interfaces detached) and saved state removed, its bpffs mounted again. The
// test starts what it needs.
func setupStopped(t *testing.T, segs []netip.Addr) (*benchrig.Rig, *daemon) {
	t.Helper()
	return setupRig(t, segs, true)
}

func setupRig(t *testing.T, segs []netip.Addr, stopped bool) (*benchrig.Rig, *daemon) {
	t.Helper()
	bin := testsupport.BuildSeg6x(t)
	if shared.r == nil {
		tmp, err := os.MkdirTemp("", "seg6x-daemontest-")
		if err != nil {
			t.Fatal(err)
		}
		r, err := benchrig.Up(fmt.Sprintf("s6dt%d", os.Getpid()%10000), bin)
		if err != nil {
			_ = os.RemoveAll(tmp)
			t.Fatal(err)
		}
		shared.r, shared.tmp = r, tmp
		shared.d = &daemon{r: r, bin: bin, cfg: filepath.Join(tmp, "seg6x.yaml")}
	}
	t.Cleanup(func() { // registered first: a failing set-up must not leave the rig behind either
		if t.Failed() {
			teardown()
		}
	})
	allCPUs()
	r, d := shared.r, shared.d
	d.t, d.bin, d.logs = t, bin, &testsupport.LogBuffer{}
	if err := os.WriteFile(d.cfg, []byte(benchrig.HeadendConfig(segs, 0)), 0o600); err != nil {
		t.Fatal(err)
	}
	if stopped || d.d == nil || d.custom {
		d.kill(syscall.SIGKILL)
		if stopped {
			if err := dataplane.Purge(r.DutDir()); err != nil {
				t.Fatal(err)
			}
		}
		if err := testsupport.MountInstance(r.DutDir()); err != nil {
			t.Fatal(err)
		}
		if stopped {
			return r, d
		}
		d.start()
		d.logs.WaitFor("ready (pid") // its start-up lines in this log, not the test's
	} else if out, err := d.cli("apply", "-f", d.cfg, "--prune"); err != nil {
		t.Fatalf("resetting the daemon's state: %v\n%s\n%s", err, out, d.logs)
	}
	if out, err := d.cli("apply", "-f", d.cfg, "--dry-run"); err != nil || !strings.Contains(out, "no changes") {
		t.Fatalf("the daemon's state is not its config: %v\n%s", err, out)
	}
	d.logs = &testsupport.LogBuffer{}
	d.out.to(d.logs)
	return r, d
}

// cli runs the seg6x CLI on the DUT's instance and returns its output.
func (d *daemon) cli(args ...string) (string, error) {
	out, err := exec.Command("ip", append([]string{"netns", "exec", d.r.DutNS(), d.bin, "--dir", d.r.DutDir()}, args...)...).CombinedOutput()
	return string(out), err
}

// logSwitch is a daemon's output, written to the log of the test that uses the daemon now.
type logSwitch struct {
	mu sync.Mutex
	b  *testsupport.LogBuffer
}

func (l *logSwitch) to(b *testsupport.LogBuffer) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b = b
}

func (l *logSwitch) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.b == nil {
		return len(p), nil
	}
	return l.b.Write(p)
}

// logged waits (up to 10 s) until the log holds s n times (lines reach it a moment after the daemon
// wrote them) and returns how many times it holds s.
func logged(l *testsupport.LogBuffer, s string, n int) int {
	for i := 0; i < 1000 && strings.Count(l.String(), s) < n; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	return strings.Count(l.String(), s)
}

// forwarded is the number of frames the DUT's program redirected (its XDP_REDIRECT count, through
// the daemon c).
func forwarded(c pb.ControlClient) (uint64, error) {
	s, err := c.Stats(context.Background(), &pb.StatsRequest{})
	if err != nil {
		return 0, err
	}
	return s.Actions["XDP_REDIRECT"].GetPackets(), nil
}

// flowing waits (up to 10 s) until the DUT served by daemon c has forwarded n more frames: the stream
// flows now, through whatever was just changed.
func flowing(c pb.ControlClient, n uint64) error {
	first, err := forwarded(c)
	if err != nil {
		return err
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		now, err := forwarded(c)
		if err != nil {
			return err
		}
		if now >= first+n {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the DUT forwarded %d frames in 10 s, waiting for %d: the stream does not flow", now-first, n)
		}
	}
}

// streamWhile is the rig's counted stream of the tenant flows (rate frames/s, the sink accepting
// pats) for as long as fn runs, fn starting with it: runs of the rig's fixed-length stream, the first
// lasting first (what fn takes on a quiet machine), one more of a second while fn still runs, up to
// 30; the counts are summed. A run cannot end early and between two runs (a tenth of a second)
// nothing is sent: fn waits with flowing before each change it makes under traffic and after the
// last, so that each one is made and seen while frames flow.
func streamWhile(r *benchrig.Rig, flows []int, pats []benchrig.Pattern, rate float64, first time.Duration, fn func() error) (benchrig.StreamResult, error) {
	return streamRunsWhile(func(d time.Duration, during func() error) (benchrig.StreamResult, error) {
		return r.StreamFlows(flows, pats, rate, d, during)
	}, first, fn)
}

// streamRunsWhile is streamWhile over any of the rig's streams (stream: one run of d).
func streamRunsWhile(stream func(d time.Duration, during func() error) (benchrig.StreamResult, error), first time.Duration, fn func() error) (benchrig.StreamResult, error) {
	done := make(chan error, 1)
	started := false
	var sum benchrig.StreamResult
	d := first
	for i := 0; i <= 30; i, d = i+1, time.Second {
		allCPUs() // what fn starts while the stream runs is not pinned with the generator
		res, err := stream(d, func() error {
			if !started {
				started = true
				go func() { done <- fn() }()
			}
			return nil
		})
		if err != nil {
			if started {
				select { // fn is bounded by its own deadlines: let it end before the test goes on
				case <-done:
				case <-time.After(30 * time.Second):
				}
			}
			return sum, err
		}
		sum.Sent, sum.Good, sum.Bad = sum.Sent+res.Sent, sum.Good+res.Good, sum.Bad+res.Bad
		sum.Matched[0], sum.Matched[1] = sum.Matched[0]+res.Matched[0], sum.Matched[1]+res.Matched[1]
		if res.LastBad != nil {
			sum.LastBad = res.LastBad
		}
		select {
		case err := <-done:
			return sum, err
		default:
		}
	}
	return sum, errors.New("what ran under the stream did not end within 30 further seconds of it")
}
