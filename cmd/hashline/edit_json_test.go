package main

import (
	"slices"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"

	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/editjson"
)

// TestCLIEditsAreTheAPIs checks cliEdits against hashline.v1.FileEdit: an
// operation per member of its oneof and a field per field of the member's
// message, under the JSON name with the proto name as an alias, of the
// field's kind. A field the API gains is then readable from stdin.
func TestCLIEditsAreTheAPIs(t *testing.T) {
	oneof := (&hashlinev1.FileEdit{}).ProtoReflect().Descriptor().Oneofs().ByName("op")
	if got, want := len(cliEdits.Ops), oneof.Fields().Len(); got != want {
		t.Errorf("%d operations, FileEdit has %d", got, want)
	}
	for i := range oneof.Fields().Len() {
		fd := oneof.Fields().Get(i)
		op := findOp(cliEdits, fd.JSONName())
		if op == nil {
			t.Errorf("no operation %s", fd.JSONName())
			continue
		}
		if string(fd.Name()) != fd.JSONName() && !slices.Contains(op.Aliases, string(fd.Name())) {
			t.Errorf("%s lacks its proto name %s as an alias", op.Name, fd.Name())
		}
		msg := fd.Message().Fields()
		if len(op.Fields) != msg.Len() {
			t.Errorf("%s has %d fields, %s has %d", op.Name, len(op.Fields), fd.Message().Name(), msg.Len())
		}
		for j := range msg.Len() {
			f := msg.Get(j)
			var got *editjson.Field
			for k := range op.Fields {
				if op.Fields[k].Name == f.JSONName() {
					got = &op.Fields[k]
				}
			}
			switch {
			case got == nil:
				t.Errorf("%s lacks field %s", op.Name, f.JSONName())
			case string(f.Name()) != f.JSONName() && !slices.Contains(got.Aliases, string(f.Name())):
				t.Errorf("%s.%s lacks its proto name %s as an alias", op.Name, got.Name, f.Name())
			case (f.Kind() == protoreflect.BoolKind) != (got.Kind == editjson.Bool):
				t.Errorf("%s.%s is of kind %v in the API", op.Name, got.Name, f.Kind())
			}
		}
	}
}

func findOp(v *editjson.Vocabulary, name string) *editjson.Op {
	for i := range v.Ops {
		if v.Ops[i].Name == name {
			return &v.Ops[i]
		}
	}
	return nil
}
