package server

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	"go.yaml.in/yaml/v3"
)

// MinTokenLength is the shortest plaintext token a token file may hold.
// Tokens are bearer secrets: 16 random characters are the least that
// cannot be guessed online, and generated tokens should be longer (e.g.
// `openssl rand -hex 32`).
const MinTokenLength = 16

// Permission is what a token may do.
type Permission int

const (
	// PermRead allows Read, Grep and Watch.
	PermRead Permission = iota + 1
	// PermWrite allows everything PermRead does, plus Edit and Write.
	PermWrite
)

// String returns "read" or "write".
func (p Permission) String() string {
	switch p {
	case PermRead:
		return "read"
	case PermWrite:
		return "write"
	}
	return fmt.Sprintf("Permission(%d)", int(p))
}

// Grant is what an authenticated caller may do: its agent name (which
// becomes its identity, see AgentID), its permission, and the path prefixes
// it may touch (none means the whole workspace).
type Grant struct {
	Agent      string
	Permission Permission
	// Prefixes are clean slash-separated paths relative to the root; a path
	// is inside a prefix if it equals it or lies below it.
	Prefixes []string
}

// Tokens is a parsed token file: the grants, keyed by the SHA-256 of their
// tokens. It is immutable; reload by parsing the file again.
type Tokens struct {
	entries []tokenEntry
}

type tokenEntry struct {
	sum   [sha256.Size]byte
	grant *Grant
}

// Len returns the number of tokens.
func (t *Tokens) Len() int {
	if t == nil {
		return 0
	}
	return len(t.entries)
}

// Lookup returns the grant of token, or nil. It takes the same time
// whichever entry matches, or none: the token is hashed, and the hash is
// compared with every entry's in constant time, without stopping at a
// match. Comparing hashes also hides the tokens' lengths.
func (t *Tokens) Lookup(token string) *Grant {
	return t.lookupSum(sha256.Sum256([]byte(token)))
}

// lookupSum is Lookup of a token by its SHA-256.
func (t *Tokens) lookupSum(sum [sha256.Size]byte) *Grant {
	if t == nil {
		return nil
	}
	found := -1
	for i := range t.entries {
		eq := subtle.ConstantTimeCompare(sum[:], t.entries[i].sum[:])
		found = subtle.ConstantTimeSelect(eq, i, found)
	}
	if found < 0 {
		return nil
	}
	return t.entries[found].grant
}

// tokenFile is the file format. JSON is valid YAML, so one parser reads
// both.
type tokenFile struct {
	Tokens []tokenSpec `yaml:"tokens"`
}

type tokenSpec struct {
	Token      string   `yaml:"token"`
	SHA256     string   `yaml:"sha256"`
	Agent      string   `yaml:"agent"`
	Permission string   `yaml:"permission"`
	Paths      []string `yaml:"paths"`
}

// LoadTokens reads and parses a token file (see ParseTokens).
func LoadTokens(file string) (*Tokens, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("token file: %w", err)
	}
	t, err := ParseTokens(data)
	if err != nil {
		return nil, fmt.Errorf("token file %s: %w", file, err)
	}
	return t, nil
}

// ParseTokens parses a token file, YAML or JSON:
//
//	tokens:
//	  - token: "4f1c…"          # the bearer token itself (at least 16 characters), or
//	    sha256: "9a0b…"         # the hex SHA-256 of it, so the file holds no secret
//	    agent: planner          # the identity the server knows the caller by
//	    permission: write       # read (Read, Grep, Watch) or write (also Edit, Write)
//	    paths: [src, docs/api]  # optional: only these files and directories
//
// Unknown fields, duplicate tokens, empty agent names, bad permissions and
// paths that are absolute or climb out with ".." are errors: a mistake in
// this file must stop the server, not widen access.
func ParseTokens(data []byte) (*Tokens, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var f tokenFile
	if err := dec.Decode(&f); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("empty; want a list under \"tokens:\"")
		}
		return nil, err
	}
	var extra any
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, errors.New("more than one YAML document; put every token under one \"tokens:\" list")
	}
	if len(f.Tokens) == 0 {
		return nil, errors.New("no tokens; want at least one entry under \"tokens:\"")
	}
	t := &Tokens{}
	seen := map[[sha256.Size]byte]int{}
	for i, s := range f.Tokens {
		e, err := s.entry()
		if err != nil {
			return nil, fmt.Errorf("tokens[%d]: %w", i, err)
		}
		if j, dup := seen[e.sum]; dup {
			return nil, fmt.Errorf("tokens[%d]: the same token as tokens[%d]; every token must be unique", i, j)
		}
		seen[e.sum] = i
		t.entries = append(t.entries, e)
	}
	return t, nil
}

