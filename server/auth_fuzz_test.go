package server

import (
	"context"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/workspace"
)

// FuzzParseTokens checks that whatever token file parses yields only sane
// grants: an agent name, read or write, clean relative prefixes; and that
// every plaintext token in it is found again by Lookup.
func FuzzParseTokens(f *testing.F) {
	for _, s := range []string{
		"tokens:\n  - token: abcdefghijklmnop\n    agent: a\n    permission: write\n    paths: [src, ./docs/]\n",
		`{"tokens": [{"sha256": "` + strings.Repeat("ab", 32) + `", "agent": "b", "permission": "read"}]}`,
		"tokens: [{token: abcdefghijklmnop, agent: a, permission: read, paths: [., x]}]",
		"tokens: [{token: abcdefghijklmnop, agent: a, permission: read, paths: ['../x']}]",
		"tokens: {}", "tokens: [1, 2]", "- a\n- b", "tokens: [{token: &a abcdefghijklmnop, agent: *a, permission: read}]",
		"", "---\n---\n", "tokens:\n  - token: \"abcdefghijklmnop\\u0000\"\n    agent: a\n    permission: read\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		toks, err := ParseTokens(data)
		if err != nil {
			return
		}
		if toks.Len() == 0 {
			t.Fatal("parsed a file with no tokens")
		}
		for _, e := range toks.entries {
			g := e.grant
			if strings.TrimSpace(g.Agent) == "" || (g.Permission != PermRead && g.Permission != PermWrite) {
				t.Fatalf("bad grant %+v", g)
			}
			for _, p := range g.Prefixes {
				if p == "" || p == "." || path.Clean(p) != p || path.IsAbs(p) || p == ".." || strings.HasPrefix(p, "../") || strings.ContainsRune(p, 0) {
					t.Fatalf("bad prefix %q in %+v", p, g)
				}
			}
		}
		var file tokenFile
		_ = yaml.Unmarshal(data, &file)
		for _, s := range file.Tokens {
			if s.Token != "" && toks.Lookup(s.Token) == nil {
				t.Fatalf("token %q parsed but Lookup does not find it", s.Token)
			}
		}
	})
}

// FuzzAccessCheck drives the prefix check and the workspace together with
// arbitrary paths over a tree full of links (out of the prefix, out of the
// root, loops): whenever a token limited to "src" is let through and the
// file can be read, the file really lies inside src.
func FuzzAccessCheck(f *testing.F) {
	root := f.TempDir()
	outside := f.TempDir()
	for _, d := range []string{"src/sub", "secret", "srcx"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			f.Fatal(err)
		}
	}
	for name, content := range map[string]string{"src/a.txt": "a\n", "src/sub/b.txt": "b\n", "secret/key.txt": "key\n", "srcx/c.txt": "c\n"} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(content), 0o644); err != nil {
			f.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, "o.txt"), []byte("o\n"), 0o644); err != nil {
		f.Fatal(err)
	}
	for link, target := range map[string]string{
		"src/out": "../secret/key.txt", "src/outdir": "../secret", "src/abs": filepath.Join(root, "secret"),
		"src/up": "..", "src/self": ".", "src/ext": outside, "src/loop": "loop", "link-to-src": "src", "src/in": "sub/b.txt",
	} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			f.Fatal(err)
		}
	}
	ws, err := workspace.Open(root)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { ws.Close() })
	a := newAccess(New(ws))
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		f.Fatal(err)
	}
	realSrc := filepath.Join(realRoot, "src")
	ctx := context.WithValue(context.Background(), grantKey{}, &Grant{Agent: "f", Permission: PermRead, Prefixes: []string{"src"}})
	ctx = context.WithValue(ctx, accessKey{}, a)
	for _, s := range []string{"src/a.txt", "src/out", "src/outdir/key.txt", "src/abs/key.txt", "src/up/secret/key.txt", "src/self/a.txt",
		"src/ext/o.txt", "src/loop", "link-to-src/a.txt", "src/in", "srcx/c.txt", "src/../secret/key.txt", root + "/src/a.txt", "./src//sub/../a.txt", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if err := a.check(ctx, hashlinev1.FileService_Read_FullMethodName, &hashlinev1.ReadRequest{Path: p}); err != nil {
			return
		}
		file, err := ws.ReadFile(p)
		if err != nil {
			return
		}
		real, err := filepath.EvalSymlinks(filepath.Join(root, filepath.FromSlash(file.Path)))
		if err != nil {
			t.Fatalf("read %q but cannot resolve it: %v", p, err)
		}
		if !strings.HasPrefix(real, realSrc+string(filepath.Separator)) {
			t.Fatalf("a token limited to src read %q, which is %s", p, real)
		}
		if !allowed(ctx, file.Path) {
			t.Fatalf("check let %q through but allowed(%q) is false", p, file.Path)
		}
	})
}
