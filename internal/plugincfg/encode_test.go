package plugincfg

// encode_test.go: Encode writes each kind's bytes at its offset (compared with bytes written by
// hand), refuses bad settings with the key, the value and what it wants, all of them at once, and
// ParseSettings splits key=value words.

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

func TestEncodeFirewall(t *testing.T) {
	sc := mustSchema(t, firewallStruct())
	got, err := sc.Encode([]Setting{
		{"min_ttl", "5"},
		{"count", "0x01020304"},
		{"rules.1.src", "198.18.0.0/15"},
		{"rules.1.dport_lo", "22"},
		{"rules.1.dport_hi", "0x1bb"},
		{"rules.1.proto", "6"},
		{"rules.1.action", "deny"},
		{"rules.3.dst", "0.0.0.0/0"},
		{"rules.3.action", "1"},
		{"dflt", "deny"},
		{"via", "red"},
		{"tenant", "blue"},
		{"nh", "2001:db8::1"},
		{"mac", "02:00:00:00:00:0a"},
	}, names{})
	if err != nil {
		t.Fatal(err)
	}
	want := make([]byte, 156)
	want[0] = 5                                      // min_ttl
	copy(want[4:], []byte{0x04, 0x03, 0x02, 0x01})   // count, little-endian
	copy(want[36:], []byte{198, 18, 0, 0, 15})       // rules[1].src: address in network order, len
	copy(want[52:], []byte{0x00, 0x16, 0x01, 0xbb})  // rules[1].dport_lo 22, dport_hi 443, network order
	want[56] = 6                                     // rules[1].proto
	copy(want[60:], []byte{1, 0, 0, 0})              // rules[1].action deny
	copy(want[116:], []byte{1, 0, 0, 0})             // rules[3].action 1; rules[3].dst 0.0.0.0/0 is zero
	copy(want[120:], []byte{1, 0, 0, 0})             // dflt deny
	copy(want[124:], []byte{7, 0, 0, 0})             // via: policy red's id 7
	copy(want[128:], []byte{100, 0, 0, 0})           // tenant: blue's table 100
	copy(want[132:], []byte{0x20, 0x01, 0x0d, 0xb8}) // nh 2001:db8::1
	want[147] = 1                                    // ... its last byte
	copy(want[148:], []byte{0x02, 0, 0, 0, 0, 0x0a}) // mac
	if !bytes.Equal(got, want) {
		t.Errorf("bytes:\n% x\nwant:\n% x", got, want)
	}
}

func TestEncodeKinds(t *testing.T) {
	sc := mustSchema(t, kindsStruct())
	for _, tc := range []struct {
		key, value string
		off        int
		want       []byte
	}{
		{"on", "true", 0, []byte{1}},
		{"on", "false", 0, []byte{0}},
		{"on", "7", 0, []byte{7}},
		{"s8", "-128", 1, []byte{0x80}},
		{"s8", "127", 1, []byte{0x7f}},
		{"s8", "-0x1", 1, []byte{0xff}},
		{"s16", "-2", 2, []byte{0xfe, 0xff}},
		{"s32", "-2147483648", 4, []byte{0, 0, 0, 0x80}},
		{"s64", "-9223372036854775808", 8, []byte{0, 0, 0, 0, 0, 0, 0, 0x80}},
		{"s64", "9223372036854775807", 8, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}},
		{"u64", "18446744073709551615", 16, bytes.Repeat([]byte{0xff}, 8)},
		{"u64", "0xFFFFFFFFFFFFFFFF", 16, bytes.Repeat([]byte{0xff}, 8)},
		{"u16", "010", 24, []byte{10, 0}}, // decimal, not octal
		{"u16", "-0", 24, []byte{0, 0}},
		{"port", "443", 26, []byte{0x01, 0xbb}},
		{"port", "65535", 26, []byte{0xff, 0xff}},
		{"gw", "198.18.1.2", 28, []byte{198, 18, 1, 2}},
		{"net6", "2001:db8::/32", 32, []byte{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 32, 0, 0, 0}},
		{"net6", "::ffff:198.18.0.0/111", 32, []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 198, 18, 0, 0, 111, 0, 0, 0}},
		{"key.1", "0xab", 53, []byte{0xab}},
		{"mode", "mode_low", 56, []byte{0xfe, 0xff, 0xff, 0xff}},
		{"mode", "mode_high", 56, []byte{7, 0, 0, 0}},
		{"mode", "-3", 56, []byte{0xfd, 0xff, 0xff, 0xff}},
		{"a", "1", 60, []byte{1}},
		{"b", "2", 61, []byte{2}},
		{"grid.1.2", "0x1234", 72, []byte{0x34, 0x12}},
		{"cv", "4294967295", 76, []byte{0xff, 0xff, 0xff, 0xff}},
		{"t2", "green", 80, []byte{200, 0, 0, 0}},
		{"t2", "", 80, []byte{0, 0, 0, 0}},
	} {
		t.Run(tc.key+"="+tc.value, func(t *testing.T) {
			got, err := sc.Encode([]Setting{{tc.key, tc.value}}, names{})
			if err != nil {
				t.Fatal(err)
			}
			want := make([]byte, 88)
			copy(want[tc.off:], tc.want)
			if !bytes.Equal(got, want) {
				t.Errorf("bytes:\n% x\nwant:\n% x", got, want)
			}
		})
	}
}

