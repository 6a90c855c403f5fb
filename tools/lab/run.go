package lab

// run.go: sending the lab's traffic (ping, UDP and TCP in both directions for both tenants) and
// collecting what happened: probe results, access-port VLAN counters, foreign-tenant messages and
// every router's seg6x counters.

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cilium/ebpf"
	pb "github.com/seg6x/seg6x/api/seg6xv1"
	"golang.org/x/sys/unix"
	"google.golang.org/protobuf/encoding/protojson"
)

// EchoPort is where every lab host's echo server listens.
const EchoPort = 7000

// Flow is traffic from one tenant host to the same tenant's host on another site.
type Flow struct {
	Tenant string      `json:"tenant"`
	From   string      `json:"from"`
	To     string      `json:"to"` // IPv4 address, which both tenants use
	PingTx int         `json:"ping_sent"`
	PingRx int         `json:"ping_received"`
	UDP    ProbeResult `json:"udp"`
	TCP    ProbeResult `json:"tcp"`
}

// Report is everything one traffic run observed.
type Report struct {
	Flows   []Flow                     `json:"flows"`
	Ports   map[string]PortCounters    `json:"access_ports"`
	Foreign map[string][]string        `json:"foreign_messages"` // per host: messages of the other tenant
	Stats   map[string]json.RawMessage `json:"seg6x_stats"`      // per router: seg6x stats --json
	Bulk    []BulkResult               `json:"bulk_tcp"`         // per tenant: checked transfer each way
	Ping6   []Ping6                    `json:"ping6"`            // dual-stack tenant A: IPv6 pings each way
	Routers []string                   `json:"routers"`          // the seg6x routers, in order (Stats' keys)
	// Plain is the same bulk transfer between tenant A's hosts with plain kernel routing on the same
	// namespaces (PlainBulk; the demo's reference), when it ran.
	Plain *BulkResult `json:"plain_routing,omitempty"`

	wantPing6, wantBulk int // how many Ping6 and Bulk runs there must be
}

// Ping6 is count IPv6 pings from one host of the dual-stack tenant to the other.
type Ping6 struct {
	Tenant string `json:"tenant"`
	From   string `json:"from"`
	To     string `json:"to"`
	Sent   int    `json:"sent"`
	Rx     int    `json:"received"`
}

// BulkBytes is how much each checked bulk TCP transfer carries each way.
const BulkBytes = 20 << 20

var pingRx = regexp.MustCompile(`(\d+) received`)

