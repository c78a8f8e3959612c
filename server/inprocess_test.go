package server_test

import (
	"errors"
	"fmt"
	"testing"

	"google.golang.org/grpc/status"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/server"
)

// An in-process connection must answer every call exactly as the gRPC
// server does: same interceptors (the reserved-name check lives in one),
// same errors with the same details, the caller's agent id, and streams
// through the fallback connection.
func TestInProcessAnswersAsTheServerDoes(t *testing.T) {
	e := newEnv(t, server.WithRequireRead(true))
	e.write("f.txt", "one\ntwo\nthree\n")
	inproc := func(agent string) *client.Client {
		return client.New(server.InProcess(e.svc, server.GRPCConfig{}, e.conn), client.WithAgentID(agent))
	}
	remote := func(agent string) *client.Client { return client.New(e.conn, client.WithAgentID(agent)) }

	// Each step runs through both connections in turn, on files of its own
	// where it changes them, and the results are compared.
	type result struct {
		text string
		err  error
	}
	steps := []struct {
		name string
		run  func(c func(string) *client.Client, file string) result
	}{
		{"read", func(c func(string) *client.Client, file string) result {
			r, err := c("a").Read(e.ctx, &hashlinev1.ReadRequest{Path: file})
			return result{r.GetVersion() + r.GetText(), err}
		}},
		{"reserved temp name (interceptor)", func(c func(string) *client.Client, _ string) result {
			_, err := c("a").Read(e.ctx, &hashlinev1.ReadRequest{Path: ".hashline-XXXXXXXXXXXXXXXXXXXXXXXXXX.tmp"})
			return result{"", err}
		}},
		{"edit by an agent that has not read (agent id)", func(c func(string) *client.Client, file string) result {
			_, err := c("b").Edit(e.ctx, &hashlinev1.EditRequest{Path: file, Edits: []*hashlinev1.FileEdit{client.Replace(tag("one\ntwo\nthree\n", 2), "", "2")}})
			return result{"", err}
		}},
		{"stale edit (details)", func(c func(string) *client.Client, file string) result {
			if _, err := c("a").Read(e.ctx, &hashlinev1.ReadRequest{Path: file}); err != nil {
				t.Fatal(err)
			}
			_, err := c("a").Edit(e.ctx, &hashlinev1.EditRequest{Path: file, Edits: []*hashlinev1.FileEdit{client.Replace("2:zz", "", "2")}})
			return result{"", err}
		}},
		{"edit", func(c func(string) *client.Client, file string) result {
			r, err := c("a").Edit(e.ctx, &hashlinev1.EditRequest{Path: file, Edits: []*hashlinev1.FileEdit{client.Replace(tag("one\ntwo\nthree\n", 2), "", "2")}})
			return result{r.GetVersion() + r.GetDiff() + r.GetWindows()[0].GetText(), err}
		}},
		{"grep (stream, fallback)", func(c func(string) *client.Client, file string) result {
			var out string
			sum, err := c("a").Grep(e.ctx, &hashlinev1.GrepRequest{Pattern: "t", Path: file}, func(f *hashlinev1.GrepFile) error {
				for _, l := range f.GetLines() {
					out += l.GetHash() + l.GetContent() + "\n"
				}
				return nil
			})
			return result{fmt.Sprint(out, sum.GetMatches(), sum.GetFilesScanned()), err}
		}},
	}
	wantErr := map[string]bool{"reserved temp name (interceptor)": true, "edit by an agent that has not read (agent id)": true, "stale edit (details)": true}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			// Each connection starts from the same file, so the answers
			// (versions and diffs included) must be equal.
			e.write("f.txt", "one\ntwo\nthree\n")
			if _, err := inproc("a").Read(e.ctx, &hashlinev1.ReadRequest{Path: "f.txt"}); err != nil {
				t.Fatal(err)
			}
			got := st.run(inproc, "f.txt")
			e.write("f.txt", "one\ntwo\nthree\n")
			if _, err := remote("a").Read(e.ctx, &hashlinev1.ReadRequest{Path: "f.txt"}); err != nil {
				t.Fatal(err)
			}
			want := st.run(remote, "f.txt")
			gs, ws := status.Convert(got.err), status.Convert(want.err)
			if got.text != want.text || gs.Code() != ws.Code() || gs.Message() != ws.Message() || len(gs.Details()) != len(ws.Details()) {
				t.Errorf("in-process: %q %v %d details\nserver:     %q %v %d details", got.text, got.err, len(gs.Details()), want.text, want.err, len(ws.Details()))
			}
			if (got.err != nil) != wantErr[st.name] {
				t.Errorf("err = %v, want an error: %v", got.err, wantErr[st.name])
			}
		})
	}
}

// Over gRPC, protobuf refuses a string that is not UTF-8 before the
// service sees it; in process nothing is encoded, so the service itself
// must refuse such text, and write nothing.
func TestInProcessEditOfInvalidUTF8WritesNothing(t *testing.T) {
	e := newEnv(t)
	e.write("f.txt", "one\ntwo\n")
	c := client.New(server.InProcess(e.svc, server.GRPCConfig{}, e.conn), client.WithAgentID("a"))
	if _, err := c.Read(e.ctx, &hashlinev1.ReadRequest{Path: "f.txt"}); err != nil {
		t.Fatal(err)
	}
	before := e.snapshot()
	for _, dry := range []bool{true, false} {
		_, err := c.Edit(e.ctx, &hashlinev1.EditRequest{Path: "f.txt", DryRun: dry,
			Edits: []*hashlinev1.FileEdit{client.Replace(tag("one\ntwo\n", 2), "", "t\xffo")}})
		if !errors.Is(err, client.ErrNotText) {
			t.Errorf("dry run %v: err = %v, want NOT_TEXT", dry, err)
		}
	}
	e.assertUnchanged(before)
}
