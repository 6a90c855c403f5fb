package daemon

// lockholder.go: who holds an instance's lock (from /proc/locks), for the message of a daemon that
// waits for it.

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// lockHolder names the process holding the flock on path ("pid 812 (seg6x apply -f s.yaml)"), or
// says "another seg6x process" when /proc does not tell (another PID namespace, no /proc).
func lockHolder(path string) string {
	const unknown = "another seg6x process"
	var st unix.Stat_t
	if unix.Stat(path, &st) != nil {
		return unknown
	}
	f, err := os.Open("/proc/locks")
	if err != nil {
		return unknown
	}
	defer f.Close()
	// "1: FLOCK  ADVISORY  WRITE 812 fe:00:9978137 0 EOF" (device major:minor in hex, then inode);
	// waiters have "->" after the number.
	want := fmt.Sprintf("%02x:%02x:%d", unix.Major(uint64(st.Dev)), unix.Minor(uint64(st.Dev)), st.Ino)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 6 || fs[1] != "FLOCK" || fs[5] != want {
			continue
		}
		pid, err := strconv.Atoi(fs[4])
		if err != nil || pid <= 0 {
			continue
		}
		cmd, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil || len(cmd) == 0 {
			return fmt.Sprintf("pid %d", pid)
		}
		return fmt.Sprintf("pid %d (%s)", pid, strings.TrimSpace(strings.ReplaceAll(string(cmd), "\x00", " ")))
	}
	return unknown
}
