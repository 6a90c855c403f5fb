// Package plugincfg turns a plugin SID's settings (key=value) into the bytes of the plugin's struct
// seg6x_plugin_config, at the offsets its BTF gives, and those bytes back into settings
// (bpf/sdk/seg6x/seg6x_plugin.h). It reads types only: loading plugins is internal/dataplane's.
package plugincfg

// schema.go: a plugin configuration's schema: its keys (Key), what each one takes, and NewSchema,
// which reads them from the struct's BTF (walk.go).

import (
	"errors"
	"fmt"

	"github.com/cilium/ebpf/btf"
)

// MaxSize is the largest configuration in bytes (SEG6X_PLUGIN_CFG_MAX).
const MaxSize = 1024

// Key is one setting of a plugin: a single value somewhere in the struct.
type Key struct {
	Name     string // min_ttl, rules.3.dport, mac
	Type     string // what it takes: "u8 0..255", "ipv4 address", "enum action (allow, deny)"
	Help     string // the member's seg6x:help tag
	Required bool   // the member's seg6x:required tag: every configuration sets it
	Offset   uint32 // its bytes in the struct
	Size     uint32
}

// Schema is the layout of one plugin's struct seg6x_plugin_config.
type Schema struct {
	name   string // struct seg6x_plugin_config
	size   uint32
	leaves []leaf         // in struct order
	index  map[string]int // leaves by key name
	groups []group        // leaves that differ only in array indexes, in struct order
}

// kind is how a leaf's text becomes bytes.
type kind int

const (
	kindInt     kind = iota // little-endian integer of 1, 2, 4 or 8 bytes
	kindBool                // a 1-byte BTF bool: true, false or 0..255
	kindEnum                // an enum: a name or a number
	kindIPv4                // seg6x_ipv4_t
	kindIPv6                // seg6x_ipv6_t
	kindPrefix4             // seg6x_prefix4_t
	kindPrefix6             // seg6x_prefix6_t
	kindMAC                 // seg6x_mac_t
	kindPort                // seg6x_port_t
	kindPolicy              // seg6x_policy_t
	kindTenant              // seg6x_tenant_t
)

// sdkType is one of the SDK's typedefs, recognized by name before looking through it.
type sdkType struct {
	kind kind
	size uint32
	desc string
}

var sdkTypes = map[string]sdkType{
	"seg6x_ipv4_t":    {kindIPv4, 4, "ipv4 address"},
	"seg6x_ipv6_t":    {kindIPv6, 16, "ipv6 address"},
	"seg6x_prefix4_t": {kindPrefix4, 8, "ipv4 prefix"},
	"seg6x_prefix6_t": {kindPrefix6, 20, "ipv6 prefix"},
	"seg6x_mac_t":     {kindMAC, 6, "mac address"},
	"seg6x_port_t":    {kindPort, 2, "port 0..65535"},
	"seg6x_policy_t":  {kindPolicy, 4, "policy name"},
	"seg6x_tenant_t":  {kindTenant, 4, "tenant name"},
}

// leaf is one key and how to write it.
type leaf struct {
	Key
	kind    kind
	signed  bool      // kindInt, kindEnum
	enum    *btf.Enum // kindEnum
	pattern string    // the name with each array index as {0..N-1}: rules.{0..3}.dport
	norm    string    // the name with each array index as N: rules.N.dport
}

// group is the keys of one member path, across array indexes.
type group struct {
	pattern string // rules.{0..3}.dport
	norm    string // rules.N.dport: the pattern with every index as N
	first   int    // its first leaf
}

// NewSchema reads the keys of a plugin's configuration struct. An error lists the members it
// refuses (the first 20, then how many more), each by its C path (rules[].flags) and why.
func NewSchema(s *btf.Struct) (*Schema, error) {
	if s == nil {
		return nil, errors.New("no configuration struct")
	}
	name := "struct " + s.Name
	if s.Name == "" {
		name = "the configuration struct"
	}
	if s.Size > MaxSize {
		return nil, fmt.Errorf("%s is %d bytes; a plugin's configuration is at most %d (SEG6X_PLUGIN_CFG_MAX)", name, s.Size, MaxSize)
	}
	sc := &Schema{name: name, size: s.Size, index: map[string]int{}}
	if s.Size == 0 && len(s.Members) == 0 {
		return sc, nil // a plugin without settings
	}
	w := &walker{}
	leaves, _, _ := w.fields(s, "", 0)
	if len(w.errs) == 0 {
		sc.leaves = leaves
		sc.collect(w)
	}
	if len(w.errs) > 0 {
		errs := make([]error, len(w.errs))
		for i, e := range w.errs {
			errs[i] = fmt.Errorf("%s %w", name, e)
		}
		if w.more > 0 {
			errs = append(errs, fmt.Errorf("(and %d more)", w.more))
		}
		return nil, errors.Join(errs...)
	}
	return sc, nil
}

// collect indexes the leaves by name and groups them; a name twice (only hand-made BTF has that)
// is an error.
func (sc *Schema) collect(w *walker) {
	groups := map[string]int{}
	for i, l := range sc.leaves {
		if _, dup := sc.index[l.Name]; dup {
			w.errs = append(w.errs, fmt.Errorf("has two members named %s", l.Name))
			continue
		}
		sc.index[l.Name] = i
		if _, ok := groups[l.pattern]; !ok {
			groups[l.pattern] = len(sc.groups)
			sc.groups = append(sc.groups, group{pattern: l.pattern, norm: l.norm, first: i})
		}
	}
}

// Keys lists the keys in struct order, every array index its own.
func (sc *Schema) Keys() []Key {
	keys := make([]Key, len(sc.leaves))
	for i, l := range sc.leaves {
		keys[i] = l.Key
	}
	return keys
}

// Size is the struct's size in bytes: the length of what Encode returns.
func (sc *Schema) Size() uint32 { return sc.size }