// TestEncodeRefusals: each error names the key, the value and what the key wants.
func TestEncodeRefusals(t *testing.T) {
	fw := mustSchema(t, firewallStruct())
	kinds := mustSchema(t, kindsStruct())
	for _, tc := range []struct {
		sc       *Schema
		settings string // words key=value; min_ttl=1 is added for the firewall when they lack it
		want     string
	}{
		{fw, "min_ttl=300", "min_ttl=300: want an integer 0..255"},
		{fw, "min_ttl=-1", "min_ttl=-1: want an integer 0..255"},
		{fw, "min_ttl=+5", "min_ttl=+5: want an integer 0..255"},
		{fw, "min_ttl=1_0", "min_ttl=1_0: want an integer 0..255"},
		{fw, "min_ttl=0x", "min_ttl=0x: want an integer 0..255"},
		{fw, "min_ttl=0b1", "min_ttl=0b1: want an integer 0..255"},
		{fw, "min_ttl=ten", "min_ttl=ten: want an integer 0..255"},
		{fw, "count=", `count="": want an integer 0..4294967295`},
		{fw, "count=0x100000000", "count=0x100000000: want an integer 0..4294967295"},
		{fw, "min_ttl=5 min_ttl=6", "min_ttl given twice (min_ttl=5, min_ttl=6): once only"},
		{fw, "min_tll=5", "unknown key min_tll; the closest keys: min_ttl, count, dflt, via, tenant, nh, mac, rules.{0..3}.src, rules.{0..3}.dst, rules.{0..3}.proto (of 13)"},
		{fw, "rules.4.dport_lo=22", "unknown key rules.4.dport_lo: no such index; the keys: rules.{0..3}.dport_lo"},
		{fw, "rules.x.src=1.0.0.0/8", "unknown key rules.x.src; the closest keys: rules.{0..3}.src"},
		{fw, "rules.9=1", "unknown key rules.9: no such index; the keys: rules.{0..3}.src, rules.{0..3}.dst, rules.{0..3}.dport_lo, rules.{0..3}.dport_hi, rules.{0..3}.proto, rules.{0..3}.action"},
		{fw, "rules.0=1", "unknown key rules.0: it has members; set them: rules.0.src, rules.0.dst, rules.0.dport_lo, rules.0.dport_hi, rules.0.proto, rules.0.action"},
		{fw, "rules=1", "unknown key rules: it has members; set them: rules.{0..3}.src, rules.{0..3}.dst, rules.{0..3}.dport_lo, rules.{0..3}.dport_hi, rules.{0..3}.proto, rules.{0..3}.action"},
		{fw, "rules.0.src=198.18.1.0/15", "rules.0.src=198.18.1.0/15: the address has bits set beyond the prefix length /15: the prefix is 198.18.0.0/15"},
		{fw, "rules.0.src=198.18.0.0", "rules.0.src=198.18.0.0: want an IPv4 prefix such as 198.18.0.0/15"},
		{fw, "rules.0.src=198.18.0.0/33", "rules.0.src=198.18.0.0/33: want an IPv4 prefix such as 198.18.0.0/15"},
		{fw, "rules.0.dst=2001:db8::/32", "rules.0.dst=2001:db8::/32: want an IPv4 prefix such as 198.18.0.0/15"},
		{fw, "rules.0.dport_lo=65536", "rules.0.dport_lo=65536: want a port 0..65535"},
		{fw, "rules.0.dport_lo=ssh", "rules.0.dport_lo=ssh: want a port 0..65535"},
		{fw, "rules.0.action=maybe", "rules.0.action=maybe: want one of allow, deny or an integer 0..4294967295"},
		{fw, "rules.0.action=Deny", "rules.0.action=Deny: want one of allow, deny or an integer 0..4294967295"},
		{fw, "nh=198.18.1.2", "nh=198.18.1.2: want an IPv6 address such as 2001:db8::1"},
		{fw, "nh=fe80::1%eth0", "nh=fe80::1%eth0: want an IPv6 address such as 2001:db8::1"},
		{fw, "nh=2001:db8::zz", "nh=2001:db8::zz: want an IPv6 address such as 2001:db8::1"},
		{fw, "mac=02:00:00:00:00", "mac=02:00:00:00:00: want a MAC address such as 02:00:00:00:00:01"},
		{fw, "mac=02:00:00:00:00:00:00:01", "mac=02:00:00:00:00:00:00:01: want a MAC address such as 02:00:00:00:00:01"},
		{fw, "via=green", "via=green: no policy green"},
		{fw, "tenant=red", "tenant=red: no tenant red"},
		{kinds, "gw=2001:db8::1", "gw=2001:db8::1: want an IPv4 address such as 198.18.1.2"},
		{kinds, "gw=::ffff:198.18.1.2", "gw=::ffff:198.18.1.2: want an IPv4 address such as 198.18.1.2"},
		{kinds, "net6=198.18.0.0/15", "net6=198.18.0.0/15: want an IPv6 prefix such as 2001:db8::/32"},
		{kinds, "net6=2001:db8::1/32", "net6=2001:db8::1/32: the address has bits set beyond the prefix length /32: the prefix is 2001:db8::/32"},
		{kinds, "on=yes", "on=yes: want true, false or an integer 0..255"},
		{kinds, "on=256", "on=256: want true, false or an integer 0..255"},
		{kinds, "s8=128", "s8=128: want an integer -128..127"},
		{kinds, "s8=-129", "s8=-129: want an integer -128..127"},
		{kinds, "s8=0xff", "s8=0xff: want an integer -128..127"},
		{kinds, "s64=9223372036854775808", "s64=9223372036854775808: want an integer -9223372036854775808..9223372036854775807"},
		{kinds, "s64=-9223372036854775809", "s64=-9223372036854775809: want an integer -9223372036854775808..9223372036854775807"},
		{kinds, "u64=18446744073709551616", "u64=18446744073709551616: want an integer 0..18446744073709551615"},
		{kinds, "mode=mode_mid", "mode=mode_mid: want one of mode_low, mode_off, mode_high or an integer -2147483648..2147483647"},
		{kinds, "key=1", "unknown key key: it has members; set them: key.0, key.1, key.2"},
		{kinds, "grid.2.0=1", "unknown key grid.2.0: no such index; the keys: grid.{0..1}.{0..2}"},
		{kinds, "Cv=1", "unknown key Cv; the closest keys: cv, on, s8, gw, a, b, t2, s16, s32, s64 (of 17)"},
		{kinds, "s8=\x01", `s8="\x01": want an integer -128..127`},
		{kinds, "s8=" + strings.Repeat("9", 100), `s8=9999999999999999999999999999999999999999999999999999999999999999...: want an integer -128..127`},
	} {
		t.Run(tc.settings, func(t *testing.T) {
			settings := words(tc.settings)
			if tc.sc == fw && !strings.HasPrefix(tc.settings, "min_ttl=") {
				settings = append([]Setting{{"min_ttl", "1"}}, settings...)
			}
			b, err := tc.sc.Encode(settings, names{})
			if b != nil {
				t.Errorf("got bytes % x", b)
			}
			wantErr(t, err, tc.want)
		})
	}
}

