package daemon

// daemon_test.go: messages a user sees from the daemon (no root needed).

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestConfigErrorNamesFileOnce: a bad --config reads "config: FILE: yaml: line N: ...", the file
// and "yaml: " once each.
func TestConfigErrorNamesFileOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(path, []byte("routes:\n  - tenant: a\n    prefix: 10.0.0.0/33\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := applyConfig(context.Background(), nil, path, &Options{})
	want := "config: " + path + `: yaml: line 3: routes[0].prefix: netip.ParsePrefix("10.0.0.0/33"): prefix length out of range`
	if err == nil || err.Error() != want {
		t.Fatalf("got  %v\nwant %s", err, want)
	}
}
