package plugincfg

// decode.go: a configuration's bytes back into settings, each value in the text Encode reads
// (for `seg6x show` and exports).

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
)

// Namer names the numbers in seg6x_policy_t and seg6x_tenant_t members; "" for one it does not know.
type Namer interface {
	PolicyName(id uint32) string
	TenantName(table uint32) string
}

// Decode lists the keys set in a configuration (b: at least Size() bytes; the rest is ignored), in
// struct order: those not 0, and the required ones always. Encoding them gives b's bytes back. n
// names policies and tenants (nil: when none is set). A value it cannot show (a policy without a
// name, bytes Encode never writes) is an error, one a line, beside the settings it could show.
func (sc *Schema) Decode(b []byte, n Namer) ([]Setting, error) {
	if len(b) < int(sc.size) {
		return nil, fmt.Errorf("%d bytes; %s is %d", len(b), sc.name, sc.size)
	}
	var out []Setting
	var errs []error
	for _, l := range sc.leaves {
		raw := b[l.Offset : l.Offset+l.Size]
		if !l.Required && l.isZero(raw) {
			continue
		}
		v, err := l.text(raw, n)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", l.Name, err))
			continue
		}
		out = append(out, Setting{Key: l.Name, Value: v})
	}
	return out, errors.Join(errs...)
}

// isZero is true when the leaf's value is 0 (a prefix's padding does not count).
func (l *leaf) isZero(raw []byte) bool {
	switch l.kind {
	case kindPrefix4:
		raw = raw[:5]
	case kindPrefix6:
		raw = raw[:17]
	}
	for _, c := range raw {
		if c != 0 {
			return false
		}
	}
	return true
}

// text is the leaf's value as Encode reads it.
func (l *leaf) text(raw []byte, n Namer) (string, error) {
	switch l.kind {
	case kindInt:
		return intText(getLE(raw), l.Size, l.signed), nil
	case kindBool:
		switch raw[0] {
		case 0:
			return "false", nil
		case 1:
			return "true", nil
		}
		return strconv.Itoa(int(raw[0])), nil
	case kindEnum:
		v := getLE(raw)
		for _, ev := range l.enum.Values {
			if truncate(ev.Value, l.Size) == v {
				return ev.Name, nil
			}
		}
		return intText(v, l.Size, l.signed), nil
	case kindIPv4:
		return netip.AddrFrom4([4]byte(raw)).String(), nil
	case kindIPv6:
		return netip.AddrFrom16([16]byte(raw)).String(), nil
	case kindPrefix4:
		return prefixText(netip.AddrFrom4([4]byte(raw[:4])), raw[4])
	case kindPrefix6:
		return prefixText(netip.AddrFrom16([16]byte(raw[:16])), raw[16])
	case kindMAC:
		return net.HardwareAddr(raw).String(), nil
	case kindPort:
		return strconv.Itoa(int(binary.BigEndian.Uint16(raw))), nil
	case kindPolicy, kindTenant:
		return l.nameText(binary.LittleEndian.Uint32(raw), n)
	}
	return "", fmt.Errorf("internal error: kind %d", l.kind)
}

// prefixText is a prefix's text; a length beyond the address or bits set beyond it are errors.
func prefixText(a netip.Addr, bits byte) (string, error) {
	p := netip.PrefixFrom(a, int(bits))
	if !p.IsValid() {
		return "", fmt.Errorf("prefix length %d is beyond the address's %d bits", bits, a.BitLen())
	}
	if p.Masked() != p {
		return "", fmt.Errorf("%s has bits set beyond the prefix length", p)
	}
	return p.String(), nil
}

// nameText names a policy or a tenant; 0 is none, the empty text.
func (l *leaf) nameText(id uint32, n Namer) (string, error) {
	if id == 0 {
		return "", nil
	}
	what := "policy"
	if l.kind == kindTenant {
		what = "tenant"
	}
	if n == nil {
		return "", fmt.Errorf("%s %d: no %s names to show it by here", what, id, what)
	}
	var name string
	if l.kind == kindPolicy {
		name = n.PolicyName(id)
	} else {
		name = n.TenantName(id)
	}
	if name == "" {
		return "", fmt.Errorf("%s %d has no name (is it still configured?)", what, id)
	}
	return name, nil
}

// getLE reads a little-endian integer of len(raw) bytes.
func getLE(raw []byte) uint64 {
	var n uint64
	for i, c := range raw {
		n |= uint64(c) << (8 * i)
	}
	return n
}

// truncate keeps the low size bytes of v.
func truncate(v uint64, size uint32) uint64 {
	if size >= 8 {
		return v
	}
	return v & (1<<(8*size) - 1)
}

// intText is an integer's decimal text: v's low size bytes, sign-extended when signed.
func intText(v uint64, size uint32, signed bool) string {
	if !signed {
		return strconv.FormatUint(v, 10)
	}
	shift := 64 - 8*size
	return strconv.FormatInt(int64(v<<shift)>>shift, 10)
}
