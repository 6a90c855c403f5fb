package benchrig

// applyfile.go: `seg6x-bench apply`: a YAML file of T tenants x R routes applied end to end the way an
// operator does it (the seg6x binary run as `seg6x apply -f FILE` against a daemon in a namespace of
// its own), then applied again (no changes), then removed with an empty file and --prune; each step
// timed from the command's start to its exit, with the command's own CPU time.

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/seg6x/seg6x/tools/testsupport"
)

// ApplyFileResult is one step of the run.
type ApplyFileResult struct {
	Step       string  `json:"step"` // "apply", "apply again", "remove"
	Objects    int     `json:"objects"`
	Seconds    float64 `json:"seconds"`    // wall time of the seg6x apply command
	CLICPU     float64 `json:"cli_cpu"`    // its CPU seconds (user + system)
	Output     string  `json:"output"`     // what it printed (the summary)
	FileBytes  int     `json:"file_bytes"` // the YAML file's size
	TenantsN   int     `json:"tenants"`    // tenants in the file
	PerTenantN int     `json:"per_tenant"` // routes per tenant
}

// ApplyFileYAML writes the file: tenants t0..tN-1 (tables 1000+i), each with perTenant /32 routes
// in 198.18.0.0/15 to one SID per tenant, sources from the rig's fc00:1::1.
func ApplyFileYAML(tenants, perTenant int) []byte {
	var b bytes.Buffer
	b.WriteString("tenants:\n")
	for t := range tenants {
		fmt.Fprintf(&b, "  - {name: t%d, table: %d}\n", t, 1000+t)
	}
	b.WriteString("routes:\n")
	for t := range tenants {
		for r := range perTenant {
			a := nthAddr4(t*perTenant + r)
			fmt.Fprintf(&b, "  - {tenant: t%d, prefix: %s/32, segs: [\"fc00:2::%x\"], src: \"fc00:1::1\"}\n", t, a, t+1)
		}
	}
	return b.Bytes()
}

// RunApplyFile runs the three steps with bin (the seg6x binary) against its own daemon.
func RunApplyFile(bin string, tenants, perTenant int) ([]ApplyFileResult, error) {
	ns := fmt.Sprintf("s6ap%d", os.Getpid()%10000)
	dir := filepath.Join("/run/seg6x-bench", ns)
	var logs bytes.Buffer
	var d *testsupport.Daemon
	stop := func() {
		if d != nil {
			d.Signal(os.Kill)
		}
		testsupport.DelNetns(ns)
		testsupport.RemoveInstance(dir)
	}
	stop()
	defer stop()
	for _, s := range [][]string{{"netns", "add", ns}, {"-n", ns, "link", "set", "lo", "up"}} {
		if err := testsupport.Run("ip", s...); err != nil {
			return nil, err
		}
	}
	if err := testsupport.MountInstance(dir); err != nil {
		return nil, err
	}
	var err error
	if d, err = testsupport.StartDaemon(bin, ns, dir, &logs); err != nil {
		return nil, fmt.Errorf("%w\n%s", err, logs.String())
	}
	file := filepath.Join(dir, "bulk.yaml")
	body := ApplyFileYAML(tenants, perTenant)
	if err := os.WriteFile(file, body, 0o600); err != nil {
		return nil, err
	}
	empty := filepath.Join(dir, "empty.yaml")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		return nil, err
	}
	n := tenants + tenants*perTenant
	var out []ApplyFileResult
	for _, s := range []struct {
		step string
		args []string
	}{{"apply", []string{"apply", "-f", file}}, {"apply again", []string{"apply", "-f", file}},
		{"remove", []string{"apply", "-f", empty, "--prune"}}} {
		cmd := exec.Command("ip", append([]string{"netns", "exec", ns, bin, "--dir", dir}, s.args...)...)
		t0 := time.Now()
		o, err := cmd.CombinedOutput()
		el := time.Since(t0)
		if err != nil {
			return out, fmt.Errorf("%s: %v\n%s", s.step, err, o)
		}
		ru, _ := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		cpu := 0.0
		if ru != nil {
			cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
		}
		out = append(out, ApplyFileResult{Step: s.step, Objects: n, Seconds: el.Seconds(), CLICPU: cpu,
			Output: strings.TrimSpace(string(o)), FileBytes: len(body), TenantsN: tenants, PerTenantN: perTenant})
	}
	return out, nil
}
