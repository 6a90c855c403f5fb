package benchrig

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// checkMeta fails t for every field of m that is missing or malformed.
func checkMeta(t *testing.T, where string, m Meta) {
	t.Helper()
	if _, err := time.Parse(time.RFC3339, m.Date); err != nil {
		t.Errorf("%s: date %q is not RFC 3339: %v", where, m.Date, err)
	}
	// Files measured before the benchmarks had a binary of their own say "seg6x bench ...".
	if !strings.HasPrefix(m.Command, "seg6x-bench ") && !strings.HasPrefix(m.Command, "seg6x bench ") {
		t.Errorf("%s: command %q is not a seg6x-bench command", where, m.Command)
	}
	if m.Commit == "" {
		t.Errorf("%s: no commit", where)
	}
	if m.Machine.Hostname == "" || m.Machine.Kernel == "" || m.Machine.CPU == "" || m.Machine.CPUs <= 0 {
		t.Errorf("%s: machine incomplete: %+v", where, m.Machine)
	}
}

func TestNewMetaFillsEveryField(t *testing.T) {
	saved := os.Args
	os.Args = []string{"/somewhere/bin/seg6x-bench", "run", "--scenarios", "a,b", "--note", "two words"}
	m := NewMeta()
	os.Args = saved
	t.Logf("%+v", m)
	checkMeta(t, "NewMeta", m)
	if want := "seg6x-bench run --scenarios a,b --note 'two words'"; m.Command != want {
		t.Errorf("command %q, want %q", m.Command, want)
	}
	if m.Machine.Hostname == "unknown" || m.Machine.Kernel == "unknown" {
		t.Errorf("machine not read: %+v", m.Machine)
	}
	// In a git checkout (as in development and CI) the commit is a full revision.
	if out, err := exec.Command("git", "rev-parse", "HEAD").Output(); err == nil {
		head := strings.TrimSpace(string(out))
		if !regexp.MustCompile(`^[0-9a-f]{40}(-dirty)?$`).MatchString(m.Commit) {
			t.Errorf("commit %q is not a revision", m.Commit)
		}
		if m.CommitFrom == "checkout" && !strings.HasPrefix(m.Commit, head) {
			t.Errorf("commit %q from the checkout, whose HEAD is %s", m.Commit, head)
		}
	}
	b, err := json.Marshal(Results{Meta: m, Results: []int{1}})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{`"meta":{"date":`, `"command":`, `"commit":`, `"machine":{"hostname":`, `"kernel":`, `"cpu":`, `"cpus":`, `"results":[1]`} {
		if !strings.Contains(string(b), k) {
			t.Errorf("JSON lacks %s: %s", k, b)
		}
	}
}

// Every results file in the repository says when, by which command, from which commit and on what
// machine it was measured (bench/results/README.md indexes them).
func TestCommittedResultsCarryMeta(t *testing.T) {
	files, err := filepath.Glob("../../bench/results/*.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no results files in bench/results")
	}
	for _, f := range files {
		if strings.HasSuffix(f, ".meta.json") {
			continue // read with the list it describes
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		// `seg6x-bench tcp --out` writes a plain list of records (the agreed format) with its metadata
		// beside it in <name>.meta.json.
		if bytes.HasPrefix(bytes.TrimSpace(b), []byte("[")) {
			var recs []json.RawMessage
			mb, err := os.ReadFile(strings.TrimSuffix(f, ".json") + ".meta.json")
			var m Meta
			if err == nil {
				err = json.Unmarshal(mb, &m)
			}
			if jerr := json.Unmarshal(b, &recs); jerr != nil || len(recs) == 0 || err != nil {
				t.Errorf("%s: a list of records needs records and a .meta.json beside it (%v, %v)", f, jerr, err)
				continue
			}
			checkMeta(t, filepath.Base(f), m)
			continue
		}
		var r struct {
			Meta    *Meta           `json:"meta"`
			Results json.RawMessage `json:"results"`
		}
		if err := json.Unmarshal(b, &r); err != nil {
			t.Errorf("%s: not {\"meta\": ..., \"results\": ...}: %v", f, err)
			continue
		}
		if r.Meta == nil || len(r.Results) == 0 {
			t.Errorf("%s: meta or results missing", f)
			continue
		}
		checkMeta(t, filepath.Base(f), *r.Meta)
	}
}
