package plugincfg

// fuzz_test.go: `go test -fuzz FuzzEncode ./internal/plugincfg/`: arbitrary key=value words never
// make Encode panic; every line of its error names a key of the input (or the required one
// missing); what encodes decodes and encodes again to the same bytes. `go test` runs the seeds.

import (
	"bytes"
	"strings"
	"testing"
)

func FuzzEncode(f *testing.F) {
	for _, s := range []string{
		"min_ttl=5",
		"min_ttl=5 count=0x10 rules.0.src=198.18.0.0/15 rules.0.dport_lo=22 rules.0.action=deny",
		"min_ttl=1 rules.3.dst=2001:db8::/32 rules.3.proto=300",
		"min_ttl=1 via=red tenant=blue nh=2001:db8::1 mac=02:00:00:00:00:01 dflt=allow",
		"min_ttl=1 via=green tenant= nh=fe80::1%eth0 mac=zz",
		"min_ttl=1 min_ttl=2 rules.4.src=1.0.0.0/8 rules=1 rules.0=2",
		"count=-0 count=18446744073709551616",
		"rules.1.src=198.18.1.0/15",
		"min_ttl=0x rules.2.dport_hi=0xffff rules.2.dport_lo=65536",
		"=5 x ==",
		"min_ttl=\x00 \xff=1",
		"on=true s8=-128 s64=-9223372036854775808 u64=0xffffffffffffffff gw=198.18.1.2 net6=::/0",
		"mode=mode_low grid.1.2=7 key.0=255 a=1 b=2 cv=1 t2=green port=443",
	} {
		f.Add(s)
	}
	fw := mustSchema(f, firewallStruct())
	kinds := mustSchema(f, kindsStruct())
	f.Fuzz(func(t *testing.T, s string) {
		settings, err := ParseSettings(strings.Fields(s))
		if err != nil {
			return
		}
		for _, sc := range []*Schema{fw, kinds} {
			checkEncode(t, sc, settings)
		}
	})
}

// checkEncode encodes settings and checks the error's lines or the round trip.
func checkEncode(t *testing.T, sc *Schema, settings []Setting) {
	b, err := sc.Encode(settings, names{})
	if err != nil {
		for _, line := range strings.Split(err.Error(), "\n") {
			if !namesKey(line, settings) && !strings.HasSuffix(line, " is required (u8 0..255)") {
				t.Fatalf("error line %q names none of the keys of %q", line, settings)
			}
		}
		return
	}
	if len(b) != int(sc.Size()) {
		t.Fatalf("%d bytes, want %d", len(b), sc.Size())
	}
	d, err := sc.Decode(b, names{})
	if err != nil {
		t.Fatalf("Decode(Encode(%q)): %v", settings, err)
	}
	b2, err := sc.Encode(d, names{})
	if err != nil {
		t.Fatalf("Encode(%q), decoded from Encode(%q): %v", d, settings, err)
	}
	if !bytes.Equal(b, b2) {
		t.Fatalf("settings %q\nencode to % x\ndecode to %q\nencode to % x", settings, b, d, b2)
	}
}

func namesKey(line string, settings []Setting) bool {
	for _, st := range settings {
		if strings.Contains(line, shown(st.Key)) {
			return true
		}
	}
	return false
}
