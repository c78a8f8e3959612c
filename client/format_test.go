package client_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
)

// TestFormatReadWithoutLines: a read with OmitLines renders exactly as the
// same read with its structured lines, page header included.
func TestFormatReadWithoutLines(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	c, done := exampleWorkspace(map[string]string{"f.txt": b.String()})
	defer done()
	tests := []struct {
		name          string
		offset, limit int32
	}{
		{name: "whole file"},
		{name: "first page", limit: 10},
		{name: "middle page", offset: 9, limit: 5},
		{name: "last page", offset: 25},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out [2]string
			for i, omit := range []bool{false, true} {
				r, err := c.Read(context.Background(), &hashlinev1.ReadRequest{Path: "f.txt", Offset: tt.offset, Limit: tt.limit, OmitLines: omit})
				if err != nil {
					t.Fatal(err)
				}
				if omit && len(r.GetLines()) != 0 {
					t.Fatalf("OmitLines returned %d lines", len(r.GetLines()))
				}
				out[i] = client.FormatRead(r)
			}
			if out[0] != out[1] {
				t.Errorf("with lines:\n%s\nwithout:\n%s", out[0], out[1])
			}
			if tt.limit > 0 && !strings.Contains(out[1], "[showing lines") {
				t.Errorf("no page header:\n%s", out[1])
			}
		})
	}
}
