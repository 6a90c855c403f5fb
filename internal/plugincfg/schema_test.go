package plugincfg

// schema_test.go: NewSchema: the keys of the test structs (names, types, help, offsets), Describe,
// a plugin without settings, and every layout it refuses, with the member path and the reason.

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/cilium/ebpf/btf"
)

func TestKeysFirewall(t *testing.T) {
	sc := mustSchema(t, firewallStruct())
	const rulesHelp = "firewall rules, first match"
	want := []Key{
		{Name: "min_ttl", Type: "u8 0..255", Help: "drop below this TTL", Required: true, Offset: 0, Size: 1},
		{Name: "count", Type: "u32 0..4294967295", Offset: 4, Size: 4},
	}
	for i := range uint32(4) {
		base := 8 + 28*i
		n := fmt.Sprintf("rules.%d.", i)
		want = append(want,
			Key{Name: n + "src", Type: "ipv4 prefix", Help: "source prefix", Offset: base, Size: 8},
			Key{Name: n + "dst", Type: "ipv4 prefix", Help: rulesHelp, Offset: base + 8, Size: 8},
			Key{Name: n + "dport_lo", Type: "port 0..65535", Help: rulesHelp, Offset: base + 16, Size: 2},
			Key{Name: n + "dport_hi", Type: "port 0..65535", Help: rulesHelp, Offset: base + 18, Size: 2},
			Key{Name: n + "proto", Type: "u8 0..255", Help: rulesHelp, Offset: base + 20, Size: 1},
			Key{Name: n + "action", Type: "enum action (allow, deny)", Help: rulesHelp, Offset: base + 24, Size: 4},
		)
	}
	want = append(want,
		Key{Name: "dflt", Type: "enum action (allow, deny)", Offset: 120, Size: 4},
		Key{Name: "via", Type: "policy name", Offset: 124, Size: 4},
		Key{Name: "tenant", Type: "tenant name", Offset: 128, Size: 4},
		Key{Name: "nh", Type: "ipv6 address", Offset: 132, Size: 16},
		Key{Name: "mac", Type: "mac address", Offset: 148, Size: 6},
	)
	if got := sc.Keys(); !reflect.DeepEqual(got, want) {
		t.Errorf("keys:\n%+v\nwant:\n%+v", got, want)
	}
	if sc.Size() != 156 {
		t.Errorf("size %d, want 156", sc.Size())
	}
}

func TestKeysKinds(t *testing.T) {
	sc := mustSchema(t, kindsStruct())
	want := []Key{
		{Name: "on", Type: "bool (true, false)", Offset: 0, Size: 1},
		{Name: "s8", Type: "s8 -128..127", Offset: 1, Size: 1},
		{Name: "s16", Type: "s16 -32768..32767", Offset: 2, Size: 2},
		{Name: "s32", Type: "s32 -2147483648..2147483647", Offset: 4, Size: 4},
		{Name: "s64", Type: "s64 -9223372036854775808..9223372036854775807", Offset: 8, Size: 8},
		{Name: "u64", Type: "u64 0..18446744073709551615", Offset: 16, Size: 8},
		{Name: "u16", Type: "u16 0..65535", Offset: 24, Size: 2},
		{Name: "port", Type: "port 0..65535", Offset: 26, Size: 2},
		{Name: "gw", Type: "ipv4 address", Offset: 28, Size: 4},
		{Name: "net6", Type: "ipv6 prefix", Offset: 32, Size: 20},
		{Name: "key.0", Type: "u8 0..255", Offset: 52, Size: 1},
		{Name: "key.1", Type: "u8 0..255", Offset: 53, Size: 1},
		{Name: "key.2", Type: "u8 0..255", Offset: 54, Size: 1},
		{Name: "mode", Type: "enum mode (mode_low, mode_off, mode_high)", Offset: 56, Size: 4},
		{Name: "a", Type: "u8 0..255", Offset: 60, Size: 1},
		{Name: "b", Type: "u8 0..255", Offset: 61, Size: 1},
		{Name: "grid.0.0", Type: "u16 0..65535", Offset: 62, Size: 2},
		{Name: "grid.0.1", Type: "u16 0..65535", Offset: 64, Size: 2},
		{Name: "grid.0.2", Type: "u16 0..65535", Offset: 66, Size: 2},
		{Name: "grid.1.0", Type: "u16 0..65535", Offset: 68, Size: 2},
		{Name: "grid.1.1", Type: "u16 0..65535", Offset: 70, Size: 2},
		{Name: "grid.1.2", Type: "u16 0..65535", Offset: 72, Size: 2},
		{Name: "cv", Type: "u32 0..4294967295", Offset: 76, Size: 4},
		{Name: "t2", Type: "tenant name", Offset: 80, Size: 4},
	}
	if got := sc.Keys(); !reflect.DeepEqual(got, want) {
		t.Errorf("keys:\n%+v\nwant:\n%+v", got, want)
	}
	if sc.Size() != 88 {
		t.Errorf("size %d, want 88", sc.Size())
	}
}

