package bgp

// notification.go: a BGP NOTIFICATION as a person reads it: its error code and subcode by their RFC
// names (RFC 4271 section 4.5 and the IANA registry) and its data decoded where the RFCs say what it
// holds (the capability refused, the attribute in error, the shutdown communication, a bad AS or
// length), in hex otherwise.

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strings"

	gobgp "github.com/osrg/gobgp/v4/pkg/packet/bgp"
)

// notificationNames are the error codes and, by code, their subcodes.
var notificationNames = map[uint8]struct {
	name string
	sub  map[uint8]string
}{
	1: {"Message Header Error", map[uint8]string{1: "Connection Not Synchronized", 2: "Bad Message Length", 3: "Bad Message Type"}},
	2: {"OPEN Message Error", map[uint8]string{1: "Unsupported Version Number", 2: "Bad Peer AS", 3: "Bad BGP Identifier",
		4: "Unsupported Optional Parameter", 6: "Unacceptable Hold Time", 7: "Unsupported Capability", 11: "Role Mismatch"}},
	3: {"UPDATE Message Error", map[uint8]string{1: "Malformed Attribute List", 2: "Unrecognized Well-known Attribute",
		3: "Missing Well-known Attribute", 4: "Attribute Flags Error", 5: "Attribute Length Error", 6: "Invalid ORIGIN Attribute",
		8: "Invalid NEXT_HOP Attribute", 9: "Optional Attribute Error", 10: "Invalid Network Field", 11: "Malformed AS_PATH"}},
	4: {"Hold Timer Expired", nil},
	5: {"Finite State Machine Error", map[uint8]string{1: "Unexpected Message in OpenSent", 2: "Unexpected Message in OpenConfirm",
		3: "Unexpected Message in Established"}},
	6: {"Cease", map[uint8]string{1: "Maximum Number of Prefixes Reached", 2: "Administrative Shutdown", 3: "Peer De-configured",
		4: "Administrative Reset", 5: "Connection Rejected", 6: "Other Configuration Change", 7: "Connection Collision Resolution",
		8: "Out of Resources", 9: "Hard Reset", 10: "BFD Down"}},
	7: {"ROUTE-REFRESH Message Error", map[uint8]string{1: "Invalid Message Length"}},
}

// notificationName is "OPEN Message Error / Unsupported Capability" (an unknown code or subcode by
// its number).
func notificationName(code, sub uint8) string {
	c, ok := notificationNames[code]
	if !ok {
		return fmt.Sprintf("error code %d / subcode %d", code, sub)
	}
	if c.sub == nil && sub == 0 {
		return c.name
	}
	if s, ok := c.sub[sub]; ok {
		return c.name + " / " + s
	}
	return fmt.Sprintf("%s / subcode %d", c.name, sub)
}

// notificationData decodes the data of a NOTIFICATION with code and subcode ("" when it has none).
func notificationData(code, sub uint8, data []byte) string {
	if len(data) == 0 {
		return ""
	}
	switch {
	case code == 1 && sub == 2 && len(data) == 2:
		return fmt.Sprintf("message length %d", binary.BigEndian.Uint16(data))
	case code == 1 && sub == 3 && len(data) == 1:
		return fmt.Sprintf("message type %d", data[0])
	case code == 2 && sub == 1 && len(data) == 2:
		return fmt.Sprintf("largest version supported %d", binary.BigEndian.Uint16(data))
	case code == 2 && sub == 2 && (len(data) == 2 || len(data) == 4):
		if len(data) == 2 {
			return fmt.Sprintf("AS %d", binary.BigEndian.Uint16(data))
		}
		return fmt.Sprintf("AS %d", binary.BigEndian.Uint32(data))
	case code == 2 && sub == 7:
		return capabilitiesData(data)
	case code == 3 && (sub == 2 || sub == 4 || sub == 5 || sub == 6 || sub == 8 || sub == 9 || sub == 11):
		return attributeData(data)
	case code == 3 && sub == 3 && len(data) == 1:
		return "missing " + attrName(data[0])
	case code == 6 && (sub == 2 || sub == 4):
		return communicationData(data)
	case code == 6 && sub == 1 && len(data) == 7:
		f := gobgp.NewFamily(binary.BigEndian.Uint16(data), data[2])
		return fmt.Sprintf("%s, limit %d prefixes", familyName(f), binary.BigEndian.Uint32(data[3:]))
	}
	return "data " + hexData(data)
}

