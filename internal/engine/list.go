package engine

import (
	"context"
	"encoding/base64"
	"errors"
	"io/fs"
	"math/bits"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/hashline/hashline/internal/grep"
	"github.com/hashline/hashline/internal/workspace"
)

// List's page sizes: the default, and the most one page holds (a larger
// max_entries is taken as this).
const (
	DefaultListEntries = 1000
	MaxListEntries     = 100000
)

// ListRequest asks for a page of the entries under a directory.
type ListRequest struct {
	// Path is the directory (or file) to list; "" is the whole workspace.
	Path string
	// Globs select the entries listed, as Grep's do.
	Globs []string
	// Recursive lists the whole tree under Path, not only its children.
	Recursive bool
	// MaxEntries is the most entries of the page; 0 means
	// DefaultListEntries, and over MaxListEntries means MaxListEntries.
	MaxEntries int
	// Hidden lists hidden files and directories; NoIgnore lists what
	// .gitignore files ignore.
	Hidden, NoIgnore bool
	// IncludeVersions gives each file the version Read would give it.
	IncludeVersions bool
	// PageToken is the NextPageToken of the previous page, "" to start
	// from the beginning.
	PageToken string
}

// ListResult is a page of a listing.
type ListResult struct {
	// Path is the listed path, cleaned.
	Path    string
	Entries []ListEntry
	// Truncated says more entries follow; NextPageToken is then the token
	// to ask for them with.
	Truncated     bool
	NextPageToken string
}

// ListEntry is one listed file, directory or symlink.
type ListEntry struct {
	// Path is workspace-relative.
	Path string
	Type EntryType
	// Size is a file's size in bytes.
	Size int64
	// Version is a file's version with IncludeVersions, "" for a file Read
	// refuses (binary, too large, gone).
	Version string
}

// EntryType is what a listed entry is.
type EntryType int

// The types of entries.
const (
	EntryFile EntryType = iota + 1
	EntryDir
	EntrySymlink
)

// List returns a page of the entries under a directory, sorted, walking
// the tree as Grep does (the same .gitignore, hidden and version-control
// rules, through the same walker). Pages are stateless: the page token
// names the last entry returned, and the next page is the entries after it
// in sort order, so a listing resumed after changes to the tree neither
// repeats nor skips an entry that stayed where it was.
func (s *Engine) List(ctx context.Context, fsys fs.FS, req ListRequest) (*ListResult, error) {
	if n := req.MaxEntries; n < 0 {
		return nil, BadRequest("maxEntries", "maxEntries %d is negative; use 0 for the default of %d entries", n, DefaultListEntries)
	}
	if err := checkList("glob", req.Globs); err != nil {
		return nil, err
	}
	if err := grep.CheckGlobs(req.Globs); err != nil {
		return nil, invalid(ReasonInvalidPattern, "glob", "%v; globs match names (\"*.go\") or, with a \"/\", paths from the root (\"src/**/*.ts\")", err)
	}
	p := req.Path
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
	after, err := parsePageToken(req.PageToken, rel)
	if err != nil {
		return nil, err
	}
	limit := req.MaxEntries
	if limit == 0 {
		limit = DefaultListEntries
	}
	limit = min(limit, MaxListEntries)

	res := &ListResult{Path: rel}
	var last string
	// A page is also cut at the response limit, as an Edit response is
	// bounded by it: a larger one would be lost by a client that receives
	// no more, again at every retry. The face measures the page without
	// entries (WithResponseSize); each entry adds what its encoding adds
	// (entrySize); without the measure a page is cut at its count alone.
	// Each file's version, when asked for, is counted before
	// it is set, and so is the next page token, which names the last entry
	// of the page: each entry must fit with its own.
	measure := s.opts.responseSize
	size := 0
	if measure != nil {
		size = measure(res)
	}
	withVersions := req.IncludeVersions
	err = grep.List(ctx, fsys, grep.ListOptions{
		Path:      rel,
		Globs:     req.Globs,
		Hidden:    req.Hidden,
		NoIgnore:  req.NoIgnore,
		SkipFile:  workspace.IsTempName,
		SkipLink:  s.linksToVCS,
		Recursive: req.Recursive,
		After:     after,
	}, func(e grep.ListEntry) error {
		typ := entryType(e.Type)
		n := entrySize(e.Path, e.Size)
		n += 1 + sizeVarint(uint64(n))
		if withVersions && typ == EntryFile {
			n += versionFieldBound
		}
		// One entry at least, whatever its size, so that paging advances.
		if len(res.Entries) == limit || measure != nil && len(res.Entries) > 0 && size+n+pageTokenSize(e.Key()) > s.opts.maxResponseBytes {
			res.Truncated = true
			return grep.ErrStop
		}
		if res.Entries == nil {
			res.Entries = make([]ListEntry, 0, min(limit, entryBlock))
		}
		res.Entries = append(res.Entries, ListEntry{Path: e.Path, Type: typ, Size: e.Size})
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
	if res.Truncated {
		res.NextPageToken = pageToken(last)
	}
	if withVersions {
		for i := range res.Entries {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			if e := &res.Entries[i]; e.Type == EntryFile {
				e.Version = s.listedVersion(e.Path)
			}
		}
	}
	return res, nil
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

// entryBlock is the most entries a page makes room for at first.
const entryBlock = 256

// The size of a page of entries is estimated as the face encodes it, in
// the API's protobuf wire format: entrySize and pageTokenSize are what an
// entry and a page token add to the encoded response. The estimates are
// exact but for a file's version, which is bounded from above
// (versionFieldBound); the face's own measure (WithResponseSize) sizes
// the rest of the response.

// entrySize is the encoded size of an entry with this path and size and no
// version: each field a one-byte tag, a string with its length, the type
// (never zero; every type's number is one byte) and the size as varints.
func entrySize(path string, size int64) int {
	n := 2 // the type
	if path != "" {
		n += 1 + sizeVarint(uint64(len(path))) + len(path)
	}
	if size != 0 {
		n += 1 + sizeVarint(uint64(size))
	}
	return n
}

// sizeVarint is the encoded size of v as a varint: seven bits a byte.
func sizeVarint(v uint64) int { return (bits.Len64(v|1) + 6) / 7 }

func entryType(m fs.FileMode) EntryType {
	switch {
	case m.IsDir():
		return EntryDir
	case m&fs.ModeSymlink != 0:
		return EntrySymlink
	}
	return EntryFile
}

// pageTokenSize is what the next page token naming key adds to an
// encoded response, with its field tag and length (and the truncated flag).
func pageTokenSize(key string) int {
	n := base64.RawURLEncoding.EncodedLen(len(key))
	return 1 + sizeVarint(uint64(n)) + n + 2
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