func TestDescribe(t *testing.T) {
	want := `struct seg6x_plugin_config (156 bytes), settings key=value:
  min_ttl                u8 0..255                  drop below this TTL (required)
  count                  u32 0..4294967295
  rules.{0..3}.src       ipv4 prefix                source prefix
  rules.{0..3}.dst       ipv4 prefix                firewall rules, first match
  rules.{0..3}.dport_lo  port 0..65535              firewall rules, first match
  rules.{0..3}.dport_hi  port 0..65535              firewall rules, first match
  rules.{0..3}.proto     u8 0..255                  firewall rules, first match
  rules.{0..3}.action    enum action (allow, deny)  firewall rules, first match
  dflt                   enum action (allow, deny)
  via                    policy name
  tenant                 tenant name
  nh                     ipv6 address
  mac                    mac address
`
	if got := mustSchema(t, firewallStruct()).Describe(); got != want {
		t.Errorf("Describe:\n%s\nwant:\n%s", got, want)
	}
}

func TestEmptyStruct(t *testing.T) {
	sc := mustSchema(t, st("seg6x_plugin_config", 0))
	if len(sc.Keys()) != 0 || sc.Size() != 0 {
		t.Errorf("keys %v, size %d: want none, 0", sc.Keys(), sc.Size())
	}
	b, err := sc.Encode(nil, nil)
	if err != nil || b == nil || len(b) != 0 {
		t.Errorf("Encode(nothing) = %v, %v; want empty bytes", b, err)
	}
	_, err = sc.Encode([]Setting{{"min_ttl", "5"}}, nil)
	wantErr(t, err, "unknown key min_ttl: this plugin has no settings")
	s, err := sc.Decode(make([]byte, 1024), nil)
	if err != nil || s != nil {
		t.Errorf("Decode = %v, %v; want nothing", s, err)
	}
	if got, want := sc.Describe(), "struct seg6x_plugin_config: no settings\n"; got != want {
		t.Errorf("Describe = %q, want %q", got, want)
	}
}

