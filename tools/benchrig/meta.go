package benchrig

// meta.go: where a results file came from. Every JSON a `seg6x-bench` command writes (bench run
// --out, and every bench command's --json) is a Results: this metadata, then the command's own
// results. bench/results/README.md indexes the files; the metadata is what dates them.

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Results is the one form of every results JSON: {"meta": ..., "results": ...}.
type Results struct {
	Meta    Meta `json:"meta"`
	Results any  `json:"results"`
}

// Meta says when, by which command, from which code and on what machine results were measured.
type Meta struct {
	Date    string `json:"date"`    // RFC 3339, UTC: when the command started
	Command string `json:"command"` // the command line, as "seg6x-bench ..." (earlier files: "seg6x bench ...")
	// Commit is the source revision: the binary's VCS stamp (vcs.revision, "-dirty" when the tree
	// had changes) when it has one, CommitFrom "binary"; otherwise HEAD of the git checkout the
	// binary sits in (or of the working directory), "-dirty" when that checkout has uncommitted
	// changes to Go, C or go.mod/go.sum files, CommitFrom "checkout". "unknown" if neither exists.
	// (Files recorded before metadata existed had it added by hand: "file history", and a Note.)
	Commit     string  `json:"commit"`
	CommitFrom string  `json:"commit_from,omitempty"`
	Machine    Machine `json:"machine"`
	Note       string  `json:"note,omitempty"` // anything else a reader needs to know about the run
}

// Machine is the host a run measured.
type Machine struct {
	Hostname string `json:"hostname"`
	Kernel   string `json:"kernel"` // uname release
	CPU      string `json:"cpu"`    // model name from /proc/cpuinfo
	CPUs     int    `json:"cpus"`   // online CPUs
}

// NewMeta describes a run of this process starting now.
func NewMeta() Meta {
	m := Meta{Date: time.Now().UTC().Format(time.RFC3339), Command: commandLine(os.Args), Machine: thisMachine()}
	m.Commit, m.CommitFrom = sourceCommit()
	return m
}

// commandLine is args as one shell-readable line, the program named "seg6x-bench" whatever its path.
func commandLine(args []string) string {
	parts := []string{"seg6x-bench"}
	if len(args) > 1 {
		for _, a := range args[1:] {
			if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`*?;&|<>()") {
				a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
			}
			parts = append(parts, a)
		}
	}
	return strings.Join(parts, " ")
}

func sourceCommit() (commit, from string) {
	if bi, ok := debug.ReadBuildInfo(); ok {
		var rev, modified string
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value
			}
		}
		if rev != "" {
			if modified == "true" {
				rev += "-dirty"
			}
			return rev, "binary"
		}
	}
	// No stamp (built with -buildvcs=false, or in a git worktree, which Go does not stamp).
	var dirs []string
	if exe, err := os.Executable(); err == nil {
		dirs = append(dirs, filepath.Dir(exe))
	}
	if wd, err := os.Getwd(); err == nil {
		dirs = append(dirs, wd)
	}
	for _, d := range dirs {
		out, err := exec.Command("git", "-C", d, "rev-parse", "HEAD").Output()
		if err != nil {
			continue
		}
		rev := strings.TrimSpace(string(out))
		st, err := exec.Command("git", "-C", d, "status", "--porcelain", "--untracked-files=no", "--",
			":(top)*.go", ":(top)*.c", ":(top)*.h", ":(top)go.mod", ":(top)go.sum").Output()
		if err == nil && len(strings.TrimSpace(string(st))) > 0 {
			rev += "-dirty"
		}
		return rev, "checkout"
	}
	return "unknown", ""
}

func thisMachine() Machine {
	m := Machine{Hostname: "unknown", Kernel: "unknown", CPU: runtime.GOARCH, CPUs: runtime.NumCPU()}
	if h, err := os.Hostname(); err == nil && h != "" {
		m.Hostname = h
	}
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		m.Kernel = unix.ByteSliceToString(u.Release[:])
	}
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return m
	}
	defer f.Close()
	cpus, model := 0, ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		switch k, v = strings.TrimSpace(k), strings.TrimSpace(v); k {
		case "processor":
			cpus++
		case "model name", "Model", "cpu model", "cpu":
			if model == "" && v != "" {
				model = v
			}
		}
	}
	if cpus > 0 {
		m.CPUs = cpus
	}
	if model != "" {
		m.CPU = model
	}
	return m
}
