package benchrig

// routescale.go: the CPU cost of the headend with 10 and with a million routes installed, from
// BPF_PROG_TEST_RUN on the packet-test rig (`seg6x-bench micro`). Unlike the throughput rig this is
// not disturbed by veth scheduling: it is the program's own time per packet, over 4096 different
// destinations so the route table's size shows in cache misses. In both cases every destination
// misses a /32 lookup and matches a /16 (two exact-match lookups).

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"time"

	"github.com/seg6x/seg6x/internal/dataplane"
	"github.com/seg6x/seg6x/internal/model"
	"github.com/seg6x/seg6x/internal/state"
	"github.com/seg6x/seg6x/tools/fixtures"
	"github.com/seg6x/seg6x/tools/pktcheck"
)

// ScaleRow is one line of the route-scale micro-benchmark.
type ScaleRow struct {
	Routes   int     `json:"routes"`
	NsPerPkt float64 `json:"ns_per_pkt"`
	VsTen    float64 `json:"cost_vs_10_routes"` // NsPerPkt / the 10-route figure (throughput ratio is its inverse)
}

const (
	scaleVLAN  = 50   // tenant "scale" on ta0; fillers on 51..
	scaleDests = 4096 // destinations 198.19.16.0/20: covered by the /16 only
)

func scaleFrame(dst netip.Addr) []byte { return udpFrame(scaleVLAN, dst) }

// udpFrame is a small UDP packet from a tenant host on VLAN vlan (< 256) of ta0 to dst.
func udpFrame(vlan uint8, dst netip.Addr) []byte {
	b := []byte{2, 0, 0, 0, 0x0a, 0, 2, 0, 0, 0, 0x0a, 2, 0x81, 0, 0, vlan, 0x08, 0x00,
		0x45, 0, 0, 46, 0, 1, 0, 0, 64, 17, 0, 0, 198, 18, 1, 2}
	d := dst.As4()
	b = append(b, d[:]...)
	binary.BigEndian.PutUint16(b[18+10:], pktcheck.Checksum(b[18:18+20])) // the headend checks it
	udp := make([]byte, 26)
	binary.BigEndian.PutUint16(udp[0:], 1000)
	binary.BigEndian.PutUint16(udp[2:], 2000)
	binary.BigEndian.PutUint16(udp[4:], 26)
	return append(b, udp...)
}

// RouteScale installs the scale tenant with `total` routes on the fixture rig, times the headend over
// the destinations for each total, and removes what it installed.
func RouteScale(rig *fixtures.Rig, totals []int, runs int) ([]ScaleRow, error) {
	frames := make([][]byte, scaleDests)
	for i := range frames {
		frames[i] = scaleFrame(netip.AddrFrom4([4]byte{198, 19, byte(16 + i>>8), byte(i)}))
	}
	var rows []ScaleRow
	for _, total := range totals {
		tenants, err := installScale(rig.Store, total)
		if err != nil {
			return rows, err
		}
		d, actions, err := rig.RunFrames(nil, "ta0", frames, max(runs/scaleDests, 1))
		if err == nil {
			for i, a := range actions {
				if a != uint32(dataplane.ActionIndex("XDP_REDIRECT")) {
					err = fmt.Errorf("%d routes: destination %d returned %s", total, i, dataplane.Actions[a])
					break
				}
			}
		}
		if rerr := removeScale(rig.Store, tenants); err == nil {
			err = rerr
		}
		if err != nil {
			return rows, err
		}
		rows = append(rows, ScaleRow{Routes: total, NsPerPkt: float64(d) / float64(time.Nanosecond)})
	}
	for i := range rows {
		rows[i].VsTen = rows[i].NsPerPkt / rows[0].NsPerPkt
	}
	return rows, nil
}

func installScale(st *state.Store, total int) ([]string, error) {
	src := netip.MustParseAddr("fc00:1::1")
	var ops []state.Op
	var tenants []string
	addTenant := func(name string, vlan uint16) {
		tenants = append(tenants, name)
		ops = append(ops, state.Op{Kind: model.OpAdd, Tenant: &model.Tenant{Name: name, Ports: []model.Port{{Dev: "ta0", VLAN: vlan}}}})
	}
	route := func(tenant string, p netip.Prefix, seg string) {
		ops = append(ops, state.Op{Kind: model.OpAdd, Route: &model.Route{Tenant: tenant, Prefix: p,
			Segs: []netip.Addr{netip.MustParseAddr(seg)}, Src: src}})
	}
	flush := func() error {
		_, err := st.Commit(ops, false)
		ops = ops[:0]
		return err
	}
	addTenant("scale", scaleVLAN)
	route("scale", netip.MustParsePrefix("198.19.0.0/16"), "fc00:2::99")
	n := 1
	for i := 0; i < 1<<17 && n < total; i++ {
		a := [4]byte{198, 18 + byte(i>>16), byte(i >> 8), byte(i)}
		if a[1] == 19 && a[2] >= 16 && a[2] < 32 {
			continue // the destinations: only the /16 covers them
		}
		route("scale", netip.PrefixFrom(netip.AddrFrom4(a), 32), "fc00:2::98")
		n++
	}
	for t := 1; n < total; t++ {
		name := fmt.Sprintf("scale%d", t)
		addTenant(name, scaleVLAN+uint16(t))
		for i := 0; i < 1<<17 && n < total; i++ {
			a := [4]byte{198, 18 + byte(i>>16), byte(i >> 8), byte(i)}
			route(name, netip.PrefixFrom(netip.AddrFrom4(a), 32), fmt.Sprintf("fc00:2::%x", 1+i%1000))
			n++
			if len(ops) >= 50000 {
				if err := flush(); err != nil {
					return tenants, err
				}
			}
		}
	}
	return tenants, flush()
}

func removeScale(st *state.Store, tenants []string) error {
	var ops []state.Op
	for _, t := range tenants {
		ops = append(ops, state.Op{Kind: model.OpReplace, TenantRoutes: &state.TenantRoutes{Tenant: t}},
			state.Op{Kind: model.OpDelete, Tenant: &model.Tenant{Name: t}})
	}
	_, err := st.Commit(ops, false)
	return err
}