func TestEnumSizes(t *testing.T) {
	small := &btf.Enum{Name: "small", Size: 1, Values: []btf.EnumValue{{Name: "one", Value: 1}, {Name: "big", Value: 200}}}
	bare := &btf.Enum{Name: "bare", Size: 2, Signed: true}
	sc := mustSchema(t, st("seg6x_plugin_config", 4, m("e", small, 0), m("f", bare, 2)))
	want := []Key{
		{Name: "e", Type: "enum small (one, big)", Offset: 0, Size: 1},
		{Name: "f", Type: "enum bare -32768..32767", Offset: 2, Size: 2},
	}
	if got := sc.Keys(); !reflect.DeepEqual(got, want) {
		t.Errorf("keys:\n%+v\nwant:\n%+v", got, want)
	}
	b, err := sc.Encode([]Setting{{"e", "big"}, {"f", "-2"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := []byte{200, 0, 0xFE, 0xFF}; !reflect.DeepEqual(b, want) {
		t.Errorf("bytes % x, want % x", b, want)
	}
	_, err = sc.Encode([]Setting{{"f", "x"}}, nil)
	wantErr(t, err, "f=x: want an integer -32768..32767")
	_, err = sc.Encode([]Setting{{"g", "1"}}, nil)
	wantErr(t, err, "unknown key g; the keys: e, f")
}

// TestUnknownKeyListsCut: a struct with many members below one key lists ten of them.
func TestUnknownKeyListsCut(t *testing.T) {
	inner := st("inner", 12)
	for i := range uint32(12) {
		inner.Members = append(inner.Members, m(fmt.Sprintf("f%d", i), tdU8, i))
	}
	sc := mustSchema(t, st("seg6x_plugin_config", 24, m("x", arr(inner, 2), 0)))
	_, err := sc.Encode([]Setting{{"x", "1"}, {"x.2", "1"}, {"x.0", "1"}}, nil)
	want := "unknown key x: it has members; set them: x.{0..1}.f0, x.{0..1}.f1, x.{0..1}.f2, x.{0..1}.f3, x.{0..1}.f4, x.{0..1}.f5, x.{0..1}.f6, x.{0..1}.f7, x.{0..1}.f8, x.{0..1}.f9, ... (12 keys)\n" +
		"unknown key x.2: no such index; the keys: x.{0..1}.f0, x.{0..1}.f1, x.{0..1}.f2, x.{0..1}.f3, x.{0..1}.f4, x.{0..1}.f5, x.{0..1}.f6, x.{0..1}.f7, x.{0..1}.f8, x.{0..1}.f9, ... (12 keys)\n" +
		"unknown key x.0: it has members; set them: x.{0..1}.f0, x.{0..1}.f1, x.{0..1}.f2, x.{0..1}.f3, x.{0..1}.f4, x.{0..1}.f5, x.{0..1}.f6, x.{0..1}.f7, x.{0..1}.f8, x.{0..1}.f9, ... (12 keys)"
	if err == nil || err.Error() != want {
		t.Errorf("error:\n%v\nwant:\n%s", err, want)
	}
}

// TestSDKTypedefBySize: an SDK typedef is taken by its name and size, whatever it is made of; a
// member of an ordinary typedef of it is one too.
func TestSDKTypedefBySize(t *testing.T) {
	bytes4 := &btf.Typedef{Name: "seg6x_ipv4_t", Type: arr(tdU8, 4)}
	mine := &btf.Typedef{Name: "my_port", Type: &btf.Const{Type: tPort}}
	sc := mustSchema(t, st("seg6x_plugin_config", 8, m("gw", bytes4, 0), m("p", mine, 4)))
	want := []Key{
		{Name: "gw", Type: "ipv4 address", Offset: 0, Size: 4},
		{Name: "p", Type: "port 0..65535", Offset: 4, Size: 2},
	}
	if got := sc.Keys(); !reflect.DeepEqual(got, want) {
		t.Errorf("keys:\n%+v\nwant:\n%+v", got, want)
	}
	_, err := NewSchema(st("seg6x_plugin_config", 8, m("mac", &btf.Typedef{Name: "seg6x_mac_t", Type: &btf.Fwd{Name: "x"}}, 0)))
	wantErr(t, err, "member mac: seg6x_mac_t is 0 bytes here; the SDK's is 6")
}

func TestManyEnumNames(t *testing.T) {
	e := &btf.Enum{Name: "many", Size: 4}
	for i := range 12 {
		e.Values = append(e.Values, btf.EnumValue{Name: fmt.Sprintf("v%d", i), Value: uint64(i)})
	}
	sc := mustSchema(t, st("seg6x_plugin_config", 4, m("e", e, 0)))
	if got, want := sc.Keys()[0].Type, "enum many (v0, v1, v2, v3, v4, v5, v6, v7, v8, v9, ... (12 names))"; got != want {
		t.Errorf("type %q, want %q", got, want)
	}
}

// TestRefusals: each layout seg6x cannot write is refused, naming the member by its C path.
func TestRefusals(t *testing.T) {
	cyclic := &btf.Typedef{Name: "loop"}
	cyclic.Type = cyclic
	self := st("self", 4)
	self.Members = []btf.Member{m("me", self, 0)}
	bitfield := m("flags", tdU8, 0)
	bitfield.BitfieldSize = 3
	oddBit := btf.Member{Name: "odd", Type: tdU8, Offset: 3}
	nested := st("inner", 4, m("x", tdU8, 0), bitfield)
	nested.Members[1].Offset = 8
	for _, tc := range []struct {
		name string
		s    *btf.Struct
		want string
	}{
		{"bitfield", st("seg6x_plugin_config", 4, bitfield),
			"struct seg6x_plugin_config member flags: a bitfield (3 bits): seg6x writes whole bytes; make it an integer of its own"},
		{"bitfield in an array of structs", st("seg6x_plugin_config", 8, m("rules", arr(nested, 2), 0)),
			"struct seg6x_plugin_config member rules[].flags: a bitfield (3 bits)"},
		{"union", st("seg6x_plugin_config", 4, m("u", &btf.Union{Name: "u", Size: 4, Members: []btf.Member{m("a", tdU32, 0)}}, 0)),
			"struct seg6x_plugin_config member u: a union: seg6x cannot tell which of its members to write"},
		{"pointer", st("seg6x_plugin_config", 8, m("p", &btf.Pointer{Target: tdU8}, 0)),
			"struct seg6x_plugin_config member p: a pointer: a configuration holds values, not addresses"},
		{"float", st("seg6x_plugin_config", 4, m("f", &btf.Float{Name: "float", Size: 4}, 0)),
			"struct seg6x_plugin_config member f: a floating-point number: seg6x writes integers; scale it into one"},
		{"function", st("seg6x_plugin_config", 8, m("fn", &btf.FuncProto{Return: tS32}, 0)),
			"struct seg6x_plugin_config member fn: a function type"},
		{"void", st("seg6x_plugin_config", 4, m("v", &btf.Void{}, 0)),
			"struct seg6x_plugin_config member v: void (0 bytes)"},
		{"forward declaration", st("seg6x_plugin_config", 4, m("f", &btf.Fwd{Name: "later"}, 0)),
			"struct seg6x_plugin_config member f: an incomplete type (a forward declaration only)"},
		{"zero-length array", st("seg6x_plugin_config", 4, m("n", tdU32, 0), m("tail", arr(tdU8, 0), 4)),
			"struct seg6x_plugin_config member tail: an array of 0 elements: nothing to set"},
		{"empty nested struct", st("seg6x_plugin_config", 4, m("e", st("nothing", 0), 0)),
			"struct seg6x_plugin_config member e: an empty struct (0 bytes): nothing to set"},
		{"16-byte integer", st("seg6x_plugin_config", 16, m("wide", &btf.Int{Name: "__int128", Size: 16}, 0)),
			"struct seg6x_plugin_config member wide: a 16-byte integer: seg6x writes integers of 1, 2, 4 or 8 bytes"},
		{"3-byte enum", st("seg6x_plugin_config", 4, m("e", &btf.Enum{Name: "odd", Size: 3}, 0)),
			"struct seg6x_plugin_config member e: a 3-byte enum: seg6x writes enums of 1, 2, 4 or 8 bytes"},
		{"struct too large", st("seg6x_plugin_config", 1028, m("big", arr(tdU32, 257), 0)),
			"struct seg6x_plugin_config is 1028 bytes; a plugin's configuration is at most 1024 (SEG6X_PLUGIN_CFG_MAX)"},
		{"array too large", st("seg6x_plugin_config", 8, m("big", arr(tdU32, 1<<30), 0)),
			"struct seg6x_plugin_config member big: an array of 4294967296 bytes: a configuration is at most 1024"},
		{"nested struct too large", st("seg6x_plugin_config", 8, m("big", st("big", 2048), 0)),
			"struct seg6x_plugin_config member big: a struct of 2048 bytes: a configuration is at most 1024"},
		{"overlapping members", st("seg6x_plugin_config", 8, m("a", tdU32, 0), m("b", tdU32, 2)),
			"struct seg6x_plugin_config member b: at byte 2, inside the member before it (which ends at byte 4)"},
		{"member beyond the struct", st("seg6x_plugin_config", 4, m("a", tdU32, 2)),
			"struct seg6x_plugin_config member a: bytes 2..5, beyond the struct's 4 bytes"},
		{"not at a byte", st("seg6x_plugin_config", 4, oddBit),
			"struct seg6x_plugin_config member odd: at bit 3, not at a byte"},
		{"required array", st("seg6x_plugin_config", 4, m("ports", arr(tPort, 2), 0, "seg6x:required")),
			"struct seg6x_plugin_config member ports: seg6x:required marks a single value, not a struct or an array: tag the members below it"},
		{"unknown seg6x tag", st("seg6x_plugin_config", 1, m("x", tdU8, 0, "seg6x:requird")),
			`struct seg6x_plugin_config member x: unknown tag "seg6x:requird"; seg6x knows seg6x:help=TEXT and seg6x:required`},
		{"SDK typedef of another size", st("seg6x_plugin_config", 4, m("gw", &btf.Typedef{Name: "seg6x_ipv6_t", Type: tdU32}, 0)),
			"struct seg6x_plugin_config member gw: seg6x_ipv6_t is 4 bytes here; the SDK's is 16: rebuild the plugin with this seg6x's seg6x_plugin.h"},
		{"cyclic typedef", st("seg6x_plugin_config", 4, m("x", cyclic, 0)),
			"struct seg6x_plugin_config member x: typedefs and qualifiers nested too deeply (a cycle?)"},
		{"cyclic struct", st("seg6x_plugin_config", 4, m("x", self, 0)),
			"struct seg6x_plugin_config member x.me.me.me.me.me.me.me.me.me.me.me.me.me.me.me.me: nested more than 16 deep"},
		{"no type", st("seg6x_plugin_config", 4, m("x", nil, 0)),
			"struct seg6x_plugin_config member x: no type"},
		{"typed nil", st("seg6x_plugin_config", 4, m("x", (*btf.Int)(nil), 0)),
			"struct seg6x_plugin_config member x: no type"},
		{"not an identifier", st("seg6x_plugin_config", 4, m("a.b", tdU8, 0)),
			`struct seg6x_plugin_config member a.b: "a.b" is not a C identifier`},
		{"anonymous integer", st("seg6x_plugin_config", 4, m("", tdU8, 0)),
			"struct seg6x_plugin_config member (anonymous): a member without a name"},
		{"a name twice", st("seg6x_plugin_config", 2, m("a", tdU8, 0), m("", st("", 1, m("a", tdU8, 0)), 1)),
			"struct seg6x_plugin_config has two members named a"},
		{"anonymous struct", st("", 2000),
			"the configuration struct is 2000 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc, err := NewSchema(tc.s)
			if sc != nil {
				t.Errorf("got a schema: %+v", sc.Keys())
			}
			wantErr(t, err, tc.want)
		})
	}
}

// TestRefusalsAtOnce: every refused member is listed, one a line.
func TestRefusalsAtOnce(t *testing.T) {
	bitfield := m("flags", tdU8, 1)
	bitfield.BitfieldSize = 1
	_, err := NewSchema(st("seg6x_plugin_config", 16,
		m("ok", tdU8, 0), bitfield, m("p", &btf.Pointer{Target: tdU8}, 8)))
	want := "struct seg6x_plugin_config member flags: a bitfield (1 bits): seg6x writes whole bytes; make it an integer of its own\n" +
		"struct seg6x_plugin_config member p: a pointer: a configuration holds values, not addresses"
	if err == nil || err.Error() != want {
		t.Errorf("error:\n%v\nwant:\n%s", err, want)
	}
}

// TestTooManyTypes: members that each repeat a type far beyond the struct are refused after a
// bounded walk.
func TestTooManyTypes(t *testing.T) {
	var typ btf.Type = tdU8
	for range 4 {
		s := st("level", 1)
		for i := range uint32(64) {
			s.Members = append(s.Members, m(fmt.Sprintf("m%d", i), typ, i+1))
		}
		typ = s
	}
	_, err := NewSchema(st("seg6x_plugin_config", 1, m("top", typ, 0)))
	wantErr(t, err, "more than 65536 types to walk: not a configuration clang makes")
	if err == nil {
		return
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != maxRefusals+2 || !strings.HasPrefix(lines[maxRefusals+1], "(and ") {
		t.Errorf("%d lines, the last %q: want %d refusals, the walk's end and a count of the rest", len(lines), lines[len(lines)-1], maxRefusals)
	}
}

func TestNilStruct(t *testing.T) {
	_, err := NewSchema(nil)
	wantErr(t, err, "no configuration struct")
}

// wantErr fails unless err's text holds want.
func wantErr(t *testing.T, err error, want string) {
	t.Helper()
	if err == nil {
		t.Errorf("no error; want %q", want)
		return
	}
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error:\n%v\nwant it to hold:\n%s", err, want)
	}
}
