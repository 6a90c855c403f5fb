package daemon

// logging.go: the daemon's log, through log/slog: --log-level and --log-format, the printf-style logf
// its parts are given (a message that carries an error is a warning), and the audit line every commit
// leaves (core.Controller.OnCommit).

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/seg6x/seg6x/internal/core"
	"github.com/seg6x/seg6x/internal/model"
)

// LogLevel is --log-level: debug, info (the zero value), warn or error. As a flag value (pflag.Value)
// a name it does not know fails the command line's parse.
type LogLevel struct{ slog.Level }

var logLevels = map[string]slog.Level{"debug": slog.LevelDebug, "info": slog.LevelInfo, "warn": slog.LevelWarn,
	"warning": slog.LevelWarn, "error": slog.LevelError}

func (l *LogLevel) Set(s string) error {
	v, ok := logLevels[strings.ToLower(s)]
	if !ok {
		return fmt.Errorf("%q is not a log level: debug, info, warn or error", s)
	}
	l.Level = v
	return nil
}

func (l LogLevel) String() string { return strings.ToLower(l.Level.String()) }
func (LogLevel) Type() string     { return "level" }

// LogFormat is --log-format: text (the zero value: "TIME LEVEL message key=value ...", one line per
// event, readable in journald) or json (one JSON object per line).
type LogFormat string

func (f *LogFormat) Set(s string) error {
	switch strings.ToLower(s) {
	case "text":
		*f = "text"
	case "json":
		*f = "json"
	default:
		return fmt.Errorf("%q is not a log format: text or json", s)
	}
	return nil
}

func (f LogFormat) String() string {
	if f == "" {
		return "text"
	}
	return string(f)
}

func (LogFormat) Type() string { return "format" }

// NewLogger writes records of level and above to w in format.
func NewLogger(w io.Writer, level slog.Leveler, format LogFormat) *slog.Logger {
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level}))
	}
	out := &textOut{w: w}
	attrs := slog.NewTextHandler(&out.attrs, &slog.HandlerOptions{Level: slog.LevelDebug,
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) == 0 && (a.Key == slog.TimeKey || a.Key == slog.LevelKey || a.Key == slog.MessageKey) {
				return slog.Attr{}
			}
			return a
		}})
	return slog.New(&textHandler{level: level, out: out, attrs: attrs})
}

// textHandler writes "2006-01-02T15:04:05.000Z LEVEL message key=value ...": the time in UTC, the
// message as it reads, then the attributes as slog's text handler writes them.
type textHandler struct {
	level slog.Leveler
	out   *textOut
	attrs slog.Handler // a text handler without time, level and message, writing to out.attrs
}

// textOut is what a text handler and the handlers made from it (WithAttrs, WithGroup) share.
type textOut struct {
	mu    sync.Mutex
	w     io.Writer
	attrs bytes.Buffer
	line  bytes.Buffer
}

func (h *textHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level.Level() }

func (h *textHandler) Handle(ctx context.Context, r slog.Record) error {
	o := h.out
	o.mu.Lock()
	defer o.mu.Unlock()
	o.attrs.Reset()
	if err := h.attrs.Handle(ctx, r); err != nil {
		return err
	}
	o.line.Reset()
	if !r.Time.IsZero() {
		o.line.WriteString(r.Time.UTC().Format("2006-01-02T15:04:05.000Z "))
	}
	o.line.WriteString(r.Level.String())
	o.line.WriteByte(' ')
	o.line.WriteString(r.Message)
	if a := bytes.TrimSpace(o.attrs.Bytes()); len(a) > 0 {
		o.line.WriteByte(' ')
		o.line.Write(a)
	}
	o.line.WriteByte('\n')
	_, err := o.w.Write(o.line.Bytes())
	return err
}

func (h *textHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &textHandler{level: h.level, out: h.out, attrs: h.attrs.WithAttrs(as)}
}

func (h *textHandler) WithGroup(name string) slog.Handler {
	return &textHandler{level: h.level, out: h.out, attrs: h.attrs.WithGroup(name)}
}

// logfTo is the printf-style logger the daemon's parts are given (logf): info, or warn when the
// message carries an error (an argument of type error) or says that something failed or is
// unavailable.
func logfTo(l *slog.Logger) func(format string, args ...any) {
	return func(format string, args ...any) {
		level := slog.LevelInfo
		if isFailure(format, args) {
			level = slog.LevelWarn
		}
		ctx := context.Background()
		if l.Enabled(ctx, level) {
			l.Log(ctx, level, fmt.Sprintf(format, args...))
		}
	}
}

func isFailure(format string, args []any) bool {
	for _, a := range args {
		if _, ok := a.(error); ok {
			return true
		}
	}
	return strings.Contains(format, "failed") || strings.Contains(format, "unavailable")
}

// auditTo logs one line per commit, "commit" with origin, result, generation, counts (added,
// changed, removed, and per kind), duration (and error): info when it applied, warn when it was
// refused, error when it failed (nothing changed), debug for a dry run.
func auditTo(l *slog.Logger) func(core.Record) {
	return func(r core.Record) {
		level := slog.LevelInfo
		switch {
		case r.Result == core.ResultError:
			level = slog.LevelError
		case r.Err != nil:
			level = slog.LevelWarn
		case r.DryRun:
			level = slog.LevelDebug
		}
		ctx := context.Background()
		if !l.Enabled(ctx, level) {
			return
		}
		var added, changed, removed int
		var kinds map[string]*model.KindCounts
		if r.Diff != nil {
			added, changed, removed = r.Diff.Counts()
			kinds = r.Diff.Kinds
		}
		attrs := []slog.Attr{slog.String("origin", r.Origin), slog.String("result", r.Result),
			slog.Uint64("generation", r.Generation), slog.Int("added", added), slog.Int("changed", changed),
			slog.Int("removed", removed), {Key: "kinds", Value: kindsValue(kinds)}, slog.Duration("duration", r.Duration)}
		if r.Err != nil {
			msg := r.Err.Error()
			if first, _, more := strings.Cut(msg, "\n"); more {
				msg = first + " ..."
			}
			attrs = append(attrs, slog.String("error", msg))
		}
		l.LogAttrs(ctx, level, "commit", attrs...)
	}
}

// kindsValue is a diff's counts per kind as a group of groups (kinds.route.added=3), only the counts
// that are not zero; empty (left out of the line) when there are none.
func kindsValue(kinds map[string]*model.KindCounts) slog.Value {
	var out []slog.Attr
	for _, k := range slices.Sorted(maps.Keys(kinds)) {
		c := kinds[k]
		var n []slog.Attr
		for _, f := range []struct {
			key string
			v   int
		}{{"added", c.Added}, {"changed", c.Changed}, {"removed", c.Removed}} {
			if f.v != 0 {
				n = append(n, slog.Int(f.key, f.v))
			}
		}
		if len(n) > 0 {
			out = append(out, slog.Attr{Key: k, Value: slog.GroupValue(n...)})
		}
	}
	return slog.GroupValue(out...)
}
