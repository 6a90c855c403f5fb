package dataplane

// attacherr_test.go: the kernel's refusals of an XDP attach reach the user as what they mean and what to
// do, never as a raw errno (ERANGE cannot be provoked on veth, which takes multi-buffer programs at any
// MTU, so the translation is checked here).

import (
	"fmt"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestAttachXDPErrorSaysWhatToDo(t *testing.T) {
	for _, c := range []struct {
		errno unix.Errno
		want  []string
	}{
		{unix.ERANGE, []string{"MTU", "multi-buffer", "rx-sg", "--mode tc"}},
		{unix.EOPNOTSUPP, []string{"no native XDP", "--mode generic", "--mode tc"}},
		{unix.EBUSY, []string{"another XDP program", "remove it first"}},
	} {
		err := attachXDPError(1, ModeNative, fmt.Errorf("create link: %w", c.errno))
		msg := err.Error()
		for _, w := range c.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%v: %q does not say %q", c.errno, msg, w)
			}
		}
		if strings.Contains(msg, c.errno.Error()) {
			t.Errorf("%v: %q carries the raw errno", c.errno, msg)
		}
	}
}
