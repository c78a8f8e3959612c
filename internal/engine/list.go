package engine

import (
	"context"
	"encoding/base64"
	"errors"
	"io/fs"
	"path"
	"strings"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/grep"
	"github.com/hashline/hashline/internal/workspace"
)

// List's page sizes: the default, and the most one page holds (a larger
// max_entries is taken as this).
const (
	DefaultListEntries = 1000
	MaxListEntries     = 100000
)

// List returns a page of the entries under a directory, sorted, walking
// the tree as Grep does (the same .gitignore, hidden and version-control
// rules, through the same walker). Pages are stateless: the page token
// names the last entry returned, and the next page is the entries after it
// in sort order, so a listing resumed after changes to the tree neither
// repeats nor skips an entry that stayed where it was.
func (s *Engine) List(ctx context.Context, fsys fs.FS, req *hashlinev1.ListRequest) (*hashlinev1.ListResponse, error) {
	if n := req.GetMaxEntries(); n < 0 {
		return nil, BadRequest("maxEntries", "maxEntries %d is negative; use 0 for the default of %d entries", n, DefaultListEntries)
	}
	if err := checkList("glob", req.GetGlob()); err != nil {
		return nil, err
	}
	if err := grep.CheckGlobs(req.GetGlob()); err != nil {
		return nil, invalid(ReasonInvalidPattern, "glob", "%v; globs match names (\"*.go\") or, with a \"/\", paths from the root (\"src/**/*.ts\")", err)
	}
	p := req.GetPath()
	if p == "" {
		p = "." // the whole workspace
	}
	rel, err := s.ws.Rel(p)
	if err != nil {
		return nil, err
	}
	// Resolved as Read and Grep resolve their paths, so that a symlink
	// loop, a missing path, a link out of the root or into version-control
	// metadata is refused as they refuse it.
	if _, _, err := s.ws.Stat(rel); err != nil {
		return nil, err
	}
	after, err := parsePageToken(req.GetPageToken(), rel)
	if err != nil {
		return nil, err
	}
	limit := int(req.GetMaxEntries())
	if limit == 0 {
		limit = DefaultListEntries
	}
	limit = min(limit, MaxListEntries)

	resp := &hashlinev1.ListResponse{Path: rel}
	var last string
	// A page is also cut at the response limit, as an Edit response is
	// bounded by it: a larger one would be lost by a client that receives
	// no more, again at every retry. Each file's version, when asked for,
	// is counted before it is set, and so is the next page token, which
	// names the last entry of the page: each entry must fit with its own.
	size := proto.Size(resp)
	withVersions := req.GetIncludeVersions()
	var block []hashlinev1.Entry
	err = grep.List(ctx, fsys, grep.ListOptions{
		Path:      rel,
		Globs:     req.GetGlob(),
		Hidden:    req.GetHidden(),
		NoIgnore:  req.GetNoIgnore(),
		SkipFile:  workspace.IsTempName,
		SkipLink:  s.linksToVCS,
		Recursive: req.GetRecursive(),
		After:     after,
	}, func(e grep.ListEntry) error {
		typ := entryType(e.Type)
		n := entrySize(e.Path, typ, e.Size)
		n += 1 + protowire.SizeVarint(uint64(n))
		if withVersions && typ == hashlinev1.EntryType_ENTRY_TYPE_FILE {
			n += versionFieldBound
		}
		// One entry at least, whatever its size, so that paging advances.
		if len(resp.Entries) == limit || len(resp.Entries) > 0 && size+n+pageTokenSize(e.Key()) > s.opts.maxResponseBytes {
			resp.Truncated = true
			return grep.ErrStop
		}
		// Entries are allocated in blocks: beyond the walk itself, one
		// allocation per entry would be most of what a large page costs.
		if len(block) == 0 {
			block = make([]hashlinev1.Entry, min(entryBlock, limit-len(resp.Entries)))
		}
		en := &block[0]
		block = block[1:]
		en.Path, en.Type, en.Size = e.Path, typ, e.Size
		resp.Entries = append(resp.Entries, en)
		size += n
		last = e.Key()
		return nil
	})
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			// Gone since the Stat above, or hidden from this token.
			_, _, err = s.ws.Stat(rel)
		}
		return nil, err
	}
	if resp.Truncated {
		resp.NextPageToken = pageToken(last)
	}
	if withVersions {
		for _, e := range resp.Entries {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			if e.Type == hashlinev1.EntryType_ENTRY_TYPE_FILE {
				e.Version = s.listedVersion(e.Path)
			}
		}
	}
	return resp, nil
}

// listedVersion returns the version Read would give the file at rel, or ""
// for a file Read refuses (binary, too large, gone). Nothing is recorded
// in the agent's view: a listing shows no lines to edit from.
func (s *Engine) listedVersion(rel string) string {
	f, err := s.ws.ReadFile(rel)
	if err != nil {
		return ""
	}
	return f.Version
}

// entryBlock is how many entries a page allocates at a time.
const entryBlock = 256

// entrySize is proto.Size of an Entry with these fields and no version.
func entrySize(path string, typ hashlinev1.EntryType, size int64) int {
	n := 0
	if path != "" {
		n += 1 + protowire.SizeBytes(len(path))
	}
	if typ != 0 {
		n += 1 + protowire.SizeVarint(uint64(typ))
	}
	if size != 0 {
		n += 1 + protowire.SizeVarint(uint64(size))
	}
	return n
}

func entryType(m fs.FileMode) hashlinev1.EntryType {
	switch {
	case m.IsDir():
		return hashlinev1.EntryType_ENTRY_TYPE_DIR
	case m&fs.ModeSymlink != 0:
		return hashlinev1.EntryType_ENTRY_TYPE_SYMLINK
	}
	return hashlinev1.EntryType_ENTRY_TYPE_FILE
}

// pageTokenSize is what the next page token naming key adds to an
// encoded response, with its field tag and length (and the truncated flag).
func pageTokenSize(key string) int {
	n := base64.RawURLEncoding.EncodedLen(len(key))
	return 1 + protowire.SizeVarint(uint64(n)) + n + 2
}

// A page token is the sort key (grep.ListEntry.Key) of the last entry
// returned, base64url-encoded so that clients treat it as opaque.
func pageToken(key string) string { return base64.RawURLEncoding.EncodeToString([]byte(key)) }

// parsePageToken returns the key a page token names, "" for none. It must
// be the key of a path under dir (the request's, cleaned), as a page of a
// listing of dir returns.
func parsePageToken(tok, dir string) (string, error) {
	if tok == "" {
		return "", nil
	}
	const next = "; pass the nextPageToken of the previous page as it is, for the same path, or none to start from the beginning"
	if len(tok) > 2*workspace.MaxPathBytes {
		return "", BadRequest("pageToken", "pageToken is %d bytes, longer than any this server returns%s", len(tok), next)
	}
	raw, err := base64.RawURLEncoding.DecodeString(tok)
	key := string(raw)
	p := strings.TrimSuffix(key, "/")
	if err != nil || !utf8.ValidString(key) || p == "" || p == "." || path.Clean(p) != p ||
		strings.HasPrefix(p, "/") || p == ".." || strings.HasPrefix(p, "../") {
		return "", BadRequest("pageToken", "pageToken is not one this server returns%s", next)
	}
	if dir != "." && !strings.HasPrefix(p, dir+"/") {
		return "", BadRequest("pageToken", "pageToken continues a listing of another path, not of %q%s", dir, next)
	}
	return key, nil
}
