package lab

// bgpdemo.go: `seg6x-lab demo --bgp`: build the BGP lab, wait until every PE learned the other sites,
// send both tenants' traffic between every pair of sites, stop the last PE's daemon (its prefixes must
// be withdrawn from the others and its site become unreachable), start it again (re-learned,
// reachable), and report all of it (BGPReport, as text or JSON). The caller removes the lab.

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"
)

// Bounds of the demo's (and the test's) waits.
const (
	BGPConvergeTimeout = 60 * time.Second // all PEs up: every route learned
	BGPWithdrawTimeout = 30 * time.Second // a PE stopped: its routes gone from the others
)

// BGPReport is what the BGP demo observed.
type BGPReport struct {
	RR          string                       `json:"route_reflector"` // frr or gobgpd
	RTC         bool                         `json:"rtc"`             // route target constraint on every session (BGPOptions.RTC)
	RRSessions  map[string]string            `json:"rr_sessions"`     // client address -> state, at the reflector
	ServiceSIDs map[string]map[string]string `json:"service_sids"`    // pe -> tenant -> SID
	Converged   float64                      `json:"converged_seconds"`
	PEs         []BGPPE                      `json:"pes"`
	Traffic     *Report                      `json:"traffic"`
	Withdraw    BGPPhase                     `json:"withdraw"`
	Relearn     BGPPhase                     `json:"relearn"`
	Problems    []string                     `json:"problems"`
}

// BGPPE is one PE's BGP sessions and learned routes.
type BGPPE struct {
	PE       string       `json:"pe"`
	Sessions []BGPSession `json:"sessions"`
	Learned  BGPRoutes    `json:"learned"`
}

// BGPSession is one session of a PE's speaker.
type BGPSession struct {
	Address    string `json:"address"`
	State      string `json:"state"`
	Received   uint64 `json:"received"`
	Accepted   uint64 `json:"accepted"`
	Advertised uint64 `json:"advertised"`
	RTC        bool   `json:"rtc"` // route target constraint negotiated
}

// BGPPhase is the lab after one PE's daemon stopped or started: how long the others took to hold
// what they should, what they held, and the pings towards the PE's site.
type BGPPhase struct {
	Event   string               `json:"event"`
	Seconds float64              `json:"seconds"`
	Learned map[string]BGPRoutes `json:"learned"`
	Pings   []Reach              `json:"pings"`
}

// Reach is count pings from a host to its tenant's host on another site.
type Reach struct {
	Tenant   string `json:"tenant"`
	From     string `json:"from"`
	To       string `json:"to"`
	Sent     int    `json:"sent"`
	Received int    `json:"received"`
}

// PingSite pings from every host on another site each address of its tenant's host on site.
func (l *Lab) PingSite(site, count int) []Reach {
	var out []Reach
	for _, h := range l.topo.hosts {
		for _, p := range l.peers(h) {
			if p.Site != site {
				continue
			}
			for _, a := range []string{p.Addr, p.Addr6} {
				if a != "" {
					dst := hostAddr(a)
					out = append(out, Reach{Tenant: h.Tenant, From: h.Name, To: dst, Sent: count})
				}
			}
		}
	}
	var wg sync.WaitGroup // all at once: an unreachable site costs one ping run's wait, not one per run
	for i := range out {
		r := &out[i]
		wg.Go(func() { r.Received = l.Ping(r.From, r.To, count) })
	}
	wg.Wait()
	return out
}

// BGPDemo runs the demo on a BGP lab (NewBGP) and returns what it saw, also after an error.
func (l *Lab) BGPDemo(count int) (*BGPReport, error) {
	rep := &BGPReport{RR: l.topo.rrKind, RTC: l.topo.rtc}
	if err := l.Up(); err != nil {
		return rep, err
	}
	pes := l.topo.routers
	d, err := l.WaitBGP(pes, BGPConvergeTimeout)
	rep.Converged = d.Seconds()
	if err != nil {
		return rep, err
	}
	rep.ServiceSIDs = map[string]map[string]string{}
	for _, pe := range pes {
		if rep.ServiceSIDs[pe], err = l.ServiceSIDs(pe); err != nil {
			return rep, err
		}
		p, err := l.peReport(pe)
		if err != nil {
			return rep, err
		}
		rep.PEs = append(rep.PEs, p)
	}
	if rep.RRSessions, err = l.rr.Sessions(); err != nil {
		return rep, err
	}
	l.logf("lab %s: every PE learned the other sites in %.1f s; traffic between all sites", l.Prefix, rep.Converged)
	if rep.Traffic, err = l.Traffic(count); err != nil {
		return rep, err
	}
	rep.Problems = append(rep.Problems, rep.Traffic.Problems()...)

	last, site := pes[len(pes)-1], len(pes)
	l.logf("lab %s: stopping %s's daemon", l.Prefix, last)
	l.StopDaemon(last)
	rep.Withdraw = l.phase(last+" stopped", pes[:len(pes)-1], BGPWithdrawTimeout, site, count, &rep.Problems)
	l.logf("lab %s: starting %s's daemon again", l.Prefix, last)
	if err := l.StartDaemon(last); err != nil {
		return rep, err
	}
	rep.Relearn = l.phase(last+" started again", pes, BGPConvergeTimeout, site, count, &rep.Problems)
	return rep, nil
}

