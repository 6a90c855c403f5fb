package model

// usidlist.go: a segment list written compressed (RFC 9800 NEXT-C-SID): a locator block and the
// uSIDs in the order the packet visits them, packed into uSID containers. Each container is the
// block followed by as many uSIDs as fit in its 128 - block bits, zero-padded (a zero uSID ends a
// container); the next container goes on with the uSIDs left. The containers are the route's Segs,
// so policies, the data plane, the saved policies and kernel comparisons see only addresses; the
// route keeps the USIDList to show it and to write it back to YAML. The CLI (`usids BLOCK [nf N]
// ID...`, the text form of ParseUSIDList and String), YAML and the API (`usids: {block, nf, ids}`)
// all come here: the CLI and config files reach it through the API, like every change.
//
// Example: block fcbb:0::/32, nf 16, ids 100 200 300 e004 -> one container fcbb:0:100:200:300:e004::;
// with a /48 block five 16-bit uSIDs fit in a container, a sixth starts a second one.

import (
	"encoding/hex"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// USIDList is a segment list written as uSIDs.
type USIDList struct {
	// Block is the locator block (fcbb:0::/32): a multiple of 8 bits, without host bits.
	Block netip.Prefix `yaml:"block" json:"block"`
	// NF is the length of each uSID in bits (Locator-Node + Function, the kernel's nflen): a multiple
	// of 8 from 8 to 120; 16 when not given.
	NF uint8 `yaml:"nf,omitempty" json:"nf,omitempty"`
	// IDs are the uSIDs in hexadecimal (e004), in the order the packet visits them; none is 0.
	IDs []string `yaml:"ids" json:"ids"`
}

// DefaultUSIDBits is USIDList.NF when not given (and the kernel's default nflen).
const DefaultUSIDBits = 16

// ParseUSIDList reads the text form: BLOCK [nf N] ID ID ... (IDs may also be separated by commas).
// It only splits the words; the checks are the route's (ValidateRoute), whatever the front end.
func ParseUSIDList(words []string) (*USIDList, error) {
	if len(words) == 0 {
		return nil, fmt.Errorf("missing (usids BLOCK [nf N] ID...)")
	}
	u := &USIDList{}
	b, err := netip.ParsePrefix(words[0])
	if err != nil {
		return nil, fmt.Errorf("block: %q is not a prefix (ADDR/LEN)", words[0])
	}
	u.Block, words = b, words[1:]
	if len(words) > 0 && words[0] == "nf" {
		if len(words) < 2 {
			return nil, fmt.Errorf("nf: missing value")
		}
		n, err := strconv.ParseUint(words[1], 10, 8)
		if err != nil {
			return nil, fmt.Errorf("nf: %q is not a number of bits (8-120)", words[1])
		}
		u.NF, words = uint8(n), words[2:]
	}
	for _, w := range words {
		for _, id := range strings.Split(w, ",") {
			if id != "" {
				u.IDs = append(u.IDs, id)
			}
		}
	}
	return u, nil
}

// String is the text form ParseUSIDList reads: "fcbb:0::/32 100 200 300 e004" (nf only when not 16).
func (u *USIDList) String() string {
	var b strings.Builder
	b.WriteString(u.Block.String())
	if u.NF != 0 && u.NF != DefaultUSIDBits {
		fmt.Fprintf(&b, " nf %d", u.NF)
	}
	for _, id := range u.IDs {
		b.WriteByte(' ')
		b.WriteString(id)
	}
	return b.String()
}

// Clone deep-copies u (nil stays nil).
func (u *USIDList) Clone() *USIDList {
	if u == nil {
		return nil
	}
	c := *u
	c.IDs = slices.Clone(u.IDs)
	return &c
}

// SameUSIDs reports whether a and b are the same notation (both nil, or equal once checked).
func SameUSIDs(a, b *USIDList) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Block == b.Block && a.NF == b.NF && slices.Equal(a.IDs, b.IDs)
}

// Check validates u in place (NF defaulted, IDs in lower case without leading zeros) and returns
// its containers; nil when something is wrong (every problem reported to add, fields of obj named
// usids.block, usids.nf, usids.ids[i]).
func (u *USIDList) Check(obj string, add func(error)) []netip.Addr {
	ok := true
	fail := func(field, format string, args ...any) {
		add(FieldErr(obj, field, format, args...))
		ok = false
	}
	if u.NF == 0 {
		u.NF = DefaultUSIDBits
	}
	nf := int(u.NF)
	nfOK := nf%8 == 0 && nf >= 8 && nf <= 120
	if !nfOK {
		fail("usids.nf", "%d bits: a uSID is a multiple of 8 bits, from 8 to 120", nf)
	}
	b := u.Block
	switch {
	case !b.IsValid():
		fail("usids.block", "missing or not a prefix")
	case !b.Addr().Is6() || b.Addr().Is4In6() || b.Addr().IsMulticast():
		fail("usids.block", "%s is not a unicast IPv6 prefix", b)
	case b != b.Masked():
		fail("usids.block", "host bits set; did you mean %s", b.Masked())
	case b.Bits()%8 != 0 || b.Bits() < 8:
		fail("usids.block", "/%d: the block is a multiple of 8 bits, at least 8", b.Bits())
	case nfOK && b.Bits()+nf > 128:
		fail("usids.block", "/%d leaves no room for a %d-bit uSID", b.Bits(), nf)
	}
	if len(u.IDs) == 0 {
		fail("usids.ids", "no uSIDs; give at least one")
	}
	for i, s := range u.IDs {
		field := fmt.Sprintf("usids.ids[%d]", i)
		v := strings.TrimLeft(strings.ToLower(s), "0")
		switch {
		case s == "" || strings.Trim(strings.ToLower(s), "0123456789abcdef") != "":
			fail(field, "%q is not a hexadecimal uSID", s)
		case v == "":
			fail(field, "uSID 0 ends a container; it cannot be one")
		case nfOK && len(v) > nf/4:
			fail(field, "%s does not fit in %d bits (nf)", s, nf)
		default:
			u.IDs[i] = v
		}
	}
	if !ok {
		return nil
	}
	per := (128 - b.Bits()) / nf
	if n := (len(u.IDs) + per - 1) / per; n > MaxSegments {
		fail("usids.ids", "%d uSIDs make %d containers of at most %d; at most %d containers (segments)", len(u.IDs), n, per, MaxSegments)
		return nil
	}
	ids := make([][]byte, len(u.IDs))
	for i, v := range u.IDs {
		ids[i], _ = hex.DecodeString(strings.Repeat("0", nf/4-len(v)) + v) // checked above; nf/4 is even
	}
	return packUSIDs(b, nf, ids)
}

// packUSIDs puts ids (nf/8 bytes each) into containers of block, in order, as many per container as fit.
func packUSIDs(block netip.Prefix, nf int, ids [][]byte) []netip.Addr {
	per := (128 - block.Bits()) / nf
	var out []netip.Addr
	for i := 0; i < len(ids); i += per {
		c := block.Addr().As16()
		off := block.Bits() / 8
		for _, id := range ids[i:min(i+per, len(ids))] {
			copy(c[off:], id)
			off += nf / 8
		}
		out = append(out, netip.AddrFrom16(c))
	}
	return out
}
