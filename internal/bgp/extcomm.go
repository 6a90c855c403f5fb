package bgp

// extcomm.go: route distinguishers and route targets between seg6x's notation and GoBGP's. seg6x (and
// its config) writes a 4-byte ASN as one number (asplain, "4200000000:1"); GoBGP parses and prints it
// only as asdot ("64086.59904:1") and reads an asplain number above 65535 as 65535 without an error.

import (
	"fmt"
	"strconv"
	"strings"
)

// toGoBGP rewrites an asplain 4-byte ASN administrator as asdot; anything else is left as it is.
func toGoBGP(s string) string {
	admin, num, ok := strings.Cut(s, ":")
	if !ok {
		return s
	}
	if asn, err := strconv.ParseUint(admin, 10, 32); err == nil && asn > 0xFFFF {
		return fmt.Sprintf("%d.%d:%s", asn>>16, asn&0xFFFF, num)
	}
	return s
}

// fromGoBGP rewrites GoBGP's asdot administrator ("hi.lo:N") as asplain; IPv4 and 2-byte ASN
// administrators are left as they are.
func fromGoBGP(s string) string {
	admin, num, ok := strings.Cut(s, ":")
	if !ok {
		return s
	}
	hi, lo, dotted := strings.Cut(admin, ".")
	if !dotted || strings.Contains(lo, ".") {
		return s
	}
	h, err1 := strconv.ParseUint(hi, 10, 16)
	l, err2 := strconv.ParseUint(lo, 10, 16)
	if err1 != nil || err2 != nil {
		return s
	}
	return fmt.Sprintf("%d:%s", h<<16|l, num)
}
