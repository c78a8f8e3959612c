package server

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/workspace"
)

// allReasons returns every ErrorReason but UNSPECIFIED, from the
// generated descriptor.
func allReasons(t *testing.T) []hashlinev1.ErrorReason {
	t.Helper()
	values := hashlinev1.ErrorReason(0).Descriptor().Values()
	var out []hashlinev1.ErrorReason
	for i := range values.Len() {
		if n := values.Get(i).Number(); n != 0 {
			out = append(out, hashlinev1.ErrorReason(n))
		}
	}
	if len(out) < 37 {
		t.Fatalf("the enum has %d reasons; the descriptor walk is broken", len(out))
	}
	return out
}

// upperSnake is a code as the docs and errors.proto write it:
// FailedPrecondition becomes FAILED_PRECONDITION.
func upperSnake(c codes.Code) string {
	var b strings.Builder
	for i, r := range c.String() {
		if i > 0 && unicode.IsUpper(r) {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToUpper(r))
	}
	return b.String()
}

// declaredCode is the grpc_code option of an ErrorReason value as the
// generated descriptor holds it, read here without client.ReasonCode.
func declaredCode(v protoreflect.EnumValueDescriptor) hashlinev1.GrpcCode {
	return proto.GetExtension(v.Options(), hashlinev1.E_GrpcCode).(hashlinev1.GrpcCode)
}

func TestReasonCodes(t *testing.T) {
	t.Run("every reason declares its code in errors.proto, and UNSPECIFIED none", func(t *testing.T) {
		values := hashlinev1.ErrorReason(0).Descriptor().Values()
		for i := range values.Len() {
			v := values.Get(i)
			got := declaredCode(v)
			if v.Number() == 0 {
				if got != hashlinev1.GrpcCode_GRPC_CODE_UNSPECIFIED {
					t.Errorf("%s declares code %s; it is never sent", v.Name(), got)
				}
				continue
			}
			if got == hashlinev1.GrpcCode_GRPC_CODE_UNSPECIFIED {
				t.Errorf("%s declares no code: give it [(grpc_code) = ...] in errors.proto", v.Name())
			}
		}
	})
	t.Run("the server sends each reason with the code it declares", func(t *testing.T) {
		for _, r := range allReasons(t) {
			want := codes.Code(declaredCode(r.Descriptor().Values().ByNumber(r.Number())))
			if got := reasonCode(r); got != want {
				t.Errorf("%s: reasonCode = %v, errors.proto declares %v", r, got, want)
			}
			if got := status.Code(newStatus(r, "m", nil)); got != want {
				t.Errorf("%s: newStatus has code %v, errors.proto declares %v", r, got, want)
			}
		}
	})
	t.Run("a number without a declared code is reported as a bug", func(t *testing.T) {
		for _, r := range []hashlinev1.ErrorReason{0, 9999} {
			if got := reasonCode(r); got != codes.Internal {
				t.Errorf("reasonCode(%d) = %v, want Internal", r, got)
			}
		}
	})
	t.Run("GrpcCode names each code as gRPC does, by its number", func(t *testing.T) {
		values := hashlinev1.GrpcCode(0).Descriptor().Values()
		for i := range values.Len() {
			v := values.Get(i)
			if v.Number() == 0 {
				continue
			}
			// google.rpc.Code spells CANCELLED with two Ls, grpc-go with one.
			name := strings.Replace(strings.TrimPrefix(string(v.Name()), "GRPC_CODE_"), "CANCELLED", "CANCELED", 1)
			if want := upperSnake(codes.Code(v.Number())); name != want {
				t.Errorf("%s = %d is gRPC's %s", v.Name(), v.Number(), want)
			}
		}
	})
	t.Run("errors.proto states each reason's code first in its comment", func(t *testing.T) {
		src, err := os.ReadFile(filepath.Join("..", "proto", "hashline", "v1", "errors.proto"))
		if err != nil {
			t.Fatal(err)
		}
		comments := protoValueComments(string(src), "ERROR_REASON_")
		for _, r := range allReasons(t) {
			comment, ok := comments[r.String()]
			if !ok {
				t.Errorf("%s: no commented value in errors.proto", r)
				continue
			}
			if want := upperSnake(reasonCode(r)) + "."; !strings.HasPrefix(comment, want) {
				t.Errorf("%s: comment starts %q, want %q", r, firstWords(comment), want)
			}
		}
	})
	t.Run("docs/DESIGN.md's table gives every reason once, with its code", func(t *testing.T) {
		rows := designReasonRows(t)
		for _, r := range allReasons(t) {
			name := client.ReasonName(r)
			got, ok := rows[name]
			if !ok {
				t.Errorf("%s is not in docs/DESIGN.md's reason table", name)
				continue
			}
			if want := upperSnake(reasonCode(r)); got != want {
				t.Errorf("docs/DESIGN.md: %s is %s, want %s", name, got, want)
			}
			delete(rows, name)
		}
		for name := range rows {
			t.Errorf("docs/DESIGN.md's reason table has %s, which the enum does not", name)
		}
	})
	t.Run("README.md's errors paragraph names every reason", func(t *testing.T) {
		src, err := os.ReadFile(filepath.Join("..", "README.md"))
		if err != nil {
			t.Fatal(err)
		}
		const start = "Errors carry a `hashline.v1.ErrorInfo`"
		text := string(src)
		i := strings.Index(text, start)
		if i < 0 {
			t.Fatalf("README.md has no paragraph starting %q", start)
		}
		para, _, _ := strings.Cut(text[i:], "\n\n")
		for _, r := range allReasons(t) {
			if name := client.ReasonName(r); !strings.Contains(para, "`"+name+"`") {
				t.Errorf("README.md's errors paragraph does not name %s", name)
			}
		}
	})
}