// words splits "k=v k=v".
func words(s string) []Setting {
	var out []Setting
	for _, w := range strings.Split(s, " ") {
		k, v, _ := strings.Cut(w, "=")
		out = append(out, Setting{k, v})
	}
	return out
}

// TestEncodeOddKey: a key with a space or a control character is quoted in the error.
func TestEncodeOddKey(t *testing.T) {
	sc := mustSchema(t, kindsStruct())
	_, err := sc.Encode([]Setting{{"x y", "1"}, {"\n", "2"}}, nil)
	wantErr(t, err, "unknown key \"x y\"; the closest keys: ")
	wantErr(t, err, "unknown key \"\\n\"; the closest keys: ")
}

// TestEncodeAllErrorsAtOnce: every problem of the settings in one error, one a line, in order.
func TestEncodeAllErrorsAtOnce(t *testing.T) {
	sc := mustSchema(t, firewallStruct())
	_, err := sc.Encode([]Setting{
		{"count", "-1"}, {"mac", "zz"}, {"count", "2"}, {"colour", "red"}, {"via", "red"}, {"nh", "::1"},
	}, names{})
	want := strings.Join([]string{
		"count=-1: want an integer 0..4294967295",
		"mac=zz: want a MAC address such as 02:00:00:00:00:01",
		"count given twice (count=-1, count=2): once only",
		"unknown key colour; the closest keys: count, dflt, via, tenant, nh, mac, min_ttl, rules.{0..3}.src, rules.{0..3}.dst, rules.{0..3}.proto (of 13)",
		"min_ttl is required (u8 0..255)",
	}, "\n")
	if err == nil || err.Error() != want {
		t.Errorf("error:\n%v\nwant:\n%s", err, want)
	}
}

