package bench

// control.go: control-plane rates: how long Apply takes to load N encap routes or N local SIDs, and
// the latency of one more change on top of a loaded state.

import (
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"time"

	"github.com/seg6x/seg6x/internal/dataplane"
	"github.com/seg6x/seg6x/internal/state"
	"golang.org/x/sys/unix"
)

// ControlResult is one row of `seg6x bench control`.
type ControlResult struct {
	Object       string  `json:"object"` // "routes" or "sids"
	Count        int     `json:"count"`
	LoadSeconds  float64 `json:"load_seconds"`
	PerSecond    float64 `json:"per_second"`
	UpdateMillis float64 `json:"single_update_ms"` // adding one more object to the loaded state
	NotSupported string  `json:"not_supported,omitempty"`
}

func nthAddr4(i int) netip.Addr {
	return netip.AddrFrom4([4]byte{198, 18 + byte(i>>16), byte(i >> 8), byte(i)})
}

func nthSID(i int) netip.Addr {
	return netip.AddrFrom16([16]byte{0xfc, 0x00, 0, 0x5, 0, 0, 0, 0, 0, 0, 0, 0, 0, byte(i >> 16), byte(i >> 8), byte(i)})
}

// RunControl measures loads of each route count and SID count. It must run inside a namespace made
// for it: it creates a veth pair there for the tenant port.
func RunControl(routeCounts, sidCounts []int) ([]ControlResult, error) {
	if out, err := exec.Command("ip", "link", "add", "cp0", "type", "veth", "peer", "name", "cp1").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("ip link add: %v: %s", err, out)
	}
	var res []ControlResult
	for _, n := range routeCounts {
		r, err := controlOnce("routes", n)
		if err != nil {
			return res, err
		}
		res = append(res, r)
	}
	for _, n := range sidCounts {
		r, err := controlOnce("sids", n)
		if err != nil {
			return res, err
		}
		res = append(res, r)
	}
	return res, nil
}

func controlOnce(kind string, n int) (ControlResult, error) {
	r := ControlResult{Object: kind, Count: n}
	limit := state.MaxPolicies - 1
	if kind == "sids" {
		limit = state.MaxSIDs - 1
	}
	if n+1 > limit {
		r.NotSupported = fmt.Sprintf("more than the %d %s the maps hold today", limit, kind)
		return r, nil
	}
	dir, err := os.MkdirTemp("", "seg6x-control-")
	if err != nil {
		return r, err
	}
	defer func() {
		_ = unix.Unmount(dataplane.PinDir(dir), unix.MNT_DETACH)
		_ = os.RemoveAll(dir)
	}()
	st, err := state.Open(dir, state.HostEnv{})
	if err != nil {
		return r, err
	}
	defer st.Close()
	src := netip.MustParseAddr("fc00:1::1")
	seg := []netip.Addr{netip.MustParseAddr("fc00:2::1")}
	build := func(count int) state.State {
		s := state.State{Tenants: []state.Tenant{{Name: "t", Table: 100, Ports: []state.Port{{Dev: "cp0", VLAN: 10}}}}}
		for i := 0; i < count; i++ {
			if kind == "routes" {
				s.Routes = append(s.Routes, state.Route{Tenant: "t", Prefix: netip.PrefixFrom(nthAddr4(i), 32), Segs: seg, Src: src})
			} else {
				s.SIDs = append(s.SIDs, state.SID{SID: nthSID(i), Action: "End"})
			}
		}
		return s
	}
	full := build(n)
	start := time.Now()
	if _, err := st.Apply(full, false); err != nil {
		return r, err
	}
	r.LoadSeconds = time.Since(start).Seconds()
	r.PerSecond = float64(n) / r.LoadSeconds
	more := build(n + 1)
	start = time.Now()
	if _, err := st.Apply(more, false); err != nil {
		return r, err
	}
	r.UpdateMillis = float64(time.Since(start).Microseconds()) / 1000
	return r, nil
}
