package testsupport

// exec.go: running a command with its output in the error (the rig's, the lab's and the tests' one
// way of calling ip, sysctl, ethtool and seg6x), and the test form that fails the test.

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

// Output runs name with args and returns its combined output; a failure's error names the command
// and holds the output.
func Output(name string, args ...string) (string, error) {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return string(out), nil
}

// Run is Output without the output.
func Run(name string, args ...string) error {
	_, err := Output(name, args...)
	return err
}

// MustRun is Output for a test: a failure ends t at once.
func MustRun(t testing.TB, name string, args ...string) string {
	t.Helper()
	out, err := Output(name, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
