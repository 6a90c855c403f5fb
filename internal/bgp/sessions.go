package bgp

// sessions.go: each neighbor's sessions as seg6x follows them. GoBGP's peer state events become log
// lines (every state change with its reason; at info when a session comes up, at warn when one fails
// or goes down) and what `bgp show neighbors` adds to GoBGP's own view of the neighbor: how often its
// session went down, the last error and when, and the families not sent to it and why. A line that
// repeats (a peer failing the same way every few seconds) is logged at its level once a minute, at
// debug in between.

import (
	"context"
	"log/slog"
	"net/netip"
	"strings"
	"time"

	api "github.com/osrg/gobgp/v4/api"
	"github.com/osrg/gobgp/v4/pkg/apiutil"
	gobgp "github.com/osrg/gobgp/v4/pkg/packet/bgp"
	"github.com/osrg/gobgp/v4/pkg/server"
)

// session is what the speaker knows of a neighbor's sessions (kept while the speaker runs, across
// server restarts, until the neighbor leaves the configuration).
type session struct {
	state     gobgp.FSMState
	flaps     uint64 // times its established session went down
	lastErr   string
	lastErrAt time.Time
	notifAt   time.Time         // the last NOTIFICATION sent or received (lastErr says which)
	notSent   map[string]string // family -> why it is not sent (the last session's OPENs)
}

// repeatEvery is how often the same line of a neighbor is logged at its level.
const repeatEvery = time.Minute

type repeat struct {
	at time.Time
	n  uint64 // lines logged at debug since
}

// logRepeat logs a line about a neighbor at level, or at debug when the line with the same key was
// logged at its level less than a minute ago; the next line at its level says how many it stands for
// (s.mu not held).
func (s *Speaker) logRepeat(level slog.Level, key, msg string, attrs ...slog.Attr) {
	now := time.Now()
	s.mu.Lock()
	r := s.repeats[key]
	if r != nil && now.Sub(r.at) < repeatEvery {
		r.n++
		level = slog.LevelDebug
	} else {
		if r != nil && r.n > 0 {
			attrs = append(attrs, slog.Uint64("repeated", r.n))
		}
		if len(s.repeats) >= 1000 { // lines of many kinds: forget those not seen for a while
			for k, r := range s.repeats {
				if now.Sub(r.at) >= repeatEvery {
					delete(s.repeats, k)
				}
			}
		}
		s.repeats[key] = &repeat{at: now}
	}
	s.mu.Unlock()
	s.log.LogAttrs(context.Background(), level, msg, attrs...)
}

// notificationWindow: a session that fails this soon after a NOTIFICATION failed because of it
// (its last error stays the NOTIFICATION's, not GoBGP's summary of it).
const notificationWindow = 5 * time.Second

var stateNames = map[gobgp.FSMState]string{gobgp.BGP_FSM_IDLE: "idle", gobgp.BGP_FSM_CONNECT: "connect",
	gobgp.BGP_FSM_ACTIVE: "active", gobgp.BGP_FSM_OPENSENT: "opensent", gobgp.BGP_FSM_OPENCONFIRM: "openconfirm",
	gobgp.BGP_FSM_ESTABLISHED: "established"}

func stateName(s gobgp.FSMState) string {
	if n, ok := stateNames[s]; ok {
		return n
	}
	return s.String()
}

// failures are the reasons a session fails (the others are its normal course, or this node's
// configuration).
var failures = map[api.PeerState_DisconnectReason]string{
	api.PeerState_DISCONNECT_REASON_HOLD_TIMER_EXPIRED:    "hold timer expired",
	api.PeerState_DISCONNECT_REASON_NOTIFICATION_SENT:     "notification sent",
	api.PeerState_DISCONNECT_REASON_NOTIFICATION_RECEIVED: "notification received",
	api.PeerState_DISCONNECT_REASON_READ_FAILED:           "connection lost (read failed)",
	api.PeerState_DISCONNECT_REASON_WRITE_FAILED:          "connection lost (write failed)",
	api.PeerState_DISCONNECT_REASON_RESTART_TIMER_EXPIRED: "graceful restart timer expired",
	api.PeerState_DISCONNECT_REASON_GRACEFUL_RESTART:      "peer restarting (graceful restart)",
	api.PeerState_DISCONNECT_REASON_INVALID_MSG:           "invalid message",
	api.PeerState_DISCONNECT_REASON_HARD_RESET:            "hard reset",
	api.PeerState_DISCONNECT_REASON_BAD_PEER_AS:           "bad peer AS",
}

