package cli

// jsonout_test.go: --json writes 64-bit integers as numbers at every depth (fields, lists, maps,
// nested messages) and leaves strings that look like numbers alone; errors are JSON objects.

import (
	"encoding/json"
	"errors"
	"testing"

	pb "github.com/seg6x/seg6x/api/seg6xv1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestProtoJSONNumbers(t *testing.T) {
	v, err := protoJSON(&pb.StatsReply{
		Actions:  map[string]*pb.Counter{"redirect": {Packets: 1 << 40, Bytes: 7}},
		SlowPath: &pb.SlowPath{Records: 12, LastError: "123"},
	})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(v)
	var got struct {
		Actions  map[string]struct{ Packets, Bytes any }
		SlowPath struct {
			Records   any `json:"records"`
			LastError any `json:"last_error"`
			Sent      any `json:"sent"`
		} `json:"slow_path"`
		Policies []any `json:"policies"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if p, ok := got.Actions["redirect"].Packets.(float64); !ok || p != 1<<40 {
		t.Errorf("map value's packets %#v: want the number 2^40\n%s", got.Actions["redirect"].Packets, b)
	}
	if r, ok := got.SlowPath.Records.(float64); !ok || r != 12 {
		t.Errorf("nested records %#v, want 12\n%s", got.SlowPath.Records, b)
	}
	if s, ok := got.SlowPath.Sent.(float64); !ok || s != 0 {
		t.Errorf("an unset counter %#v, want 0\n%s", got.SlowPath.Sent, b)
	}
	if s, ok := got.SlowPath.LastError.(string); !ok || s != "123" {
		t.Errorf("a string field %#v, want the string \"123\"", got.SlowPath.LastError)
	}
	if got.Policies == nil {
		t.Errorf("an empty list: null, want []\n%s", b)
	}
}

func TestAPIErrorKeepsItsCode(t *testing.T) {
	err := apiErr(status.Error(codes.InvalidArgument, "operation 1 (add): tenant \"b\": already exists"))
	var ae *apiError
	if !errors.As(err, &ae) || ae.code != codes.InvalidArgument || err.Error() != "operation 1 (add): tenant \"b\": already exists" {
		t.Errorf("%#v", err)
	}
}
