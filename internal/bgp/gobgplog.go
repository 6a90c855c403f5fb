package bgp

// gobgplog.go: GoBGP's own log, read as it is written. The embedded server logs through log/slog, and
// some of what it says is nowhere else: the NOTIFICATIONs it sends and receives with their data (its
// peer events carry only a summary, and none for a NOTIFICATION answered before a session is up), and
// the OPEN it refuses as malformed. This handler turns those into the speaker's lines and records;
// GoBGP's other lines of level info and above go to the speaker's log at debug level.

import (
	"context"
	"log/slog"
	"net/netip"
	"strings"
)

// gobgpLog is the slog.Handler given to GoBGP's server.
type gobgpLog struct {
	s     *Speaker
	attrs []slog.Attr // from WithAttrs (GoBGP's Topic and Key: the neighbor)
}

// Enabled: what this handler reads is at info and above; GoBGP's debug lines (one per path and timer)
// are not even made.
func (h *gobgpLog) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelInfo }

func (h *gobgpLog) WithAttrs(as []slog.Attr) slog.Handler {
	return &gobgpLog{s: h.s, attrs: append(h.attrs[:len(h.attrs):len(h.attrs)], as...)}
}

// WithGroup: GoBGP uses none; its attributes stay flat here.
func (h *gobgpLog) WithGroup(string) slog.Handler { return h }

func (h *gobgpLog) Handle(ctx context.Context, r slog.Record) error {
	attrs := make(map[string]slog.Value, len(h.attrs)+r.NumAttrs())
	for _, a := range h.attrs {
		attrs[a.Key] = a.Value.Resolve()
	}
	r.Attrs(func(a slog.Attr) bool {
		attrs[a.Key] = a.Value.Resolve()
		return true
	})
	peer, _ := netip.ParseAddr(attrs["Key"].String())
	switch {
	case peer.IsValid() && (r.Message == "sent notification" || r.Message == "received notification"):
		var data []byte
		if v, ok := attrs["Data"]; ok && v.Kind() == slog.KindAny {
			data, _ = v.Any().([]byte)
		}
		comm := ""
		if v, ok := attrs["Communicated-Reason"]; ok {
			comm = v.String()
		}
		h.s.notification(peer, r.Message == "sent notification", uint8(attrs["Code"].Int64()), uint8(attrs["Subcode"].Int64()), data, comm)
		return nil
	case peer.IsValid() && strings.HasPrefix(r.Message, "Session will be reset due to malformed BGP"):
		msg := attrs["Error"].String()
		if strings.Contains(msg, "CapabilityExtendedNexthop") {
			h.s.emptyENH(peer, msg)
			return nil
		}
		h.s.logRepeat(slog.LevelWarn, "malformed "+peer.String()+" "+msg, "bgp malformed message",
			slog.String("neighbor", peer.String()), slog.String("state", attrs["State"].String()), slog.String("error", msg))
		return nil
	}
	out := make([]slog.Attr, 0, len(attrs))
	out = append(out, h.attrs...)
	r.Attrs(func(a slog.Attr) bool {
		out = append(out, a)
		return true
	})
	h.s.log.LogAttrs(ctx, slog.LevelDebug, "gobgp: "+r.Message, out...)
	return nil
}
