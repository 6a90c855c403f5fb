package core

// errors.go: what kind of failure an error is, decided by its type (never by its text), so every front
// end reports it the same way (the gRPC adapter maps kinds to status codes).

import (
	"errors"

	"github.com/seg6x/seg6x/internal/model"
	"github.com/seg6x/seg6x/internal/state"
)

// Kind classifies an error of a change.
type Kind int

// Kinds of failure.
const (
	KindInternal Kind = iota // the data plane or the state file could not be written (all undone), or a bug
	KindInvalid              // the request is wrong: a bad object, a reference or an ownership conflict
	KindStale                // made for a generation that is no longer the running one
)

// KindOf says which kind of failure err is.
func KindOf(err error) Kind {
	var stale *StaleError
	var write *model.WriteError
	var field *model.FieldError
	var errs model.Errors
	var op *state.OpError
	switch {
	case errors.As(err, &stale):
		return KindStale
	case errors.As(err, &write):
		return KindInternal
	case errors.As(err, &field), errors.As(err, &errs), errors.As(err, &op):
		return KindInvalid
	}
	return KindInternal
}