// Traffic runs count pings, UDP and TCP messages from every host to its tenant's hosts on the other
// sites, IPv6 pings between those of the dual-stack tenant, and (main lab) a checked bulk TCP transfer
// per tenant. Every loop is bounded by count and by per-message timeouts.
func (l *Lab) Traffic(count int) (*Report, error) {
	var servers []*exec.Cmd
	defer func() {
		for _, s := range servers {
			_ = s.Process.Kill()
			_ = s.Wait()
		}
	}()
	hosts := l.topo.hosts
	for _, h := range hosts {
		cmd := exec.Command("ip", "netns", "exec", l.NS(h.Name), l.Tool, "echo", "--tenant", h.Tenant,
			"--port", strconv.Itoa(EchoPort), "--duration", "120s", "--foreign-log", l.foreignLog(h.Name))
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		servers = append(servers, cmd)
		if !l.topo.bulk {
			continue
		}
		bulk := exec.Command("ip", "netns", "exec", l.NS(h.Name), l.Tool, "bulk-server",
			"--port", strconv.Itoa(BulkPort), "--duration", "300s")
		if err := bulk.Start(); err != nil {
			return nil, err
		}
		servers = append(servers, bulk)
	}
	time.Sleep(500 * time.Millisecond) // let the servers bind

	rep := &Report{Ports: map[string]PortCounters{}, Foreign: map[string][]string{}, Stats: map[string]json.RawMessage{},
		Routers: l.topo.routers}
	// Every flow and IPv6 ping run at once: each is its own processes between its own two hosts, and
	// each result has its slot, so the report is in this order whatever finishes first.
	type pair struct{ h, peer Host }
	var pairs []pair
	for _, h := range hosts {
		for _, peer := range l.peers(h) {
			l.logf("tenant %s: %s -> %s (%s): ping, UDP, TCP", h.Tenant, h.Name, strings.Split(peer.Addr, "/")[0], peer.Name)
			pairs = append(pairs, pair{h, peer})
		}
	}
	rep.Flows = make([]Flow, len(pairs))
	// IPv6 for the dual-stack tenant (A): ping each way.
	for _, h := range hosts {
		if h.Addr6 == "" {
			continue
		}
		for _, peer := range l.peers(h) {
			rep.wantPing6++
			dst := strings.Split(peer.Addr6, "/")[0]
			l.logf("tenant %s: %s -> %s: ping -6", h.Tenant, h.Name, dst)
			rep.Ping6 = append(rep.Ping6, Ping6{Tenant: h.Tenant, From: h.Name, To: dst, Sent: count})
		}
	}
	var wg sync.WaitGroup
	for i, p := range pairs {
		wg.Go(func() { rep.Flows[i] = l.flow(p.h, p.peer, count) })
	}
	for i := range rep.Ping6 {
		pg := &rep.Ping6[i]
		wg.Go(func() { pg.Rx = l.Ping(pg.From, pg.To, count) })
	}
	wg.Wait()
	// Bulk TCP with full-sized segments, site 1 -> site 2 and back, every byte checked; the routers'
	// program run time is counted meanwhile (statistics on only while this holds the fd).
	if l.topo.bulk {
		if st, err := ebpf.EnableStats(uint32(unix.BPF_STATS_RUN_TIME)); err == nil {
			defer st.Close()
		}
	}
	for i, h := range hosts {
		if h.Site != 1 || !l.topo.bulk {
			continue
		}
		rep.wantBulk++
		peer := l.peers(h)[0]
		dst := fmt.Sprintf("%s:%d", strings.Split(peer.Addr, "/")[0], BulkPort)
		l.logf("tenant %s: %s <-> %s: checked bulk TCP, %d MB each way", h.Tenant, h.Name, peer.Name, BulkBytes>>20)
		ns0, start := l.routerRunNs(), time.Now()
		out, err := l.Exec(h.Name, l.Tool, "bulk", "--dst", dst, "--bytes", strconv.Itoa(BulkBytes),
			"--seed", strconv.Itoa(i+1), "--timeout", "60s")
		took := time.Since(start)
		ns1 := l.routerRunNs()
		var br BulkResult
		if jerr := json.Unmarshal([]byte(out), &br); jerr != nil {
			br = BulkResult{Error: fmt.Sprintf("bulk client: %v %v", err, jerr)}
		}
		if ns1 > ns0 {
			br.RouterCPU = float64(ns1-ns0) / float64(took.Nanoseconds())
		}
		br.Tenant, br.From, br.To = h.Tenant, h.Name, peer.Name
		rep.Bulk = append(rep.Bulk, br)
	}
	for _, h := range hosts {
		out, err := l.Exec(h.Name, l.Tool, "port-stats", "--pin", filepath.Join(l.NodeDir(h.Name), "bpf"))
		if err != nil {
			return nil, err
		}
		var pc PortCounters
		if err := json.Unmarshal([]byte(out), &pc); err != nil {
			return nil, fmt.Errorf("port-stats %s: %w", h.Name, err)
		}
		rep.Ports[h.Name] = pc
		if b, err := os.ReadFile(l.foreignLog(h.Name)); err == nil {
			rep.Foreign[h.Name] = strings.Fields(string(b))
		}
	}
	for _, r := range l.topo.routers {
		out, err := l.Seg6x(r, "stats", "--json")
		if err != nil {
			return nil, err
		}
		rep.Stats[r] = json.RawMessage(out)
	}
	return rep, nil
}

// Ping sends count pings (IPv4 or IPv6 by the address) from a node, 0.2 s apart, each waiting up to
// 1 s, and returns how many were answered.
func (l *Lab) Ping(node, dst string, count int) int {
	args := []string{"ping", "-c", strconv.Itoa(count), "-i", "0.2", "-W", "1", dst}
	if strings.Contains(dst, ":") {
		args = append(args[:1], append([]string{"-6"}, args[1:]...)...)
	}
	out, _ := l.Exec(node, args...)
	rx := 0
	if m := pingRx.FindStringSubmatch(out); m != nil {
		rx, _ = strconv.Atoi(m[1])
	}
	return rx
}

// flow runs count pings, UDP and TCP messages from h to peer.
func (l *Lab) flow(h, peer Host, count int) Flow {
	dst := strings.Split(peer.Addr, "/")[0]
	f := Flow{Tenant: h.Tenant, From: h.Name, To: dst, PingTx: count}
	f.PingRx = l.Ping(h.Name, dst, count)
	for _, proto := range []string{"udp", "tcp"} {
		out, err := l.Exec(h.Name, l.Tool, "probe", "--tenant", h.Tenant, "--proto", proto,
			"--dst", fmt.Sprintf("%s:%d", dst, EchoPort), "--count", strconv.Itoa(count), "--timeout", "2s")
		var pr ProbeResult
		if jerr := json.Unmarshal([]byte(out), &pr); jerr != nil {
			pr = ProbeResult{Proto: proto, Sent: count, Lost: count}
			l.logf("  %s probe failed: %v", proto, err)
		}
		if proto == "udp" {
			f.UDP = pr
		} else {
			f.TCP = pr
		}
	}
	return f
}

