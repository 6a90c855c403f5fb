package bgp

// notification_test.go: NOTIFICATIONs by their RFC names, and their data decoded where the RFCs say
// what it holds.

import (
	"testing"
)

func TestNotificationText(t *testing.T) {
	for _, c := range []struct {
		code, sub uint8
		data      []byte
		want      string
	}{
		{2, 7, []byte{5, 0}, "2/7 OPEN Message Error / Unsupported Capability (capability 5 (extended-nexthop) length 0)"},
		{2, 7, []byte{5, 6, 0, 1, 0, 128, 0, 2, 65, 4}, "2/7 OPEN Message Error / Unsupported Capability (capability 5 " +
			"(extended-nexthop) length 6 value 000100800002; capability 65 (4-octet-as) length 4 (truncated))"},
		{2, 2, []byte{0xfd, 0xe8}, "2/2 OPEN Message Error / Bad Peer AS (AS 65000)"},
		{4, 0, nil, "4/0 Hold Timer Expired"},
		// An MP_REACH_NLRI a peer without Extended Next Hop refuses: VPNv4 with a 24-byte next hop.
		{3, 9, []byte{0x90, 14, 0, 37, 0, 1, 128, 24}, "3/9 UPDATE Message Error / Optional Attribute Error " +
			"(attribute MP_REACH_NLRI (14), flags 0x90, length 37, vpnv4 with a 24-byte next hop)"},
		{3, 3, []byte{1}, "3/3 UPDATE Message Error / Missing Well-known Attribute (missing ORIGIN (1))"},
		{6, 2, append([]byte{11}, "maintenance"...), `6/2 Cease / Administrative Shutdown (communication "maintenance")`},
		{6, 1, []byte{0, 1, 128, 0, 0, 3, 232}, "6/1 Cease / Maximum Number of Prefixes Reached (vpnv4, limit 1000 prefixes)"},
		{6, 99, []byte{0xab, 0xcd}, "6/99 Cease / subcode 99 (data abcd)"},
		{9, 1, nil, "9/1 error code 9 / subcode 1"},
	} {
		if got := notificationText(c.code, c.sub, notificationData(c.code, c.sub, c.data)); got != c.want {
			t.Errorf("%d/%d %x:\n got %s\nwant %s", c.code, c.sub, c.data, got, c.want)
		}
	}
}
