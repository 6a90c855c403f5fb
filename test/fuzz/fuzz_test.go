// Package fuzz runs generated and mutated frames (tools/pktfuzz) through the real seg6x program
// with BPF_PROG_TEST_RUN, against the packet fixtures' configuration (every behavior, tenant ports,
// a fabric port with a tenant VLAN, the domain's locators and sources), and checks every result with
// an output oracle (tools/pktcheck): never XDP_ABORTED; every drop counted under exactly one drop
// reason; every frame that leaves well formed; every frame handed to the kernel unchanged or well formed.
//
// SEG6X_FUZZ_FRAMES (default 50000; `make fuzz` runs 1000000) and SEG6X_FUZZ_SEED (default 1) set the
// run; the same seed gives the same frames. Run with -v to see the rate and the counts.
package fuzz

import (
	"os"
	"strconv"
	"testing"

	"github.com/seg6x/seg6x/internal/slowpath"
	"github.com/seg6x/seg6x/tools/fixtures"
	"github.com/seg6x/seg6x/tools/testsupport"
)

var rig *fixtures.Rig

// ring reads the slow path's records, as the daemon would: with it, the program hands the slow path
// what it cannot finish (SLOW_*) and the oracle checks each record.
var ring *slowpath.Ring

func TestMain(m *testing.M) {
	os.Exit(fixtures.RigMain(m, "seg6x-fuzz", func(r *fixtures.Rig) error {
		rig = r
		// The far ends of the rig's veths must stay silent (no IPv6 router solicitations, MLD or
		// DAD arriving at the attached program): every reason counter move has to be a fuzzed frame's.
		for _, dev := range []string{"fab1", "ta1", "tb1", "tc1", "big1", "tf1"} {
			if err := testsupport.Sysctl("", "net.ipv6.conf."+dev+".disable_ipv6=1"); err != nil {
				return err
			}
		}
		var err error
		ring, err = slowpath.OpenRing(r.Objs.SlowPath, 1<<20)
		return err
	}))
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}
