package server_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
)

// TestStaleViewTakesTheEditsContext: the lines a refusal shows around a
// stale reference (the message's view and StaleRef.fresh) are as many as
// the request's context asks for, three by default, whichever check
// refused it: a hash that does not match the current file, another agent's
// change since the base (a rebase conflict), or a base the server no
// longer holds. At most ten: an error is not held to the response size
// limit, and each stale reference carries its own lines.
func TestStaleViewTakesTheEditsContext(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&b, "l%d\n", i)
	}
	file := b.String()
	kinds := []struct {
		name string
		env  func(t *testing.T) *env
		// refuse makes alice's edit of line 15, with the request's context,
		// be refused for a stale reference.
		refuse func(e *env, context *int32) error
	}{
		{"a wrong hash", func(t *testing.T) *env { return newEnv(t) }, func(e *env, context *int32) error {
			alice := e.agent("alice")
			e.readAs(alice, "f.txt")
			stale := "15:00" // another hash than the line's
			if stale == tag(file, 15) {
				stale = "15:01"
			}
			_, err := alice.Edit(e.ctx, &hashlinev1.EditRequest{Path: "f.txt", Context: context, Edits: []*hashlinev1.FileEdit{client.Replace(stale, "", "x")}})
			return err
		}},
		{"another agent's change", func(t *testing.T) *env { return newEnv(t) }, func(e *env, context *int32) error {
			return bobEditsLine15(e, file, context)
		}},
		{"an unknown base", func(t *testing.T) *env { return evicted(t) }, func(e *env, context *int32) error {
			return bobEditsLine15(e, file, context)
		}},
	}
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			e := k.env(t)
			for _, tt := range []struct {
				context  *int32
				from, to int
			}{
				{nil, 12, 18},
				{ptr(0), 15, 15},
				{ptr(1), 14, 16},
				{ptr(5), 10, 20},
				{ptr(100), 5, 25}, // at most ten
			} {
				e.write("f.txt", file)
				err := k.refuse(e, tt.context)
				var stale client.StaleRefError
				if !errors.As(err, &stale) || len(stale.Refs) != 1 {
					t.Fatalf("context %v: err = %v, want one stale reference", tt.context, err)
				}
				fresh := stale.Refs[0].GetFresh()
				var view []string
				for _, l := range strings.Split(stale.Err.Message, "\n") {
					if strings.HasPrefix(l, "    ") || strings.HasPrefix(l, ">>> ") {
						view = append(view, l[4:])
					}
				}
				var want []string
				for n := tt.from; n <= tt.to; n++ {
					want = append(want, tag(e.read("f.txt"), n)+"|"+strings.Split(e.read("f.txt"), "\n")[n-1])
				}
				if strings.Join(fresh, "\n") != strings.Join(want, "\n") || strings.Join(view, "\n") != strings.Join(want, "\n") {
					t.Errorf("context %v: fresh\n%s\nview\n%s\nwant lines %d-%d", deref(tt.context), strings.Join(fresh, "\n"), strings.Join(view, "\n"), tt.from, tt.to)
				}
			}
		})
	}
}

// bobEditsLine15 has bob change line 15 after alice read the file, and
// then alice edit it from her old tag.
func bobEditsLine15(e *env, file string, context *int32) error {
	alice, bob := e.agent("alice"), e.agent("bob")
	base := e.readAs(alice, "f.txt").GetVersion()
	e.readAs(bob, "f.txt")
	e.editAs(bob, "f.txt", client.Replace(tag(file, 15), "", "bob was here"))
	_, err := alice.Edit(e.ctx, &hashlinev1.EditRequest{Path: "f.txt", BaseVersion: base, Context: context, Edits: []*hashlinev1.FileEdit{client.Replace(tag(file, 15), "", "alice")}})
	return err
}

func ptr(n int32) *int32 { return &n }

func deref(p *int32) string {
	if p == nil {
		return "unset"
	}
	return fmt.Sprint(*p)
}
