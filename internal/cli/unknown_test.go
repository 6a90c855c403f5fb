package cli

// unknown_test.go: every command group refuses an unknown subcommand (an error, so exit 1) naming the
// ones it has, and a negative value for `set` is said to be negative, not an unknown flag.

import (
	"io"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

func TestUnknownSubcommandsRefused(t *testing.T) {
	var groups [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		if c.HasSubCommands() {
			groups = append(groups, path)
		}
		for _, s := range c.Commands() {
			walk(s, append(append([]string(nil), path...), s.Name()))
		}
	}
	walk(NewRoot(), nil)
	if len(groups) < 5 {
		t.Fatalf("only %d command groups found", len(groups))
	}
	for _, path := range groups {
		root := NewRoot()
		root.SetOut(io.Discard)
		root.SetArgs(append(append([]string(nil), path...), "nosuch"))
		err := root.Execute()
		if err == nil || !strings.Contains(err.Error(), `unknown command "nosuch"`) {
			t.Errorf("seg6x %s nosuch: %v, want an unknown command error", strings.Join(path, " "), err)
		}
	}
}

func TestSetNegativeValue(t *testing.T) {
	root := NewRoot()
	root.SetOut(io.Discard)
	root.SetArgs([]string{"set", "nexthop-cache-ms", "-1"})
	if err := root.Execute(); err == nil || err.Error() != "nexthop-cache-ms: -1 is negative; want 0 to 10000 (ms)" {
		t.Errorf("set nexthop-cache-ms -1: %v", err)
	}
}

func TestBadFlagHints(t *testing.T) {
	root := NewRoot()
	root.SetOut(io.Discard)
	root.SetErr(io.Discard)
	root.SetArgs([]string{"route", "add", "--frobnicate"})
	if err := root.Execute(); err == nil || err.Error() != "unknown flag: --frobnicate (see seg6x route add --help)" {
		t.Errorf("route add --frobnicate: %v", err)
	}
}