// phase waits for the PEs of up to hold what the others of up advertise, and pings site: with its
// PE in up, every ping must be answered; without it, none.
func (l *Lab) phase(event string, up []string, timeout time.Duration, site, count int, problems *[]string) BGPPhase {
	ph := BGPPhase{Event: event, Learned: map[string]BGPRoutes{}}
	d, err := l.WaitBGP(up, timeout)
	ph.Seconds = d.Seconds()
	if err != nil {
		*problems = append(*problems, event+": "+err.Error())
	}
	for _, pe := range up {
		ph.Learned[pe], _ = l.Learned(pe)
	}
	reachable := false
	for _, pe := range up {
		reachable = reachable || pe == l.topo.routers[site-1]
	}
	ph.Pings = l.PingSite(site, count)
	for _, r := range ph.Pings {
		if want := map[bool]int{true: r.Sent, false: 0}[reachable]; r.Received != want {
			*problems = append(*problems, fmt.Sprintf("%s: tenant %s %s -> %s: %d/%d pings answered, want %d",
				event, r.Tenant, r.From, r.To, r.Received, r.Sent, want))
		}
	}
	return ph
}

func (l *Lab) peReport(pe string) (BGPPE, error) {
	p := BGPPE{PE: pe}
	st, err := l.BGPStatus(pe)
	if err != nil {
		return p, err
	}
	for _, n := range st.Neighbors {
		p.Sessions = append(p.Sessions, BGPSession{n.Address, n.State, n.Received, n.Accepted, n.Advertised, n.Rtc})
	}
	p.Learned, err = l.Learned(pe)
	return p, err
}

// WriteText prints the report's BGP part (the traffic report has its own printer).
func (r *BGPReport) WriteText(out io.Writer) {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "\nroute reflector %s at %s, its sessions:", r.RR, BGPRRAddr)
	for _, a := range sortedKeys(r.RRSessions) {
		fmt.Fprintf(w, " %s %s", a, r.RRSessions[a])
	}
	if r.RTC {
		fmt.Fprintf(w, "\nroute target constraint (RFC 4684) on every session; tenant C (65000:300) on %s only",
			strings.Join(BGPTenantCPEs, " and "))
	}
	fmt.Fprintf(w, "\nevery PE held every other site's routes %.1f s after the daemons started\n", r.Converged)
	fmt.Fprintln(w, "\nPE\tSERVICE SIDS\tSESSION\tRTC\tRECEIVED\tACCEPTED\tADVERTISED")
	for _, p := range r.PEs {
		var sids []string
		for _, t := range sortedKeys(r.ServiceSIDs[p.PE]) {
			sids = append(sids, t+" "+r.ServiceSIDs[p.PE][t])
		}
		for _, s := range p.Sessions {
			fmt.Fprintf(w, "%s\t%s\t%s %s\t%v\t%d\t%d\t%d\n", p.PE, strings.Join(sids, ", "), s.Address, s.State, s.RTC, s.Received, s.Accepted, s.Advertised)
		}
	}
	w.Flush()
	fmt.Fprintln(w, "\nPE\tTENANT\tLEARNED PREFIX\tSEGMENT (the advertising PE's service SID)")
	for _, p := range r.PEs {
		writeRoutes(w, p.PE, p.Learned)
	}
	w.Flush()
	for _, ph := range []BGPPhase{r.Withdraw, r.Relearn} {
		if ph.Event == "" {
			continue
		}
		fmt.Fprintf(w, "\n%s: the PEs up held what they should after %.1f s\n", ph.Event, ph.Seconds)
		fmt.Fprintln(w, "PE\tTENANT\tLEARNED PREFIX\tSEGMENT")
		for _, pe := range sortedKeys(ph.Learned) {
			writeRoutes(w, pe, ph.Learned[pe])
		}
		w.Flush()
		fmt.Fprintln(w, "\nTENANT\tFROM\tTO\tPINGS ANSWERED")
		for _, p := range ph.Pings {
			fmt.Fprintf(w, "%s\t%s\t%s\t%d/%d\n", p.Tenant, p.From, p.To, p.Received, p.Sent)
		}
		w.Flush()
	}
}

func writeRoutes(w io.Writer, pe string, rs BGPRoutes) {
	for _, t := range sortedKeys(rs) {
		for _, p := range sortedKeys(rs[t]) {
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", pe, t, p, rs[t][p])
		}
	}
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
