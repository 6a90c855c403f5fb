package plugincfg

// decode_test.go: Decode shows each kind in its canonical text, in struct order, leaving out what
// is 0 (but not required keys); bytes it cannot show are errors beside the rest; and random
// settings round trip: Encode(Decode(Encode(x))) is Encode(x).

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"reflect"
	"strconv"
	"testing"
)

func TestDecodeFirewall(t *testing.T) {
	sc := mustSchema(t, firewallStruct())
	b, err := sc.Encode([]Setting{
		{"mac", "02-00-00-00-00-0A"},
		{"rules.1.action", "1"},
		{"count", "0x01020304"},
		{"rules.1.src", "198.18.0.0/15"},
		{"rules.1.dport_hi", "0x1bb"},
		{"rules.2.dst", "0.0.0.0/0"}, // zero: not shown
		{"min_ttl", "0"},             // zero, but required: shown
		{"nh", "2001:0db8:0::1"},
		{"via", "red"},
		{"tenant", "blue"},
		{"dflt", "7"},
	}, names{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := sc.Decode(append(b, make([]byte, 1024-len(b))...), names{}) // as the map holds it
	if err != nil {
		t.Fatal(err)
	}
	want := []Setting{
		{"min_ttl", "0"},
		{"count", "16909060"},
		{"rules.1.src", "198.18.0.0/15"},
		{"rules.1.dport_hi", "443"},
		{"rules.1.action", "deny"},
		{"dflt", "7"},
		{"via", "red"},
		{"tenant", "blue"},
		{"nh", "2001:db8::1"},
		{"mac", "02:00:00:00:00:0a"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("settings:\n%q\nwant:\n%q", got, want)
	}
}

func TestDecodeKinds(t *testing.T) {
	sc := mustSchema(t, kindsStruct())
	b := make([]byte, 88)
	b[0] = 2                                                             // on: neither false nor true
	b[1] = 0x80                                                          // s8
	copy(b[2:], []byte{0xfe, 0xff})                                      // s16
	copy(b[8:], []byte{0, 0, 0, 0, 0, 0, 0, 0x80})                       // s64
	copy(b[16:], []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}) // u64
	copy(b[26:], []byte{0x01, 0xbb})                                     // port
	copy(b[28:], []byte{198, 18, 1, 2})                                  // gw
	copy(b[32:], []byte{0x20, 0x01, 0x0d, 0xb8})                         // net6 2001:db8::/32
	b[48] = 32                                                           // ... its length
	copy(b[49:], []byte{9, 9, 9})                                        // net6's padding: not a value
	b[54] = 3                                                            // key.2
	copy(b[56:], []byte{0xfe, 0xff, 0xff, 0xff})                         // mode_low
	b[61] = 1                                                            // b
	copy(b[64:], []byte{0x34, 0x12})                                     // grid.0.1
	copy(b[80:], []byte{200, 0, 0, 0})                                   // t2
	got, err := sc.Decode(b, names{})
	if err != nil {
		t.Fatal(err)
	}
	want := []Setting{
		{"on", "2"}, {"s8", "-128"}, {"s16", "-2"}, {"s64", "-9223372036854775808"},
		{"u64", "18446744073709551615"}, {"port", "443"}, {"gw", "198.18.1.2"}, {"net6", "2001:db8::/32"},
		{"key.2", "3"}, {"mode", "mode_low"}, {"b", "1"}, {"grid.0.1", "4660"}, {"t2", "green"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("settings:\n%q\nwant:\n%q", got, want)
	}
	b2, err := sc.Encode(got, names{})
	if err != nil {
		t.Fatal(err)
	}
	copy(b[49:], []byte{0, 0, 0}) // Encode writes no padding
	if !bytes.Equal(b2, b) {
		t.Errorf("encoded again:\n% x\nwant:\n% x", b2, b)
	}
	b[0], b[56] = 1, 5 // true; mode 0xffffff05, a number no name has
	got, _ = sc.Decode(b, names{})
	if got[0] != (Setting{"on", "true"}) || got[9] != (Setting{"mode", "-251"}) {
		t.Errorf("on, mode = %q, %q; want true, -251", got[0], got[9])
	}
}

// TestDecodeErrors: what Decode cannot show is an error naming the key; the rest is still listed.
func TestDecodeErrors(t *testing.T) {
	fw := mustSchema(t, firewallStruct())
	kinds := mustSchema(t, kindsStruct())
	_, err := fw.Decode(make([]byte, 155), names{})
	wantErr(t, err, "155 bytes; struct seg6x_plugin_config is 156")

	b := make([]byte, 156)
	b[0] = 9
	copy(b[8:], []byte{198, 18, 1, 0, 15}) // rules.0.src: not masked
	b[16+4] = 40                           // rules.0.dst: /40
	b[124] = 3                             // via: policy 3, which has no name
	b[128] = 100                           // tenant blue
	got, err := fw.Decode(b, names{})
	want := "rules.0.src: 198.18.1.0/15 has bits set beyond the prefix length\n" +
		"rules.0.dst: prefix length 40 is beyond the address's 32 bits\n" +
		"via: policy 3 has no name (is it still configured?)"
	if err == nil || err.Error() != want {
		t.Errorf("error:\n%v\nwant:\n%s", err, want)
	}
	if wantSet := []Setting{{"min_ttl", "9"}, {"tenant", "blue"}}; !reflect.DeepEqual(got, wantSet) {
		t.Errorf("settings beside the errors: %q, want %q", got, wantSet)
	}

	_, err = fw.Decode(b[:156:156], nil)
	wantErr(t, err, "via: policy 3: no policy names to show it by here\ntenant: tenant 100: no tenant names to show it by here")

	k := make([]byte, 88)
	k[48] = 129 // net6's length
	k[80] = 5
	_, err = kinds.Decode(k, names{})
	want = "net6: prefix length 129 is beyond the address's 128 bits\nt2: tenant 5 has no name (is it still configured?)"
	if err == nil || err.Error() != want {
		t.Errorf("error:\n%v\nwant:\n%s", err, want)
	}
}

// TestRoundTrip: random valid settings (seeded) encode, decode and encode to the same bytes, and
// decoding those gives the same settings.
func TestRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 16))
	for _, s := range []*Schema{mustSchema(t, firewallStruct()), mustSchema(t, kindsStruct())} {
		for range 300 {
			var settings []Setting
			for _, l := range s.leaves {
				if l.Required || rng.IntN(3) == 0 {
					settings = append(settings, Setting{l.Name, randomValue(rng, &l)})
				}
			}
			rng.Shuffle(len(settings), func(i, j int) { settings[i], settings[j] = settings[j], settings[i] })
			b, err := s.Encode(settings, names{})
			if err != nil {
				t.Fatalf("Encode(%q): %v", settings, err)
			}
			d, err := s.Decode(b, names{})
			if err != nil {
				t.Fatalf("Decode(Encode(%q)): %v", settings, err)
			}
			b2, err := s.Encode(d, names{})
			if err != nil {
				t.Fatalf("Encode(%q), decoded from Encode(%q): %v", d, settings, err)
			}
			if !bytes.Equal(b, b2) {
				t.Fatalf("settings %q\nencode to % x\ndecode to %q\nencode to % x", settings, b, d, b2)
			}
			d2, err := s.Decode(b2, names{})
			if err != nil || !reflect.DeepEqual(d, d2) {
				t.Fatalf("decoded %q, then %q, %v", d, d2, err)
			}
		}
	}
}

