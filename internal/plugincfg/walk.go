package plugincfg

// walk.go: the walk NewSchema makes through a struct's BTF: members, arrays and nested structs down
// to single values (integers, enums, the SDK's typedefs), each layout it refuses and why, and the
// bounds that keep hand-made BTF (cycles, huge nests) from running long.

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/cilium/ebpf/btf"
)

// maxDepth bounds nesting (structs, arrays, typedefs and qualifiers), so a cyclic type is refused.
const maxDepth = 16

// maxSteps bounds the types one walk visits (a real configuration needs a few thousand at most), so
// that hand-made BTF cannot make it run for long.
const maxSteps = 1 << 16

// maxRefusals is how many refusals an error lists; it counts the rest.
const maxRefusals = 20

// Tags a member may carry (SEG6X_HELP makes the first).
const (
	tagHelp     = "seg6x:help="
	tagRequired = "seg6x:required"
)

// walker collects the refusals of one walk.
type walker struct {
	errs  []error
	more  int // refusals beyond maxRefusals
	steps int // types visited
}

func (w *walker) refuse(path, format string, args ...any) {
	if len(w.errs) == maxRefusals {
		w.more++
		return
	}
	w.errs = append(w.errs, fmt.Errorf("member %s: %s", path, fmt.Sprintf(format, args...)))
}

// fields walks a struct's members: its leaves with names relative to it, at offsets from its start.
func (w *walker) fields(s *btf.Struct, path string, depth int) ([]leaf, uint32, bool) {
	var out []leaf
	ok := true
	var end uint32 // where the member before ends
	for _, m := range s.Members {
		mpath := joinName(path, m.Name)
		if m.Name == "" {
			mpath = joinName(path, "(anonymous)")
		} else if !isIdent(m.Name) {
			w.refuse(mpath, "%q is not a C identifier", m.Name)
			ok = false
			continue
		}
		if m.BitfieldSize != 0 {
			w.refuse(mpath, "a bitfield (%d bits): seg6x writes whole bytes; make it an integer of its own", m.BitfieldSize)
			ok = false
			continue
		}
		if m.Offset%8 != 0 {
			w.refuse(mpath, "at bit %d, not at a byte", m.Offset)
			ok = false
			continue
		}
		help, required, err := memberTags(m.Tags)
		if err != nil {
			w.refuse(mpath, "%v", err)
			ok = false
			continue
		}
		if m.Name == "" {
			if _, isStruct := under(m.Type).(*btf.Struct); !isStruct {
				w.refuse(mpath, "a member without a name")
				ok = false
				continue
			}
		}
		off := uint32(m.Offset / 8)
		if off < end {
			w.refuse(mpath, "at byte %d, inside the member before it (which ends at byte %d)", off, end)
			ok = false
			continue
		}
		sub, size, good := w.value(m.Type, mpath, depth+1)
		if !good {
			ok = false
			continue
		}
		if uint64(off)+uint64(size) > uint64(s.Size) {
			w.refuse(mpath, "bytes %d..%d, beyond the struct's %d bytes", off, uint64(off)+uint64(size)-1, s.Size)
			ok = false
			continue
		}
		end = off + size
		if required && !(len(sub) == 1 && sub[0].Name == "") {
			w.refuse(mpath, "%s marks a single value, not a struct or an array: tag the members below it", tagRequired)
			ok = false
			continue
		}
		for _, l := range sub {
			l.Name = joinName(m.Name, l.Name)
			l.pattern = joinName(m.Name, l.pattern)
			l.norm = joinName(m.Name, l.norm)
			l.Offset += off
			if l.Help == "" {
				l.Help = help
			}
			l.Required = l.Required || required
			out = append(out, l)
		}
	}
	return out, s.Size, ok
}

// value walks a member's type: its leaves (one with an empty name for a single value), with names
// and offsets relative to the member, and its size.
func (w *walker) value(t btf.Type, path string, depth int) ([]leaf, uint32, bool) {
	if depth > maxDepth {
		w.refuse(path, "nested more than %d deep", maxDepth)
		return nil, 0, false
	}
	if w.steps++; w.steps > maxSteps {
		if w.steps == maxSteps+1 { // listed even beyond maxRefusals: it ends the walk
			w.errs = append(w.errs, fmt.Errorf("member %s: more than %d types to walk: not a configuration clang makes", path, maxSteps))
		}
		return nil, 0, false
	}
	t, err := resolve(t, true)
	if err != nil {
		w.refuse(path, "%v", err)
		return nil, 0, false
	}
	if td, ok := t.(*btf.Typedef); ok {
		st := sdkTypes[td.Name]
		size, err := sizeOf(td.Type, 0)
		if err != nil || size != st.size {
			w.refuse(path, "%s is %d bytes here; the SDK's is %d: rebuild the plugin with this seg6x's seg6x_plugin.h", td.Name, size, st.size)
			return nil, 0, false
		}
		return []leaf{{Key: Key{Type: st.desc, Size: size}, kind: st.kind}}, size, true
	}
	switch v := t.(type) {
	case *btf.Int:
		switch v.Size {
		case 1, 2, 4, 8:
		default:
			w.refuse(path, "a %d-byte integer: seg6x writes integers of 1, 2, 4 or 8 bytes", v.Size)
			return nil, 0, false
		}
		l := leaf{Key: Key{Size: v.Size}, kind: kindInt, signed: v.Encoding == btf.Signed}
		if v.Encoding == btf.Bool && v.Size == 1 {
			l.kind = kindBool
		}
		l.Type = l.describe()
		return []leaf{l}, v.Size, true
	case *btf.Enum:
		switch v.Size {
		case 1, 2, 4, 8:
		default:
			w.refuse(path, "a %d-byte enum: seg6x writes enums of 1, 2, 4 or 8 bytes", v.Size)
			return nil, 0, false
		}
		l := leaf{Key: Key{Size: v.Size}, kind: kindEnum, signed: v.Signed, enum: v}
		l.Type = l.describe()
		return []leaf{l}, v.Size, true
	case *btf.Struct:
		if v.Size == 0 {
			w.refuse(path, "an empty struct (0 bytes): nothing to set")
			return nil, 0, false
		}
		if v.Size > MaxSize {
			w.refuse(path, "a struct of %d bytes: a configuration is at most %d", v.Size, MaxSize)
			return nil, 0, false
		}
		return w.fields(v, path, depth)
	case *btf.Array:
		return w.array(v, path, depth)
	case *btf.Union:
		w.refuse(path, "a union: seg6x cannot tell which of its members to write")
	case *btf.Pointer:
		w.refuse(path, "a pointer: a configuration holds values, not addresses")
	case *btf.Float:
		w.refuse(path, "a floating-point number: seg6x writes integers; scale it into one")
	case *btf.FuncProto, *btf.Func:
		w.refuse(path, "a function type")
	case *btf.Void:
		w.refuse(path, "void (0 bytes)")
	case *btf.Fwd:
		w.refuse(path, "an incomplete type (a forward declaration only)")
	default:
		w.refuse(path, "of a kind seg6x cannot write (%T)", t)
	}
	return nil, 0, false
}

