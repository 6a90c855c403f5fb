package plugincfg

// types_test.go: the BTF the tests build by hand, laid out as clang lays out testdata/firewall.c
// and testdata/kinds.c for BPF (clang_test.go checks that), and a resolver and namer of names.

import (
	"fmt"
	"testing"

	"github.com/cilium/ebpf/btf"
)

var (
	tU8   = &btf.Int{Name: "unsigned char", Size: 1}
	tS8   = &btf.Int{Name: "signed char", Size: 1, Encoding: btf.Signed}
	tU16  = &btf.Int{Name: "unsigned short", Size: 2}
	tS16  = &btf.Int{Name: "short", Size: 2, Encoding: btf.Signed}
	tU32  = &btf.Int{Name: "unsigned int", Size: 4}
	tS32  = &btf.Int{Name: "int", Size: 4, Encoding: btf.Signed}
	tU64  = &btf.Int{Name: "unsigned long long", Size: 8}
	tS64  = &btf.Int{Name: "long long", Size: 8, Encoding: btf.Signed}
	tBool = &btf.Int{Name: "_Bool", Size: 1, Encoding: btf.Bool}
	tIdx  = &btf.Int{Name: "__ARRAY_SIZE_TYPE__", Size: 4}

	tdU8   = &btf.Typedef{Name: "__u8", Type: tU8}
	tdU16  = &btf.Typedef{Name: "__u16", Type: tU16}
	tdU32  = &btf.Typedef{Name: "__u32", Type: tU32}
	tdBE16 = &btf.Typedef{Name: "__be16", Type: tdU16}
	tdBE32 = &btf.Typedef{Name: "__be32", Type: tdU32}

	tIPv4    = &btf.Typedef{Name: "seg6x_ipv4_t", Type: tdBE32}
	tIPv6    = &btf.Typedef{Name: "seg6x_ipv6_t", Type: st("", 16, m("addr", arr(tdU8, 16), 0))}
	tPrefix4 = &btf.Typedef{Name: "seg6x_prefix4_t", Type: st("", 8,
		m("addr", tdBE32, 0), m("len", tdU8, 4), m("pad", arr(tdU8, 3), 5))}
	tPrefix6 = &btf.Typedef{Name: "seg6x_prefix6_t", Type: st("", 20,
		m("addr", arr(tdU8, 16), 0), m("len", tdU8, 16), m("pad", arr(tdU8, 3), 17))}
	tMAC    = &btf.Typedef{Name: "seg6x_mac_t", Type: st("", 6, m("addr", arr(tdU8, 6), 0))}
	tPort   = &btf.Typedef{Name: "seg6x_port_t", Type: tdBE16}
	tPolicy = &btf.Typedef{Name: "seg6x_policy_t", Type: tdU32}
	tTenant = &btf.Typedef{Name: "seg6x_tenant_t", Type: tdU32}

	tAction = &btf.Enum{Name: "action", Size: 4, Values: []btf.EnumValue{{Name: "allow", Value: 0}, {Name: "deny", Value: 1}}}
)

// m is a member at byte off.
func m(name string, t btf.Type, off uint32, tags ...string) btf.Member {
	return btf.Member{Name: name, Type: t, Offset: btf.Bits(off * 8), Tags: tags}
}

func st(name string, size uint32, members ...btf.Member) *btf.Struct {
	return &btf.Struct{Name: name, Size: size, Members: members}
}

func arr(t btf.Type, n uint32) *btf.Array {
	return &btf.Array{Type: t, Index: tIdx, Nelems: n}
}

// firewallStruct is testdata/firewall.c's struct seg6x_plugin_config (156 bytes).
func firewallStruct() *btf.Struct {
	rule := st("rule", 28,
		m("src", tPrefix4, 0, "seg6x:help=source prefix"),
		m("dst", tPrefix4, 8),
		m("dport_lo", tPort, 16),
		m("dport_hi", tPort, 18),
		m("proto", tdU8, 20),
		m("action", tAction, 24),
	)
	return st("seg6x_plugin_config", 156,
		m("min_ttl", tdU8, 0, "seg6x:help=drop below this TTL", "seg6x:required"),
		m("count", tdU32, 4),
		m("rules", arr(rule, 4), 8, "seg6x:help=firewall rules, first match"),
		m("dflt", tAction, 120),
		m("via", tPolicy, 124),
		m("tenant", tTenant, 128),
		m("nh", tIPv6, 132),
		m("mac", tMAC, 148),
	)
}

// kindsStruct is testdata/kinds.c's struct seg6x_plugin_config (88 bytes): every other kind.
func kindsStruct() *btf.Struct {
	mode := &btf.Enum{Name: "mode", Size: 4, Signed: true, Values: []btf.EnumValue{
		{Name: "mode_low", Value: 0xFFFFFFFFFFFFFFFE}, {Name: "mode_off", Value: 0}, {Name: "mode_high", Value: 7}}}
	return st("seg6x_plugin_config", 88,
		m("on", tBool, 0),
		m("s8", &btf.Typedef{Name: "__s8", Type: tS8}, 1),
		m("s16", &btf.Typedef{Name: "__s16", Type: tS16}, 2),
		m("s32", &btf.Typedef{Name: "__s32", Type: tS32}, 4),
		m("s64", &btf.Typedef{Name: "__s64", Type: tS64}, 8),
		m("u64", &btf.Typedef{Name: "__u64", Type: tU64}, 16),
		m("u16", tdU16, 24),
		m("port", tPort, 26),
		m("gw", tIPv4, 28),
		m("net6", tPrefix6, 32),
		m("key", arr(tdU8, 3), 52),
		m("mode", mode, 56),
		m("", st("", 2, m("a", tdU8, 0), m("b", tdU8, 1)), 60),
		m("grid", arr(arr(tdU16, 3), 2), 62),
		m("cv", &btf.Const{Type: &btf.Volatile{Type: tdU32}}, 76),
		m("t2", tTenant, 80),
	)
}

func mustSchema(t testing.TB, s *btf.Struct) *Schema {
	t.Helper()
	sc, err := NewSchema(s)
	if err != nil {
		t.Fatalf("NewSchema: %v", err)
	}
	return sc
}

// names resolves and names policies and tenants from fixed tables.
type names struct{}

var (
	testPolicies = map[string]uint32{"red": 7, "blue": 9}
	testTenants  = map[string]uint32{"blue": 100, "green": 200}
)

func (names) Policy(name string) (uint32, error) {
	if id, ok := testPolicies[name]; ok {
		return id, nil
	}
	return 0, fmt.Errorf("no policy %s", name)
}

func (names) Tenant(name string) (uint32, error) {
	if id, ok := testTenants[name]; ok {
		return id, nil
	}
	return 0, fmt.Errorf("no tenant %s", name)
}

func (names) PolicyName(id uint32) string { return nameOf(testPolicies, id) }
func (names) TenantName(id uint32) string { return nameOf(testTenants, id) }

func nameOf(table map[string]uint32, id uint32) string {
	for name, v := range table {
		if v == id {
			return name
		}
	}
	return ""
}
