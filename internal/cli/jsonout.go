package cli

// jsonout.go: the one JSON encoding of every command's --json: API replies with their .proto field
// names, every field present, 64-bit integers as JSON numbers (protojson writes them as strings),
// and errors as {"error": {"message": ..., "code": ...}} on stdout with exit status 1.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// printProto prints an API message as JSON with the .proto field names (a stable format for scripts).
func printProto(m proto.Message) error {
	v, err := protoJSON(m)
	if err != nil {
		return err
	}
	return printJSON(v)
}

// protoJSON is m as a JSON value: protojson's, with its 64-bit integers made numbers.
func protoJSON(m proto.Message) (any, error) {
	b, err := protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true}.Marshal(m)
	if err != nil {
		return nil, err
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return numbers(v, m.ProtoReflect().Descriptor()), nil
}

// numbers walks v (a message md as protojson wrote it) and turns the 64-bit integer fields' strings
// into numbers.
func numbers(v any, md protoreflect.MessageDescriptor) any {
	obj, ok := v.(map[string]any)
	if !ok || md.FullName().Parent() == "google.protobuf" { // well-known types keep protojson's form
		return v
	}
	for k, x := range obj {
		fd := md.Fields().ByName(protoreflect.Name(k))
		if fd == nil {
			continue
		}
		switch {
		case fd.IsMap():
			if m, ok := x.(map[string]any); ok {
				for mk, mv := range m {
					m[mk] = fieldValue(mv, fd.MapValue())
				}
			}
		case fd.IsList():
			if l, ok := x.([]any); ok {
				for i := range l {
					l[i] = fieldValue(l[i], fd)
				}
			}
		default:
			obj[k] = fieldValue(x, fd)
		}
	}
	return obj
}

// fieldValue is one value of field fd with a 64-bit integer as a number.
func fieldValue(v any, fd protoreflect.FieldDescriptor) any {
	switch fd.Kind() {
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind,
		protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		if s, ok := v.(string); ok {
			if _, err := strconv.ParseFloat(s, 64); err == nil {
				return json.Number(s)
			}
		}
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return numbers(v, fd.Message())
	}
	return v
}

// jsonError is an error as --json writes it.
type jsonError struct {
	Error struct {
		Message string `json:"message"`
		Code    string `json:"code"` // the API's status code (e.g. InvalidArgument), "Error" for a local one
	} `json:"error"`
}

// printError writes err for the user: under --json as a jsonError on stdout, else a line on stderr.
func printError(err error) {
	if !g.jsonOut {
		fmt.Fprintln(os.Stderr, "seg6x:", err)
		return
	}
	var e jsonError
	e.Error.Message, e.Error.Code = err.Error(), "Error"
	var ae *apiError
	if errors.As(err, &ae) {
		e.Error.Code = ae.code.String()
	}
	if printJSON(e) != nil {
		fmt.Fprintln(os.Stderr, "seg6x:", err)
	}
}

// apiError is an error the API returned: its message, and its status code for --json.
type apiError struct {
	code codes.Code
	msg  string
}

func (e *apiError) Error() string { return e.msg }

// apiErr turns a gRPC status into the server's message (its code kept for --json).
func apiErr(err error) error {
	if err == nil {
		return nil
	}
	if s, ok := status.FromError(err); ok {
		return &apiError{code: s.Code(), msg: s.Message()}
	}
	return err
}