// stateReason is why a session changed state, as words (GoBGP's own for its normal course).
func stateReason(r api.PeerState_DisconnectReason, msg string) string {
	switch r {
	case api.PeerState_DISCONNECT_REASON_ADMIN_DOWN:
		return "administratively down"
	case api.PeerState_DISCONNECT_REASON_DECONFIGURED:
		return "neighbor removed or reconfigured"
	case api.PeerState_DISCONNECT_REASON_IDLE_TIMER_EXPIRED:
		return "idle hold timer expired"
	}
	if s, ok := failures[r]; ok {
		return s
	}
	return strings.ReplaceAll(msg, "-", " ")
}

// sessionOf is the record of neighbor a (s.mu held).
func (s *Speaker) sessionOf(a netip.Addr) *session {
	ss := s.sessions[a]
	if ss == nil {
		ss = &session{}
		s.sessions[a] = ss
	}
	return ss
}

// peerEvent follows a neighbor's session (GoBGP's watcher goroutine of server srv): logs the change,
// counts a lost session, keeps its last error, and when it comes up reads what it negotiated.
func (s *Speaker) peerEvent(srv *server.BgpServer, e *apiutil.WatchEventMessage_PeerEvent, at time.Time) {
	if e.Type != apiutil.PEER_EVENT_STATE {
		return
	}
	addr, st := e.Peer.Conf.NeighborAddress, e.Peer.State
	now := st.SessionState
	_, failed := failures[st.DisconnectReason]
	reason := stateReason(st.DisconnectReason, st.DisconnectMessage)

	s.mu.Lock()
	if now != gobgp.BGP_FSM_ESTABLISHED {
		delete(s.eor, addr)
	}
	ss := s.sessionOf(addr)
	old := ss.state
	ss.state = now
	lost := old == gobgp.BGP_FSM_ESTABLISHED && now != gobgp.BGP_FSM_ESTABLISHED
	if lost {
		ss.flaps++
	}
	if failed && now != gobgp.BGP_FSM_ESTABLISHED {
		if at.Sub(ss.notifAt) < notificationWindow && ss.lastErr != "" {
			reason = ss.lastErr // the NOTIFICATION, decoded
		} else {
			ss.lastErr, ss.lastErrAt = reason, at
		}
	}
	flaps := ss.flaps
	s.mu.Unlock()

	if old == now && !failed {
		return
	}
	level := slog.LevelDebug
	switch {
	case now == gobgp.BGP_FSM_ESTABLISHED:
		level = slog.LevelInfo
	case failed:
		level = slog.LevelWarn
	case lost:
		level = slog.LevelInfo // this node's own doing: a neighbor removed or changed, BGP stopped
	}
	attrs := []slog.Attr{slog.String("neighbor", addr.String()), slog.String("old", stateName(old)),
		slog.String("new", stateName(now)), slog.String("reason", reason)}
	if lost {
		attrs = append(attrs, slog.Uint64("flaps", flaps))
	}
	if level == slog.LevelDebug {
		s.log.LogAttrs(context.Background(), level, "bgp session state", attrs...)
	} else {
		s.logRepeat(level, "state "+addr.String()+" "+stateName(old)+" "+stateName(now)+" "+reason, "bgp session state", attrs...)
	}

	switch {
	case now == gobgp.BGP_FSM_ESTABLISHED:
		s.established(srv, addr, st.RemoteCap)
	case lost:
		s.gate.down(srv, addr)
	}
}

// notification records and logs a NOTIFICATION sent to or received from neighbor a (GoBGP's log,
// gobgplog.go).
func (s *Speaker) notification(a netip.Addr, sent bool, code, sub uint8, data []byte, communication string) {
	dec := notificationData(code, sub, data)
	if communication != "" {
		c := communicationData(append([]byte{byte(len(communication))}, communication...))
		if dec != "" && !strings.HasPrefix(dec, "data ") {
			c += ", " + dec
		}
		dec = c
	}
	dir := "received"
	if sent {
		dir = "sent"
	}
	text := "notification " + dir + ": " + notificationText(code, sub, dec)
	now := time.Now()
	s.mu.Lock()
	ss := s.sessionOf(a)
	ss.lastErr, ss.lastErrAt, ss.notifAt = text, now, now
	s.mu.Unlock()
	attrs := []slog.Attr{slog.String("neighbor", a.String()), slog.Int("code", int(code)), slog.Int("subcode", int(sub)),
		slog.String("error", notificationName(code, sub))}
	if dec != "" {
		attrs = append(attrs, slog.String("data", dec))
	}
	s.logRepeat(slog.LevelWarn, a.String()+" "+text, "bgp notification "+dir, attrs...)
}

// forgetSessions drops the records of neighbors no longer configured (s.mu not held).
func (s *Speaker) forgetSessions(configured func(netip.Addr) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for a := range s.sessions {
		if !configured(a) {
			delete(s.sessions, a)
		}
	}
}
