package state

// errors.go: validation errors that name the object, the field and the reason.

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

func fieldErr(object, field, format string, args ...any) error {
	return &FieldError{Object: object, Field: field, Reason: fmt.Sprintf(format, args...)}
}
