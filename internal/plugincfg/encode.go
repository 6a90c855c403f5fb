package plugincfg

// encode.go: settings (key=value) into a configuration's bytes: parsing each kind of value, and
// the errors an operator fixes in one go (unknown keys, values twice, bad values, missing ones).

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Setting is one key=value of a plugin SID.
type Setting struct {
	Key, Value string
}

// Resolver turns the names of seg6x_policy_t and seg6x_tenant_t members into their numbers: a
// policy's id, a tenant's routing table.
type Resolver interface {
	Policy(name string) (uint32, error)
	Tenant(name string) (uint32, error)
}

// ParseSettings splits words key=value (the CLI's arguments) at their first '='.
func ParseSettings(args []string) ([]Setting, error) {
	out := make([]Setting, 0, len(args))
	var errs []error
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("%s: want key=value", shown(a)))
		case k == "":
			errs = append(errs, fmt.Errorf("%s: no key before '='", shown(a)))
		default:
			out = append(out, Setting{Key: k, Value: v})
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// Encode writes settings into a configuration of Size() bytes; keys not set are 0. r names
// policies and tenants (nil: the settings name none). The error lists every problem, one a line.
func (sc *Schema) Encode(settings []Setting, r Resolver) ([]byte, error) {
	b := make([]byte, sc.size)
	var errs []error
	seen := map[string]string{}
	for _, st := range settings {
		i, ok := sc.index[st.Key]
		if !ok {
			errs = append(errs, sc.unknownKey(st.Key))
			continue
		}
		if first, twice := seen[st.Key]; twice {
			errs = append(errs, fmt.Errorf("%s given twice (%s=%s, %s=%s): once only",
				st.Key, st.Key, shown(first), st.Key, shown(st.Value)))
			continue
		}
		seen[st.Key] = st.Value
		l := &sc.leaves[i]
		if err := l.put(b[l.Offset:l.Offset+l.Size], st.Value, r); err != nil {
			errs = append(errs, fmt.Errorf("%s=%s: %w", st.Key, shown(st.Value), err))
		}
	}
	for _, l := range sc.leaves {
		if _, ok := seen[l.Name]; l.Required && !ok {
			errs = append(errs, fmt.Errorf("%s is required (%s)", l.Name, l.Type))
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return b, nil
}

// put writes the text v into the leaf's bytes dst (zero on entry).
func (l *leaf) put(dst []byte, v string, r Resolver) error {
	switch l.kind {
	case kindInt:
		n, ok := parseInteger(v, l.Size, l.signed)
		if !ok {
			return fmt.Errorf("want an integer %s", intRange(l.Size, l.signed))
		}
		putLE(dst, n)
	case kindBool:
		switch v {
		case "true":
			dst[0] = 1
		case "false":
		default:
			n, ok := parseInteger(v, 1, false)
			if !ok {
				return errors.New("want true, false or an integer 0..255")
			}
			dst[0] = byte(n)
		}
	case kindEnum:
		for _, ev := range l.enum.Values {
			if ev.Name == v {
				putLE(dst, ev.Value)
				return nil
			}
		}
		n, ok := parseInteger(v, l.Size, l.signed)
		switch {
		case !ok && len(l.enum.Values) == 0:
			return fmt.Errorf("want an integer %s", intRange(l.Size, l.signed))
		case !ok:
			return fmt.Errorf("want one of %s or an integer %s", enumNames(l.enum), intRange(l.Size, l.signed))
		}
		putLE(dst, n)
	case kindIPv4:
		a, err := netip.ParseAddr(v)
		if err != nil || !a.Is4() {
			return errors.New("want an IPv4 address such as 198.18.1.2")
		}
		a4 := a.As4()
		copy(dst, a4[:])
	case kindIPv6:
		a, err := netip.ParseAddr(v)
		if err != nil || !a.Is6() || a.Zone() != "" {
			return errors.New("want an IPv6 address such as 2001:db8::1")
		}
		a16 := a.As16()
		copy(dst, a16[:])
	case kindPrefix4, kindPrefix6:
		return l.putPrefix(dst, v)
	case kindMAC:
		m, err := net.ParseMAC(v)
		if err != nil || len(m) != 6 {
			return errors.New("want a MAC address such as 02:00:00:00:00:01")
		}
		copy(dst, m)
	case kindPort:
		n, ok := parseInteger(v, 2, false)
		if !ok {
			return errors.New("want a port 0..65535")
		}
		binary.BigEndian.PutUint16(dst, uint16(n))
	case kindPolicy, kindTenant:
		return l.putName(dst, v, r)
	default:
		return fmt.Errorf("internal error: kind %d", l.kind)
	}
	return nil
}

// putPrefix writes an address and its length; the address must be the prefix's first one.
func (l *leaf) putPrefix(dst []byte, v string) error {
	v4 := l.kind == kindPrefix4
	want := "want an IPv6 prefix such as 2001:db8::/32"
	if v4 {
		want = "want an IPv4 prefix such as 198.18.0.0/15"
	}
	p, err := netip.ParsePrefix(v)
	if err != nil || p.Addr().Is4() != v4 {
		return errors.New(want)
	}
	if m := p.Masked(); m != p {
		return fmt.Errorf("the address has bits set beyond the prefix length /%d: the prefix is %s", p.Bits(), m)
	}
	if v4 {
		a := p.Addr().As4()
		copy(dst, a[:])
		dst[4] = byte(p.Bits())
		return nil
	}
	a := p.Addr().As16()
	copy(dst, a[:])
	dst[16] = byte(p.Bits())
	return nil
}

// putName writes a policy's id or a tenant's table, looked up by name; an empty name is 0 (none).
func (l *leaf) putName(dst []byte, v string, r Resolver) error {
	if v == "" {
		return nil
	}
	what := "policy"
	if l.kind == kindTenant {
		what = "tenant"
	}
	if r == nil {
		return fmt.Errorf("no %s names to look it up in here", what)
	}
	var id uint32
	var err error
	if l.kind == kindPolicy {
		id, err = r.Policy(v)
	} else {
		id, err = r.Tenant(v)
	}
	if err != nil {
		return err
	}
	binary.LittleEndian.PutUint32(dst, id)
	return nil
}

// parseInteger reads a decimal or 0x hexadecimal integer, negative only when signed, that fits
// size bytes; the result is its two's complement bits.
func parseInteger(v string, size uint32, signed bool) (uint64, bool) {
	s, neg := strings.CutPrefix(v, "-")
	base := 10
	if len(s) > 2 && (s[:2] == "0x" || s[:2] == "0X") {
		base, s = 16, s[2:]
	}
	u, err := strconv.ParseUint(s, base, 64) // no sign, no underscores: not with an explicit base
	if err != nil {
		return 0, false
	}
	bits := size * 8
	if !signed {
		if neg && u != 0 || bits < 64 && u >= 1<<bits {
			return 0, false
		}
		return u, true
	}
	limit := uint64(1) << (bits - 1) // |min|; max is limit-1
	if neg {
		if u > limit {
			return 0, false
		}
		return -u, true
	}
	if u >= limit {
		return 0, false
	}
	return u, true
}

// intRange is the range an integer of size bytes takes, as text: 0..255, -128..127.
func intRange(size uint32, signed bool) string {
	bits := size * 8
	if signed {
		limit := uint64(1) << (bits - 1)
		return "-" + strconv.FormatUint(limit, 10) + ".." + strconv.FormatUint(limit-1, 10)
	}
	max := ^uint64(0) >> (64 - bits)
	return "0.." + strconv.FormatUint(max, 10)
}

// putLE writes the low len(dst) bytes of n, little-endian (the BPF target's order).
func putLE(dst []byte, n uint64) {
	for i := range dst {
		dst[i] = byte(n >> (8 * i))
	}
}

// shown is text as an error shows it: quoted when empty or holding spaces or control characters,
// cut when long.
func shown(s string) string {
	const max = 64
	cut := false
	if len(s) > max {
		s, cut = s[:max], true
	}
	quote := s == ""
	for _, c := range s {
		if c == utf8.RuneError || unicode.IsSpace(c) || !unicode.IsPrint(c) || c == '"' {
			quote = true
			break
		}
	}
	if quote {
		s = strconv.Quote(s)
	}
	if cut {
		s += "..."
	}
	return s
}
