package main

// apart_test.go: the product is apart from the project's tools. The product is what a router runs:
// the seg6x binary (this command) with every package of this module it is built from, and every
// package under api/ and internal/. None of it may depend on the tools (tools/...: the lab, the
// benchmark rig, the packet fixtures, the test support, the fuzz tests' frame generator and oracle,
// and the seg6x-lab and seg6x-bench commands) or on Go's testing package.

import (
	"errors"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/seg6x/seg6x/"

// named are product packages that must exist: a rename that leaves one out fails the test.
var named = []string{"cmd/seg6x", "api/seg6xv1", "internal/cli", "internal/dataplane", "internal/state", "internal/core",
	"internal/api", "internal/daemon", "internal/mirror", "internal/config", "internal/slowpath", "internal/bgp"}

// productTree are the folders whose every package is product.
var productTree = []string{"api/", "internal/"}

func TestProductIsApartFromTools(t *testing.T) {
	// Deps is every package a package's build needs (its tests' imports are not among them).
	out, err := exec.Command("go", "list", "-buildvcs=false", "-f", "{{.ImportPath}} {{join .Deps \" \"}}", module+"...").Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	deps := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		deps[strings.TrimPrefix(f[0], module)] = f[1:]
	}
	product := map[string]bool{}
	for _, p := range named {
		if _, ok := deps[p]; !ok {
			t.Errorf("product package %s does not exist (update the list)", p)
		}
		product[p] = true
	}
	for p := range deps {
		for _, dir := range productTree {
			if strings.HasPrefix(p, dir) {
				product[p] = true
			}
		}
	}
	for _, d := range deps["cmd/seg6x"] {
		if p, ok := strings.CutPrefix(d, module); ok {
			product[p] = true
		}
	}
	for p := range product {
		for _, d := range deps[p] {
			if d == "testing" || strings.HasPrefix(d, module+"tools/") {
				t.Errorf("product package %s depends on %s", p, d)
			}
		}
	}
	// Not vacuous: the binary is built from the CLI and the daemon, and the tools exist.
	for _, p := range []string{"internal/cli", "internal/daemon", "internal/dataplane"} {
		if !slices.Contains(deps["cmd/seg6x"], module+p) {
			t.Errorf("cmd/seg6x does not depend on %s: go list said %q", p, deps["cmd/seg6x"])
		}
	}
	if _, ok := deps["tools/benchrig"]; !ok {
		t.Errorf("no tools/benchrig: go list said %q", out)
	}
	if len(product) < len(named)+5 {
		t.Errorf("only %d product packages found", len(product))
	}
}
