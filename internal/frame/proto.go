package frame

// proto.go: IP protocol numbers by name, for filters and for what trace prints.

import "strconv"

// protocols are the IP protocols seg6x names.
var protocols = map[string]uint8{"icmp": 1, "ipip": 4, "tcp": 6, "udp": 17, "ipv6": 41, "srh": 43, "gre": 47, "icmpv6": 58}

// ProtoNumber is the protocol named name (or written as a number 0-255).
func ProtoNumber(name string) (uint8, bool) {
	if n, ok := protocols[name]; ok {
		return n, true
	}
	v, err := strconv.ParseUint(name, 10, 8)
	return uint8(v), err == nil
}

// ProtoName names protocol p ("proto N" for one without a name).
func ProtoName(p uint32) string {
	for name, n := range protocols {
		if uint32(n) == p {
			return name
		}
	}
	return "proto " + strconv.Itoa(int(p))
}