// protoValueComments maps each enum value with the prefix to its leading
// comment, joined into one line.
func protoValueComments(src, prefix string) map[string]string {
	out := map[string]string{}
	var comment []string
	for line := range strings.Lines(src) {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "//"):
			comment = append(comment, strings.TrimSpace(strings.TrimPrefix(line, "//")))
			continue
		case strings.HasPrefix(line, prefix):
			name, _, _ := strings.Cut(line, " ")
			out[name] = strings.Join(comment, " ")
		}
		comment = nil
	}
	return out
}

func firstWords(s string) string {
	if len(s) > 30 {
		return s[:30] + "..."
	}
	return s
}

var backticked = regexp.MustCompile("`([A-Z_]+)`")

// designReasonRows reads the reason table of docs/DESIGN.md's Errors
// section: reason -> code. A row names one code for all its reasons, or
// one per reason in the same order.
func designReasonRows(t *testing.T) map[string]string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "docs", "DESIGN.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(src), "\n## 6. Errors\n")
	if !ok {
		t.Fatal("docs/DESIGN.md has no section 6. Errors")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	rows := map[string]string{}
	for line := range strings.Lines(section) {
		cells := strings.Split(line, "|")
		if len(cells) < 4 || !strings.HasPrefix(line, "| `") {
			continue
		}
		var names, codes []string
		for _, m := range backticked.FindAllStringSubmatch(cells[1], -1) {
			names = append(names, m[1])
		}
		for _, m := range backticked.FindAllStringSubmatch(cells[2], -1) {
			codes = append(codes, m[1])
		}
		if len(codes) != 1 && len(codes) != len(names) {
			t.Fatalf("docs/DESIGN.md row %q: %d reasons, %d codes", strings.TrimSpace(line), len(names), len(codes))
		}
		for i, n := range names {
			if _, dup := rows[n]; dup {
				t.Errorf("docs/DESIGN.md names %s in two rows", n)
			}
			rows[n] = codes[min(i, len(codes)-1)]
		}
	}
	if len(rows) == 0 {
		t.Fatal("docs/DESIGN.md's reason table is empty or not found")
	}
	return rows
}