// peers are the hosts of h's tenant on the other sites.
func (l *Lab) peers(h Host) []Host {
	var out []Host
	for _, o := range l.topo.hosts {
		if o.Tenant == h.Tenant && o.Site != h.Site {
			out = append(out, o)
		}
	}
	return out
}

func (l *Lab) foreignLog(host string) string { return filepath.Join(l.NodeDir(host), "foreign.log") }

// Problems lists every way the report falls short of a working, isolated overlay.
func (r *Report) Problems() []string {
	var p []string
	for _, f := range r.Flows {
		if f.PingRx != f.PingTx {
			p = append(p, fmt.Sprintf("tenant %s %s->%s: %d/%d pings answered", f.Tenant, f.From, f.To, f.PingRx, f.PingTx))
		}
		for _, pr := range []ProbeResult{f.UDP, f.TCP} {
			if pr.OK != pr.Sent || pr.Sent == 0 {
				p = append(p, fmt.Sprintf("tenant %s %s->%s %s: %d/%d answered by own tenant, %d wrong tenant, %d lost",
					f.Tenant, f.From, f.To, pr.Proto, pr.OK, pr.Sent, pr.WrongTenant, pr.Lost))
			}
		}
	}
	for h, pc := range r.Ports {
		if pc.RxWrongVLAN != 0 || pc.RxUntagged != 0 {
			p = append(p, fmt.Sprintf("%s: %d frames with another tenant's VLAN, %d untagged", h, pc.RxWrongVLAN, pc.RxUntagged))
		}
		if pc.TxTagged == 0 || pc.RxOK == 0 {
			p = append(p, fmt.Sprintf("%s: no tagged frames sent (%d) or received (%d)", h, pc.TxTagged, pc.RxOK))
		}
	}
	if len(r.Ping6) != r.wantPing6 {
		p = append(p, fmt.Sprintf("%d IPv6 ping runs, want %d (one each way between tenant A's sites)", len(r.Ping6), r.wantPing6))
	}
	for _, pg := range r.Ping6 {
		if pg.Rx != pg.Sent || pg.Sent == 0 {
			p = append(p, fmt.Sprintf("tenant %s %s->%s: %d/%d IPv6 pings answered", pg.Tenant, pg.From, pg.To, pg.Rx, pg.Sent))
		}
	}
	if len(r.Bulk) != r.wantBulk {
		p = append(p, fmt.Sprintf("%d bulk TCP transfers, want %d (one per tenant)", len(r.Bulk), r.wantBulk))
	}
	for _, b := range r.Bulk {
		if !b.SentOK || !b.RecvOK {
			p = append(p, fmt.Sprintf("tenant %s bulk TCP %s<->%s: sent checked %v, received checked %v: %s",
				b.Tenant, b.From, b.To, b.SentOK, b.RecvOK, b.Error))
		}
	}
	for h, msgs := range r.Foreign {
		if len(msgs) > 0 {
			p = append(p, fmt.Sprintf("%s received %d messages of another tenant, e.g. %s", h, len(msgs), msgs[0]))
		}
	}
	return p
}

// TraceTransit runs `seg6x trace --frames` at the transit node p for count ICMP packets it processes
// as a local SID, while hA1 pings hA2 (at most 15 pings, the trace at most 20 s), and returns what the
// trace printed: the SID, its behavior and the headers in and out (in the uSID lab, the container
// shifted by p's uN).
func (l *Lab) TraceTransit(count int) (string, error) {
	type result struct {
		out string
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := l.Seg6x("p", "trace", "--frames", "--count", strconv.Itoa(count), "--duration", "20s", "class", "sid", "icmp")
		done <- result{out, err}
	}()
	time.Sleep(2 * time.Second) // the traced build loads and arms
	dst := strings.Split(l.topo.hosts[0].Addr, "/")[0]
	for _, h := range l.topo.hosts {
		if h.Name == "hA2" {
			dst = strings.Split(h.Addr, "/")[0]
		}
	}
	l.Ping("hA1", dst, 15)
	r := <-done
	return r.out, r.err
}

// routerRunNs sums the run time of every router's seg6x programs (seg6x status), 0 for a router that
// does not answer.
func (l *Lab) routerRunNs() uint64 {
	var n uint64
	for _, r := range l.topo.routers {
		out, err := l.Seg6x(r, "status", "--json")
		var st pb.StatusReply
		if err == nil && protojson.Unmarshal([]byte(out), &st) == nil {
			n += st.ProgRunNs
		}
	}
	return n
}
