package model

// opkind.go: what an operation does with its object (add, replace, delete), as the store's operations
// and the diff name it.

import "fmt"

// OpKind says what an operation does with its object.
type OpKind int

const (
	OpAdd     OpKind = iota + 1 // create; an error if it exists
	OpReplace                   // create or replace
	OpDelete                    // remove; an error if it does not exist
)

func (k OpKind) String() string {
	switch k {
	case OpAdd:
		return "add"
	case OpReplace:
		return "replace"
	case OpDelete:
		return "delete"
	}
	return fmt.Sprintf("op(%d)", int(k))
}
