package config

// fuzz_test.go: `go test -fuzz FuzzParse ./internal/config/`: the YAML loader and the validation a
// config file goes through never panic, every error says where the problem is, and what parses
// re-encodes stably. `go test` runs the seeds (and testdata/fuzz/FuzzParse).

import (
	"bytes"
	"errors"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/seg6x/seg6x/internal/model"
)

// What "names where" means for Parse: every error starts with a line ("yaml: line N: ...", or a
// list "yaml: unmarshal errors:\n  line N: ...") that is in the input, and an address or prefix
// that does not parse also names its key path, which must be one of the fields that hold one.
// (Only "document contains excessive aliasing" is about no one place.)
var (
	yamlLine  = regexp.MustCompile(`^yaml: (line \d+: |unmarshal errors:\n  line \d+: )`)
	lineNum   = regexp.MustCompile(`^yaml: (?:unmarshal errors:\n  )?line (\d+): `)
	netipErr  = regexp.MustCompile(`^yaml: line \d+: (\S+: )?(ParseAddr|netip\.ParsePrefix)\(`)
	addrWhere = regexp.MustCompile(`^yaml: line \d+: (domain\.(locators|sources)\[\d+\]|tenants\[\d+\]\.gateway\[\d+\]|routes\[\d+\]\.(prefix|src|segs\[\d+\]|usids\.block)|sids\[\d+\]\.(sid|nh4|nh6)): `)
)

// For state.Validate: every problem is a FieldError about an object of the model, and its field
// (when it names one) is a key of that object.
var (
	objectRE = regexp.MustCompile(`(?s)^(options|domain|interface|interface ".*"|tenant ".*"|route .* tenant .*|sid .*)$`)
	fieldRE  = regexp.MustCompile(`^(|nexthop_cache_ms|(locators|sources|segs)\[\d+\]|locators|sources|name|mode|role|dev|vlan|port|tenant|prefix|segs|src|sid|action|nh4|nh6|table|gateway|mss_clamp|usids\.(block|nf|ids(\[\d+\])?))$`)
)

func FuzzParse(f *testing.F) {
	for _, path := range []string{"../../tools/fixtures/config.yaml"} {
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	// The lab's YAML configs (consts in tools/lab/topology.go), so the seeds follow them.
	lab, err := os.ReadFile("../../tools/lab/topology.go")
	if err != nil {
		f.Fatal(err)
	}
	for _, m := range regexp.MustCompile("(?s)const \\w+YAML = `([^`]*)`").FindAllSubmatch(lab, -1) {
		f.Add(m[1])
	}
	for _, s := range []string{
		"interfaces: [{name: fab, role: fabric}, {name: ta}]\ndomain: {locators: [\"fc00:1::/48\"], sources: [\"fc00::/16\"]}\n",
		"sids:\n  - {sid: \"fc00:3::a\", action: End.DT4, tenant: A, vlan: 100}\n  - {sid: \"fc00:3::b\", action: End.DX4, nh4: 198.18.2.2, vlan: 200}\n  - {sid: \"fc00:3::c\", action: End.X, nh6: \"fc00:9::1\"}\n",
		"interfaces: [{name: fab, role: sideways}]\n",
		"routes: [{tenant: A, prefix: 198.18.2.0/33, segs: []}]\n",
		"tenants: [{name: A}]\nroutes: [{tenant: A, prefix: 198.18.2.0/24, usids: {block: \"fcbb:0::/32\", ids: [100, e004]}}]\n",
		"routes: [{tenant: A, prefix: 198.18.2.0/24, usids: {block: \"fcbb:1::/20\", nf: 12, ids: [0, zz, 10000]}}]\n",
		"routes:\n  - tenant: A\n    prefix: 198.18.2.0/24\n    segs: [fc00::1, zz]\n",
		"sids: [{sid: \"fc00::zz\", action: End}]\n",
		"tenants: [{name: zz}]\nsids: [{sid: \"fc00::zz\", action: End}]\n",
		"x: &a \"fc00::zz\"\nsids: [{sid: *a}]\n",
		"domain: {locators: [\"198.18.0.0/15\"]}\n",
		"options: {nexthop_cache_ms: 99999999}\n",
		"tenants: [{name: A, ports: [{dev: ta, vlan: 5000}]}]\n",
		"tenants: [{name: A, ports: [{dev: ta, vlan: 70000}]}]\n",
		"unknown_key: 1\n",
		"routes: {a: b}\n",
		"a: &x [*x]\n",
		"sids: [{<<: 5}]\n",
		"sids:\n - <<: &x {sid: fc00::1, <<: *x}\n",
		"sids:\n - <<: &x {sid: fc00::1/zz, action: End}\n - <<: *x\n",
		"routes:\n - tenant: a\n   segs: [fc00::1, !!binary \"@@\"]\n",
		"routes:\n - tenant: a\n   hoplimit: !!int abc\n",
		"\t- x",
		"routes:\n - &r {tenant: a, segs: [" + strings.Repeat("fc00::1, ", 1000) + "]}\n" + strings.Repeat(" - *r\n", 3000),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := Parse(bytes.NewReader(data))
		if err != nil {
			checkWhere(t, data, err.Error())
			return
		}
		checkStable(t, st)
		if err := model.Validate(&st); err != nil {
			var es model.Errors
			if !errors.As(err, &es) || len(es) == 0 {
				t.Fatalf("validation error of type %T: %v", err, err)
			}
			for _, e := range es {
				var fe *model.FieldError
				if !errors.As(e, &fe) || !objectRE.MatchString(fe.Object) || !fieldRE.MatchString(fe.Field) {
					t.Fatalf("validation error names no object and field of the model: %q", e)
				}
			}
		}
	})
}