// array walks an array: its element once, then a copy of its leaves per index.
func (w *walker) array(a *btf.Array, path string, depth int) ([]leaf, uint32, bool) {
	if a.Nelems == 0 {
		w.refuse(path, "an array of 0 elements: nothing to set")
		return nil, 0, false
	}
	elem, esize, ok := w.value(a.Type, path+"[]", depth+1)
	if !ok {
		return nil, 0, false
	}
	total := uint64(esize) * uint64(a.Nelems)
	if total > MaxSize {
		w.refuse(path, "an array of %d bytes: a configuration is at most %d", total, MaxSize)
		return nil, 0, false
	}
	span := "{0.." + strconv.FormatUint(uint64(a.Nelems-1), 10) + "}"
	out := make([]leaf, 0, len(elem)*int(a.Nelems))
	for i := range a.Nelems {
		idx := strconv.FormatUint(uint64(i), 10)
		for _, l := range elem {
			l.Name = joinName(idx, l.Name)
			l.pattern = joinName(span, l.pattern)
			l.norm = joinName("N", l.norm)
			l.Offset += i * esize
			out = append(out, l)
		}
	}
	return out, uint32(total), true
}

// resolve looks through qualifiers and typedefs; with sdk, it stops at an SDK typedef (returned
// as the *btf.Typedef).
func resolve(t btf.Type, sdk bool) (btf.Type, error) {
	for range 4 * maxDepth {
		if isNil(t) {
			return nil, errors.New("no type")
		}
		switch v := t.(type) {
		case *btf.Typedef:
			if _, ok := sdkTypes[v.Name]; ok && sdk {
				return v, nil
			}
			t = v.Type
		case *btf.Const:
			t = v.Type
		case *btf.Volatile:
			t = v.Type
		case *btf.Restrict:
			t = v.Type
		case *btf.TypeTag:
			t = v.Type
		default:
			return t, nil
		}
	}
	return nil, errors.New("typedefs and qualifiers nested too deeply (a cycle?)")
}

// under is t without qualifiers and typedefs (nil when that fails).
func under(t btf.Type) btf.Type {
	u, _ := resolve(t, false)
	return u
}

// sizeOf is a type's size in bytes (of those an SDK typedef may stand for).
func sizeOf(t btf.Type, depth int) (uint32, error) {
	if depth > maxDepth {
		return 0, errors.New("nested too deeply")
	}
	switch v := under(t).(type) {
	case *btf.Int:
		return v.Size, nil
	case *btf.Enum:
		return v.Size, nil
	case *btf.Struct:
		return v.Size, nil
	case *btf.Array:
		n, err := sizeOf(v.Type, depth+1)
		if err != nil {
			return 0, err
		}
		total := uint64(n) * uint64(v.Nelems)
		if total > MaxSize {
			return 0, errors.New("too large")
		}
		return uint32(total), nil
	}
	return 0, errors.New("no size")
}

// isNil is true for a nil type, also one of a concrete type (hand-made BTF may have it).
func isNil(t btf.Type) bool {
	if t == nil {
		return true
	}
	v := reflect.ValueOf(t)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// memberTags reads a member's decl tags: its help and whether it is required. Tags of other tools
// are left alone; an unknown seg6x: tag is a typo to report.
func memberTags(tags []string) (help string, required bool, err error) {
	for _, t := range tags {
		switch {
		case strings.HasPrefix(t, tagHelp):
			help = strings.TrimSpace(joinWords(help, strings.TrimPrefix(t, tagHelp)))
		case t == tagRequired:
			required = true
		case strings.HasPrefix(t, "seg6x:"):
			return "", false, fmt.Errorf("unknown tag %q; seg6x knows %sTEXT and %s", t, tagHelp, tagRequired)
		}
	}
	return help, required, nil
}

func joinWords(a, b string) string {
	if a == "" {
		return b
	}
	return a + " " + b
}

// joinName joins key parts with '.', leaving out empty ones.
func joinName(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "." + b
}

// isIdent is true for a C identifier (a key's part must not hold '.', '=' or spaces).
func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		switch {
		case c == '_', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}