// capabilitiesData reads the capabilities a 2/7 NOTIFICATION returns (code, length, value each).
func capabilitiesData(data []byte) string {
	var out []string
	for len(data) >= 2 {
		code, n := gobgp.BGPCapabilityCode(data[0]), int(data[1])
		name := gobgp.CapNameMap[code]
		if name == "" {
			name = "unknown"
		}
		s := fmt.Sprintf("capability %d (%s) length %d", code, name, n)
		if n > len(data)-2 {
			out = append(out, s+" (truncated)")
			data = nil
			break
		}
		if n > 0 {
			s += " value " + hexData(data[2:2+n])
		}
		out = append(out, s)
		data = data[2+n:]
	}
	if len(data) > 0 {
		out = append(out, "trailing "+hexData(data))
	}
	return strings.Join(out, "; ")
}

// attributeData reads the path attribute an UPDATE error returns (flags, type, length, value).
func attributeData(data []byte) string {
	if len(data) < 2 {
		return "data " + hexData(data)
	}
	flags, typ := data[0], data[1]
	hdr := 3
	if gobgp.BGPAttrFlag(flags)&gobgp.BGP_ATTR_FLAG_EXTENDED_LENGTH != 0 {
		hdr = 4
	}
	s := fmt.Sprintf("attribute %s, flags 0x%02x", attrName(typ), flags)
	if len(data) >= hdr {
		n := int(data[2])
		if hdr == 4 {
			n = int(binary.BigEndian.Uint16(data[2:]))
		}
		s += fmt.Sprintf(", length %d", n)
		if typ == uint8(gobgp.BGP_ATTR_TYPE_MP_REACH_NLRI) && len(data) >= hdr+4 {
			// AFI, SAFI, next hop length: what a peer without Extended Next Hop refuses.
			v := data[hdr:]
			f := gobgp.NewFamily(binary.BigEndian.Uint16(v), v[2])
			s += fmt.Sprintf(", %s with a %d-byte next hop", familyName(f), v[3])
		}
	}
	return s
}

func attrName(typ uint8) string {
	name := gobgp.BGPAttrType(typ).String()
	if strings.HasPrefix(name, "BGPAttrType(") {
		return fmt.Sprintf("type %d", typ)
	}
	return fmt.Sprintf("%s (%d)", strings.TrimPrefix(name, "BGP_ATTR_TYPE_"), typ)
}

// communicationData reads the shutdown communication (RFC 9003): a length, then UTF-8.
func communicationData(data []byte) string {
	n := int(data[0])
	if n == 0 && len(data) == 1 {
		return ""
	}
	if n > len(data)-1 {
		return "data " + hexData(data)
	}
	s := fmt.Sprintf("communication %q", string(data[1:1+n]))
	if rest := data[1+n:]; len(rest) > 0 {
		s += ", then " + hexData(rest)
	}
	return s
}

func familyName(f gobgp.Family) string {
	switch f {
	case gobgp.RF_IPv4_VPN:
		return "vpnv4"
	case gobgp.RF_IPv6_VPN:
		return "vpnv6"
	case gobgp.RF_RTC_UC:
		return "rtc"
	}
	return f.String()
}

func hexData(b []byte) string {
	if len(b) > 32 {
		return hex.EncodeToString(b[:32]) + fmt.Sprintf("... (%d bytes)", len(b))
	}
	return hex.EncodeToString(b)
}

// notificationText is one line for a NOTIFICATION: "2/7 OPEN Message Error / Unsupported Capability
// (capability 5 (extended-nexthop) length 0)".
func notificationText(code, sub uint8, data string) string {
	s := fmt.Sprintf("%d/%d %s", code, sub, notificationName(code, sub))
	if data != "" {
		s += " (" + data + ")"
	}
	return s
}