func TestEncodeWithoutResolver(t *testing.T) {
	sc := mustSchema(t, firewallStruct())
	_, err := sc.Encode([]Setting{{"min_ttl", "1"}, {"via", "red"}, {"tenant", "blue"}}, nil)
	want := "via=red: no policy names to look it up in here\ntenant=blue: no tenant names to look it up in here"
	if err == nil || err.Error() != want {
		t.Errorf("error:\n%v\nwant:\n%s", err, want)
	}
	// none named: no resolver needed
	b, err := sc.Encode([]Setting{{"min_ttl", "1"}, {"via", ""}, {"tenant", ""}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want2 := make([]byte, 156)
	want2[0] = 1
	if !bytes.Equal(b, want2) {
		t.Errorf("bytes % x, want % x", b, want2)
	}
}

func TestParseSettings(t *testing.T) {
	got, err := ParseSettings([]string{"min_ttl=5", "rules.0.dport_lo=22", "via=", "x==y", "nh=a=b"})
	if err != nil {
		t.Fatal(err)
	}
	want := []Setting{{"min_ttl", "5"}, {"rules.0.dport_lo", "22"}, {"via", ""}, {"x", "=y"}, {"nh", "a=b"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("settings %q, want %q", got, want)
	}
	got, err = ParseSettings(nil)
	if err != nil || len(got) != 0 {
		t.Errorf("ParseSettings(nil) = %q, %v; want nothing", got, err)
	}
	_, err = ParseSettings([]string{"min_ttl", "=5", "ok=1", ""})
	wantLines := "min_ttl: want key=value\n=5: no key before '='\n\"\": want key=value"
	if err == nil || err.Error() != wantLines {
		t.Errorf("error:\n%v\nwant:\n%s", err, wantLines)
	}
}
