package cli

// bgp_test.go: the lines `bgp show neighbors` prints under its table (families not sent and why, the
// last error with when) and its summary of refused routes.

import (
	"slices"
	"testing"
	"time"

	pb "github.com/seg6x/seg6x/api/seg6xv1"
)

func TestNeighborNotes(t *testing.T) {
	now := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	n := &pb.BgpNeighbor{Address: "fc00:99::1",
		NotSent: map[string]string{"vpnv4": "not sent (peer did not negotiate extended next hop for VPNv4, RFC 8950)",
			"rtc": "not exchanged (the peer's OPEN does not offer the family)"},
		LastError:       "notification received: 6/2 Cease / Administrative Shutdown (communication \"maintenance\")",
		LastErrorUnixMs: now.Add(-65 * time.Second).UnixMilli()}
	want := []string{
		"fc00:99::1: rtc: not exchanged (the peer's OPEN does not offer the family)",
		"fc00:99::1: vpnv4: not sent (peer did not negotiate extended next hop for VPNv4, RFC 8950)",
		"fc00:99::1: last error 1m5s ago (2026-11-28T09:58:55Z): notification received: 6/2 Cease / Administrative Shutdown (communication \"maintenance\")",
	}
	if got := neighborNotes(n, now); !slices.Equal(got, want) {
		t.Fatalf("notes:\n%q\nwant\n%q", got, want)
	}
	if got := neighborNotes(&pb.BgpNeighbor{Address: "fc00:99::2"}, now); len(got) != 0 {
		t.Fatalf("notes of a neighbor without any: %q", got)
	}
	if got, want := refusedSummary(map[string]uint64{"bad_sid": 0, "local_prefix": 1, "rt_not_imported": 5, "own_sid": 1}),
		"rt_not_imported 5, local_prefix 1, own_sid 1"; got != want {
		t.Fatalf("refused summary %q, want %q", got, want)
	}
}
