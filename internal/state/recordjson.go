package state

// recordjson.go: the saved records (persist.go) as JSON. A route record, most of what a big state
// saves, is written here directly, byte for byte as encoding/json writes it; every other record goes
// through encoding/json, which also reads them all back.

import (
	"encoding/json"
	"strconv"
)

// appendRecord appends rec as json.Marshal would.
func appendRecord(b []byte, rec *record) ([]byte, error) {
	var key string
	var r *savedRoute
	switch {
	case *rec == (record{Route: rec.Route}):
		key, r = "r", rec.Route
	case *rec == (record{RouteDel: rec.RouteDel}):
		key, r = "r_del", rec.RouteDel
	}
	if r == nil || r.U != nil {
		cp := *rec // escapes into encoding/json (rec does not: callers keep theirs on the stack)
		j, err := json.Marshal(&cp)
		return append(b, j...), err
	}
	b = append(b, `{"`...)
	b = append(b, key...)
	b = append(b, `":{"t":`...)
	b = appendJSONString(b, r.T)
	b = append(b, `,"p":"`...)
	b, _ = r.P.AppendText(b) // no character of a prefix's text needs escaping
	b = append(b, '"')
	if r.Pol != 0 {
		b = strconv.AppendUint(append(b, `,"pol":`...), uint64(r.Pol), 10)
	}
	if r.O != "" {
		b = appendJSONString(append(b, `,"o":`...), string(r.O))
	}
	return append(b, "}}"...), nil
}

// appendJournalLine appends one journal line (without its newline) for commit gen: the records
// recs emits.
func appendJournalLine(b []byte, gen uint64, recs func(emit func(record))) ([]byte, error) {
	b = strconv.AppendUint(append(b, `{"gen":`...), gen, 10)
	b = append(b, `,"recs":[`...)
	first := len(b)
	var err error
	recs(func(rec record) {
		if err != nil {
			return
		}
		if len(b) > first {
			b = append(b, ',')
		}
		b, err = appendRecord(b, &rec)
	})
	if err != nil {
		return nil, err
	}
	return append(b, "]}"...), nil
}

// appendJSONString appends s quoted as encoding/json does: printable ASCII that needs no escape
// (encoding/json escapes <, > and & too) directly, anything else through encoding/json.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			j, _ := json.Marshal(s)
			return append(b, j...)
		}
	}
	return append(append(append(b, '"'), s...), '"')
}