// declaredReasons returns the string constants named Reason* that the
// non-test files of the package in dir declare: the reasons a package that
// knows nothing of the API gives its problems.
func declaredReasons(t *testing.T, dir string) map[string]string {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, id := range vs.Names {
					if !strings.HasPrefix(id.Name, "Reason") || i >= len(vs.Values) {
						continue
					}
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						t.Errorf("%s: %s is not a string literal; this test cannot check it", name, id.Name)
						continue
					}
					s, _ := strconv.Unquote(lit.Value)
					out[id.Name] = s
				}
			}
		}
	}
	return out
}

func TestCoreReasonsAreInTheEnum(t *testing.T) {
	t.Run("every reason the edit planner declares is an ErrorReason", func(t *testing.T) {
		core := declaredReasons(t, filepath.Join("..", "internal", "hashline"))
		if len(core) < 9 {
			t.Fatalf("found %d reasons in internal/hashline: %v", len(core), core)
		}
		for name, s := range core {
			if client.ParseReason(s) == hashlinev1.ErrorReason_ERROR_REASON_UNSPECIFIED {
				t.Errorf("hashline.%s = %q is not an ErrorReason; add it to errors.proto or rename it", name, s)
			}
		}
	})
	t.Run("every reason the engine declares is an ErrorReason", func(t *testing.T) {
		own := declaredReasons(t, filepath.Join("..", "internal", "engine"))
		if len(own) < 6 {
			t.Fatalf("found %d reasons in internal/engine: %v", len(own), own)
		}
		for name, s := range own {
			if client.ParseReason(s) == hashlinev1.ErrorReason_ERROR_REASON_UNSPECIFIED {
				t.Errorf("engine.%s = %q is not an ErrorReason; add it to errors.proto or rename it", name, s)
			}
		}
	})
	t.Run("every reason the rebaser declares is a StaleRefReason", func(t *testing.T) {
		rebase := declaredReasons(t, filepath.Join("..", "internal", "versions"))
		if len(rebase) < 3 {
			t.Fatalf("found %d reasons in internal/versions: %v", len(rebase), rebase)
		}
		for name, s := range rebase {
			if client.ParseStaleRefReason(s) == hashlinev1.StaleRefReason_STALE_REF_REASON_UNSPECIFIED {
				t.Errorf("versions.%s = %q is not a StaleRefReason; add it to errors.proto or rename it", name, s)
			}
			if staleReason(s) != s {
				t.Errorf("staleReason(%q) = %q", s, staleReason(s))
			}
		}
	})
	t.Run("a core reason outside the enum is reported as a bug, not sent", func(t *testing.T) {
		if got := coreReason("SOMETHING_ELSE"); got != ReasonInternal {
			t.Errorf("coreReason(SOMETHING_ELSE) = %s, want INTERNAL", got)
		}
	})
}

func TestEveryWorkspaceErrorGetsItsReasonAndCode(t *testing.T) {
	for _, m := range workspaceErrors {
		t.Run(client.ReasonName(m.reason), func(t *testing.T) {
			err := toStatus(fmt.Errorf("read x: %w", m.sentinel))
			st := status.Convert(err)
			if st.Code() != reasonCode(m.reason) {
				t.Errorf("code %v, want %v", st.Code(), reasonCode(m.reason))
			}
			var e *client.Error
			if !errors.As(client.FromStatus(err), &e) || e.Reason != client.ReasonName(m.reason) {
				t.Errorf("decoded %v, want reason %s", client.FromStatus(err), client.ReasonName(m.reason))
			}
		})
	}
	if got := status.Code(toStatus(workspace.ErrIO)); got == codes.Unavailable {
		t.Error("IO_ERROR is UNAVAILABLE, which clients retry on their own")
	}
}
