package config

// fuzz_test.go: `go test -fuzz FuzzParse ./internal/config/`: the YAML loader and the validation a
// config file goes through never panic, and every error says where the problem is: a YAML error
// names its line, a validation error names the object and field. `go test` runs the seeds.

import (
	"bytes"
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/seg6x/seg6x/internal/state"
)

// yamlWhere: a YAML error names the line (and, for a bad value, the key path: Parse adds both); a
// list of type errors names the line of each.
var yamlWhere = regexp.MustCompile(`^yaml: (line \d+: |unmarshal errors:(\n  line \d+: [^\n]*)+$)`)

func FuzzParse(f *testing.F) {
	if b, err := os.ReadFile("../fixtures/config.yaml"); err == nil {
		f.Add(b)
	}
	for _, s := range []string{
		"interfaces: [{name: fab, role: fabric}, {name: ta}]\ndomain: {locators: [\"fc00:1::/48\"], sources: [\"fc00::/16\"]}\n",
		"tenants:\n  - {name: A, table: 100, ports: [{dev: ta, vlan: 100}]}\nroutes:\n  - {tenant: A, prefix: 198.18.2.0/24, mode: encap.red, segs: [\"fc00:2::1\", \"fc00:3::a\"], src: \"fc00:1::1\"}\n",
		"sids:\n  - {sid: \"fc00:3::a\", action: End.DT4, tenant: A, vlan: 100}\n  - {sid: \"fc00:3::b\", action: End.DX4, nh4: 198.18.2.2, vlan: 200}\n",
		"interfaces: [{name: fab, role: sideways}]\n",
		"routes: [{tenant: A, prefix: 198.18.2.0/33, segs: []}]\n",
		"sids: [{sid: \"fc00::zz\", action: End}]\n",
		"domain: {locators: [\"198.18.0.0/15\"]}\n",
		"options: {nexthop_cache_ms: 99999999}\n",
		"tenants: [{name: A, ports: [{dev: ta, vlan: 5000}]}]\n",
		"unknown_key: 1\n",
		"routes: {a: b}\n",
		"\t- x",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := Parse(bytes.NewReader(data))
		if err != nil {
			if !yamlWhere.MatchString(err.Error()) {
				t.Fatalf("YAML error names no line: %q", err)
			}
			return
		}
		err = state.Validate(&st)
		if err == nil {
			return
		}
		var es state.Errors
		if !errors.As(err, &es) {
			t.Fatalf("validation error of type %T: %v", err, err)
		}
		for _, e := range es {
			var fe *state.FieldError
			if !errors.As(e, &fe) || strings.TrimSpace(fe.Object) == "" {
				t.Fatalf("validation error names no object: %q", e)
			}
		}
	})
}
