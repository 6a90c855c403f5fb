package config

// words.go: yaml.v3's decoding errors in the words of the file rather than of Go ("field colour not
// found in type model.Tenant", "cannot unmarshal !!str `abc` into uint32"): the key that is unknown
// with the keys that are known, the value that does not fit with what would.

import (
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strings"

	"github.com/seg6x/seg6x/internal/model"
)

// nouns name the model's types as a file's reader knows them.
var nouns = map[string]string{
	"State": "the file", "Options": "options", "Domain": "domain", "Interface": "an interface", "Tenant": "a tenant",
	"Port": "a port", "Route": "a route", "SID": "a sid", "BGP": "bgp", "GracefulRestart": "graceful_restart",
	"Neighbor": "a bgp neighbor", "VPN": "vpn", "Policy": "a policy", "SegList": "a policy's segment list",
	"USIDList": "usids",
}

// plurals name lists of the model's types.
var plurals = map[string]string{"Interface": "interfaces", "Tenant": "tenants", "Port": "ports", "Route": "routes",
	"SID": "sids", "Neighbor": "bgp neighbors", "Policy": "policies", "SegList": "segment lists"}

// modelTypes are the struct types reachable from State, by Go name.
var modelTypes = func() map[string]reflect.Type {
	out := map[string]reflect.Type{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || out[t.Name()] != nil || t.PkgPath() != reflect.TypeOf(model.State{}).PkgPath() {
			return
		}
		out[t.Name()] = t
		for _, ft := range yamlFields(t) {
			walk(ft)
		}
	}
	walk(reflect.TypeOf(model.State{}))
	return out
}()

var (
	// netip's errors: netip.ParsePrefix("p"): ParseAddr("a"): why, or ParseAddr("a"): why.
	badPrefix    = regexp.MustCompile(`netip\.ParsePrefix\(("[^"]*")\): (?:ParseAddr\("[^"]*"\): )?`)
	badAddr      = regexp.MustCompile(`ParseAddr\(("[^"]*")\): `)
	unknownField = regexp.MustCompile(`field (\S+) not found in type model\.(\w+)`)
	cannotDecode = regexp.MustCompile("cannot unmarshal !!(\\w+)(?: `([^`]*)`)? into (\\S+)")
)

// inWords rewrites the Go-worded parts of a decoding error message.
func inWords(msg string) string {
	msg = badPrefix.ReplaceAllString(msg, "$1 is not a prefix: ")
	msg = badAddr.ReplaceAllString(msg, "$1 is not an address: ")
	msg = unknownField.ReplaceAllStringFunc(msg, func(m string) string {
		p := unknownField.FindStringSubmatch(m)
		t, ok := modelTypes[p[2]]
		if !ok {
			return fmt.Sprintf("unknown key %s", p[1])
		}
		var keys []string
		for k := range yamlFields(t) {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		return fmt.Sprintf("unknown key %s (%s has: %s)", p[1], noun(p[2]), strings.Join(keys, ", "))
	})
	return cannotDecode.ReplaceAllStringFunc(msg, func(m string) string {
		p := cannotDecode.FindStringSubmatch(m)
		what := "a " + map[string]string{"str": "string", "int": "number", "float": "number", "bool": "boolean",
			"map": "mapping", "seq": "list", "null": "null"}[p[1]]
		if p[2] != "" {
			what = p[2]
		}
		return fmt.Sprintf("%s is not %s", what, wanted(p[3]))
	})
}

func noun(goName string) string {
	if n, ok := nouns[goName]; ok {
		return n
	}
	return strings.ToLower(goName)
}

// wanted names what a Go type takes in a file.
func wanted(goType string) string {
	if elem, ok := strings.CutPrefix(goType, "[]"); ok {
		if name, ok := strings.CutPrefix(elem, "model."); ok {
			if pl, ok := plurals[name]; ok {
				return "a list of " + pl
			}
		}
		return "a list"
	}
	if name, ok := strings.CutPrefix(goType, "model."); ok {
		return noun(name) + " (a mapping)"
	}
	switch goType {
	case "netip.Addr":
		return "an address"
	case "netip.Prefix":
		return "a prefix"
	case "uint8":
		return "an integer from 0 to 255"
	case "uint16":
		return "an integer from 0 to 65535"
	case "uint32":
		return "an integer from 0 to 4294967295"
	case "uint64", "uint":
		return "an integer of 0 or more"
	case "int", "int8", "int16", "int32", "int64":
		return "an integer"
	case "bool":
		return "true or false"
	case "string":
		return "a string"
	}
	return "what this key takes"
}