func (s tokenSpec) entry() (tokenEntry, error) {
	var e tokenEntry
	switch {
	case s.Token != "" && s.SHA256 != "":
		return e, errors.New("both token and sha256 are set; give one")
	case isPlaceholder(s.Token) || isPlaceholder(s.SHA256):
		return e, errors.New("token or sha256 is still a <placeholder> from the example; put a token of your own there (openssl rand -hex 32), or its hex SHA-256")
	case s.Token != "":
		if len(s.Token) < MinTokenLength {
			return e, fmt.Errorf("token is %d characters; use at least %d random ones", len(s.Token), MinTokenLength)
		}
		if strings.TrimSpace(s.Token) != s.Token || strings.ContainsAny(s.Token, "\r\n\x00") {
			return e, errors.New("token has surrounding spaces or control characters, which a client cannot send in a header")
		}
		e.sum = sha256.Sum256([]byte(s.Token))
	case s.SHA256 != "":
		b, err := hex.DecodeString(s.SHA256)
		if err != nil || len(b) != sha256.Size {
			return e, fmt.Errorf("sha256 %q is not 64 hex digits", s.SHA256)
		}
		copy(e.sum[:], b)
	default:
		return e, errors.New("no token; set token (the secret) or sha256 (its hex SHA-256)")
	}
	agent := strings.TrimSpace(s.Agent)
	if agent == "" {
		return e, errors.New("no agent name; set agent to the identity this token stands for")
	}
	if len(agent) > MaxAgentBytes {
		return e, fmt.Errorf("agent name is %d bytes, over the %d-byte limit; use a shorter name", len(agent), MaxAgentBytes)
	}
	g := &Grant{Agent: agent}
	switch s.Permission {
	case "read":
		g.Permission = PermRead
	case "write":
		g.Permission = PermWrite
	case "":
		return e, errors.New("no permission; set permission to read or write")
	default:
		return e, fmt.Errorf("permission %q; want read or write", s.Permission)
	}
	for _, p := range s.Paths {
		c, err := cleanPrefix(p)
		if err != nil {
			return e, fmt.Errorf("paths: %w", err)
		}
		if c == "." {
			// The whole workspace: no restriction at all.
			g.Prefixes = nil
			break
		}
		g.Prefixes = append(g.Prefixes, c)
	}
	e.grant = g
	return e, nil
}

// cleanPrefix normalises a path prefix of the token file to the form the
// workspace gives request paths: clean, slash-separated, relative.
func cleanPrefix(p string) (string, error) {
	q := strings.TrimSpace(p)
	switch {
	case q == "":
		return "", errors.New("empty path; use \".\" for the whole workspace")
	case strings.ContainsRune(q, 0):
		return "", fmt.Errorf("path %q has a NUL byte", p)
	case strings.HasPrefix(q, "/"):
		return "", fmt.Errorf("path %q is absolute; paths are relative to the workspace root", p)
	}
	c := path.Clean(q)
	if c == ".." || strings.HasPrefix(c, "../") {
		return "", fmt.Errorf("path %q climbs out of the workspace root", p)
	}
	return c, nil
}

// under reports whether the clean relative path rel is prefix or lies
// below it.
func under(rel, prefix string) bool {
	return rel == prefix || strings.HasPrefix(rel, prefix+"/")
}

// allows reports whether the grant covers the clean relative path rel.
func (g *Grant) allows(rel string) bool {
	if len(g.Prefixes) == 0 {
		return true
	}
	for _, p := range g.Prefixes {
		if under(rel, p) {
			return true
		}
	}
	return false
}

// leadsTo reports whether rel is an allowed path or a directory above one,
// so that a search of it can find allowed files.
func (g *Grant) leadsTo(rel string) bool {
	if g.allows(rel) || rel == "." {
		return true
	}
	for _, p := range g.Prefixes {
		if under(p, rel) {
			return true
		}
	}
	return false
}

// isPlaceholder reports a value written as <...>, the way SECURITY.md's
// example marks what the reader must fill in: copied literally, it would
// otherwise be a working token that anyone who read the example knows.
func isPlaceholder(v string) bool {
	v = strings.TrimSpace(v)
	return len(v) >= 2 && strings.HasPrefix(v, "<") && strings.HasSuffix(v, ">")
}