// randomValue is a valid text for the leaf, in one of the forms Encode reads.
func randomValue(rng *rand.Rand, l *leaf) string {
	bits := rng.Uint64()
	switch l.kind {
	case kindInt:
		v := truncate(bits, l.Size)
		if rng.IntN(4) == 0 {
			if l.signed && intText(v, l.Size, true)[0] == '-' {
				return intText(v, l.Size, true)
			}
			return "0x" + strconv.FormatUint(v, 16)
		}
		return intText(v, l.Size, l.signed)
	case kindBool:
		return []string{"true", "false", strconv.Itoa(int(bits & 0xff))}[rng.IntN(3)]
	case kindEnum:
		if n := len(l.enum.Values); n > 0 && rng.IntN(2) == 0 {
			return l.enum.Values[rng.IntN(n)].Name
		}
		return intText(truncate(bits, l.Size), l.Size, l.signed)
	case kindIPv4:
		return netip.AddrFrom4([4]byte(randomBytes(rng, 4))).String()
	case kindIPv6:
		return netip.AddrFrom16([16]byte(randomBytes(rng, 16))).String()
	case kindPrefix4:
		p, _ := netip.AddrFrom4([4]byte(randomBytes(rng, 4))).Prefix(rng.IntN(33))
		return p.String()
	case kindPrefix6:
		p, _ := netip.AddrFrom16([16]byte(randomBytes(rng, 16))).Prefix(rng.IntN(129))
		return p.String()
	case kindMAC:
		return net.HardwareAddr(randomBytes(rng, 6)).String()
	case kindPort:
		return strconv.Itoa(int(bits & 0xffff))
	case kindPolicy:
		return []string{"", "red", "blue"}[rng.IntN(3)]
	case kindTenant:
		return []string{"", "blue", "green"}[rng.IntN(3)]
	}
	panic(fmt.Sprintf("kind %d", l.kind))
}

func randomBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}
