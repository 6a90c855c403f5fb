package cli

// version_test.go: what `seg6x version` and --version print.

import (
	"strings"
	"testing"
)

// `seg6x version` names the map layout this binary pins, and --version says the same as version.
func TestVersion(t *testing.T) {
	b := buildInfo()
	if b.Version == "" || b.MapLayout == "" || b.Go == "" {
		t.Fatalf("build info %+v", b)
	}
	s := b.String()
	if !strings.Contains(s, "map layout "+b.MapLayout) || !strings.HasPrefix(s, "seg6x "+b.Version+"\n") {
		t.Errorf("version text %q", s)
	}
	var out strings.Builder
	root := NewRoot()
	root.SetOut(&out)
	root.SetArgs([]string{"--version"})
	if err := root.Execute(); err != nil || out.String() != s {
		t.Errorf("--version: %q, %v; want %q", out.String(), err, s)
	}
}
