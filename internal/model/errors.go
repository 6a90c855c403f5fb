package model

// errors.go: the errors a change can end with, by type (callers tell them apart with errors.As, never by
// their text): validation errors that name the object, the field and the reason (FieldError, Errors;
// internal/state's OpError wraps one), and a data plane or state file write that failed and was undone
// (WriteError).

import (
	"fmt"
	"strings"
)

// FieldError says which field of which object is wrong, and why.
type FieldError struct {
	Object string // e.g. `route 198.18.2.0/24 tenant blue`
	Field  string // e.g. `segs`
	Reason string
}

func (e *FieldError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("%s: %s", e.Object, e.Reason)
	}
	return fmt.Sprintf("%s: %s: %s", e.Object, e.Field, e.Reason)
}

// Errors is every problem found in one desired state.
type Errors []error

func (es Errors) Error() string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "\n")
}

// Collect runs checks f, which report each problem through add, and returns them as Errors (nil if
// none).
func Collect(f func(add func(error))) error {
	var errs Errors
	f(func(err error) { errs = append(errs, err) })
	if len(errs) == 0 {
		return nil
	}
	return errs
}

// FieldErr makes a FieldError about field of object (field "" for the object as a whole).
func FieldErr(object, field, format string, args ...any) error {
	return &FieldError{Object: object, Field: field, Reason: fmt.Sprintf(format, args...)}
}

// WriteError is a commit that passed validation but could not be written (a map update, an attach,
// the state journal); everything it wrote was restored.
type WriteError struct{ Err error }

func (e *WriteError) Error() string { return e.Err.Error() }
func (e *WriteError) Unwrap() error { return e.Err }