// checkWhere fails unless msg names a line of data (and the key path of a bad address or prefix).
func checkWhere(t *testing.T, data []byte, msg string) {
	if strings.Count(msg, "yaml: ") > 1 {
		t.Fatalf(`"yaml: " more than once: %q`, msg)
	}
	if msg == "yaml: "+excessiveAliasing { // the whole document's
		return
	}
	if !yamlLine.MatchString(msg) {
		t.Fatalf("YAML error names no line: %q", msg)
	}
	if netipErr.MatchString(msg) && !addrWhere.MatchString(msg) {
		t.Fatalf("bad address or prefix without the key path of an address or prefix: %q", msg)
	}
	// yaml.v3 counts \n, \r\n, \r, NEL, LS and PS as line breaks; the end of input may be one past.
	lines := 2 + bytes.Count(data, []byte("\n")) + bytes.Count(data, []byte("\r")) +
		bytes.Count(data, []byte("\u0085")) + bytes.Count(data, []byte("\u2028")) + bytes.Count(data, []byte("\u2029"))
	if n, _ := strconv.Atoi(lineNum.FindStringSubmatch(msg)[1]); n < 1 || n > lines {
		t.Fatalf("line %d of a %d-line input: %q", n, lines-1, msg)
	}
}

// checkStable: Marshal's output parses back, and encodes again to the same bytes.
func checkStable(t *testing.T, st model.State) {
	out, err := Marshal(st)
	if err != nil {
		t.Fatalf("Marshal: %v", err)
	}
	back, err := Parse(bytes.NewReader(out))
	if err != nil {
		t.Fatalf("Marshal's output does not parse: %v\n%s", err, out)
	}
	again, err := Marshal(back)
	if err != nil {
		t.Fatalf("Marshal of the re-parsed state: %v", err)
	}
	if !bytes.Equal(out, again) {
		t.Fatalf("re-encoding is not stable:\n%s\n---\n%s", out, again)
	}
}

// TestWhere pins the position of errors yaml.v3 gives without one (Parse finds the node by decoding
// along State's fields): the right line and key path, not the first scalar that quotes the same text.
func TestWhere(t *testing.T) {
	for in, want := range map[string]string{
		"tenants: [{name: zz}]\nsids: [{sid: \"fc00::zz\", action: End}]\n": `yaml: line 2: sids[0].sid: "fc00::zz" is not an address`,
		"x: &a \"fc00::zz\"\nsids:\n - sid: *a\n":                           `yaml: line 1: sids[0].sid: "fc00::zz" is not an address`, // the anchor holds the text
		"routes:\n - tenant: a\n   segs: [fc00::1, !!binary \"@@\"]\n":      "yaml: line 3: routes[0].segs[1]: !!binary",
		"routes:\n - tenant: a\n   hoplimit: !!int abc\n":                   "yaml: line 3: routes[0].hoplimit: cannot decode",
		"sids: [{<<: 5}]\n": "yaml: line 1: sids[0]: map merge",
		"domain:\n  locators:\n    - fc00::/48\n    - fc00::/129\n": `yaml: line 4: domain.locators[1]: "fc00::/129" is not a prefix`,
	} {
		if _, err := Parse(strings.NewReader(in)); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want %s...", in, err, want)
		}
	}
}
