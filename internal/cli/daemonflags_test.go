package cli

// daemonflags_test.go: `seg6x daemon` refuses a log level or format it does not know before it
// starts (an error, so exit 1), naming the ones it has, and takes the ones it knows.

import (
	"io"
	"strings"
	"testing"
)

func TestDaemonLogFlags(t *testing.T) {
	for _, c := range []struct {
		args          []string
		want          string // in the error; "" = accepted
		level, format string // then, as the flags read back
	}{
		{[]string{"--log-level", "bogus"}, `invalid argument "bogus" for "--log-level" flag: "bogus" is not a log level: debug, info, warn or error`, "", ""},
		{[]string{"--log-format", "xml"}, `invalid argument "xml" for "--log-format" flag: "xml" is not a log format: text or json`, "", ""},
		{nil, "", "info", "text"},
		{[]string{"--log-level", "DEBUG", "--log-format", "json"}, "", "debug", "json"},
		{[]string{"--log-level", "warn"}, "", "warn", "text"},
	} {
		// Parse only: a daemon that starts would open an instance.
		cmd, rest, err := NewRoot().Find(append([]string{"daemon"}, c.args...))
		if err != nil {
			t.Fatal(err)
		}
		err = cmd.ParseFlags(rest)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%v: %v", c.args, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%v: %v, want %s", c.args, err, c.want)
		case c.want == "":
			if l, f := cmd.Flag("log-level").Value.String(), cmd.Flag("log-format").Value.String(); l != c.level || f != c.format {
				t.Errorf("%v: level %s, format %s; want %s, %s", c.args, l, f, c.level, c.format)
			}
		}
	}
	// Through Execute, as main runs it: the bad flag ends the command with that error. (The extra
	// argument stops it too, should the flag ever be accepted: no daemon starts from this test.)
	root := NewRoot()
	root.SetOut(io.Discard)
	root.SetErr(io.Discard)
	root.SetArgs([]string{"daemon", "--dir", t.TempDir(), "--log-level", "bogus", "no-such-argument"})
	if err := root.Execute(); err == nil || !strings.Contains(err.Error(), "is not a log level") {
		t.Errorf("seg6x daemon --log-level bogus: %v", err)
	}
}
