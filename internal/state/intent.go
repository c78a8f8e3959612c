package state

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// The intent log makes a change set of several files all or nothing across
// a crash. Its new contents are first written beside their targets and
// synced; then one record listing the steps that remain (renames and
// removals) is written here and synced: that is the commit point. The steps
// are done, their directories synced, and the record removed. A server
// that starts and finds a record finishes its steps (rolls the set
// forward) before it serves; a crash before the record left only temp
// files, which the start-up sweep removes.

// IntentStep is one step of a recorded change set, as
// internal/workspace.Step.
type IntentStep struct {
	// Op is "rename" (From to To) or "remove" (To).
	Op string `json:"op"`
	// Path is the path the request named, for messages.
	Path string `json:"path,omitempty"`
	// From and To are symlink-free paths relative to the workspace root.
	From string `json:"from,omitempty"`
	To   string `json:"to"`
	// Version is the version of the file the step takes ("" for a staged
	// temp file or a directory).
	Version string `json:"version,omitempty"`
	// New is the version a rename puts at To, and Replaces the version of
	// the file it replaces there ("" when To was absent): replay renames
	// only over what the set replaced. Records of format 1 have neither.
	New      string `json:"new,omitempty"`
	Replaces string `json:"replaces,omitempty"`
}

// Intent is the record of one change set.
type Intent struct {
	// ID names the change set (ApplyResponse.change_set).
	ID    string       `json:"id"`
	Steps []IntentStep `json:"steps"`
	// History is the set's entry in the change history
	// (internal/history.Encode), which the history may not have written
	// yet: replay records it, so that a set is in the history once its
	// steps are done, with the id it was given. Records of formats 1 and 2
	// have none.
	History []byte `json:"history,omitempty"`
}

// Intents is the intent log of a workspace: one file per change set being
// committed, in the "intents" subdirectory of the state directory.
type Intents struct {
	dir   string
	fsync bool
}

// Intents opens the intent log kept in d; fsync says whether records are
// synced (off only where the workspace's writes are not synced either).
func (d *Dir) Intents(fsync bool) (*Intents, error) {
	p, err := d.Sub("intents")
	if err != nil {
		return nil, err
	}
	return &Intents{dir: p, fsync: fsync}, nil
}

// Dir returns the log's directory.
func (l *Intents) Dir() string { return l.dir }

const (
	intentSuffix = ".intent"
	// intentMagic heads a record; the number is its format. Format 2 adds
	// new and replaces to rename steps, format 3 the set's history entry.
	// Records of formats 1 and 2, left by an older build's crash, are
	// still read (and replayed as that build would have).
	intentMagic   = "hashline-intent 3\n"
	intentMagicV2 = "hashline-intent 2\n"
	intentMagicV1 = "hashline-intent 1\n"
	// maxIntentBytes bounds a record that is read back: a change set has at
	// most a few thousand steps of a few paths each.
	maxIntentBytes = 64 << 20
)

// validID is an ID usable as a file name.
func validID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, c := range []byte(id) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// Record writes in durably: to a temp file, synced, renamed into place,
// and the log's directory synced. Once it returns, a restarted server will
// finish the set. done removes the record, durably, once every step is
// done and synced.
func (l *Intents) Record(in Intent) (done func() error, err error) {
	if !validID(in.ID) {
		return nil, fmt.Errorf("intent log: bad change set id %q", in.ID)
	}
	data, err := EncodeIntent(in)
	if err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(l.dir, in.ID+"-*.tmp")
	if err != nil {
		return nil, fmt.Errorf("intent log: %w", err)
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil && l.fsync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	final := filepath.Join(l.dir, in.ID+intentSuffix)
	if err == nil {
		err = os.Rename(tmp, final)
	}
	if err == nil {
		err = l.syncDir()
	}
	if err != nil {
		_ = os.Remove(tmp)
		return nil, fmt.Errorf("intent log: %w", err)
	}
	return func() error {
		if err := os.Remove(final); err != nil {
			return fmt.Errorf("intent log: %w", err)
		}
		if err := l.syncDir(); err != nil {
			return fmt.Errorf("intent log: %w", err)
		}
		return nil
	}, nil
}

func (l *Intents) syncDir() error {
	if !l.fsync {
		return nil
	}
	d, err := os.Open(l.dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// Pending is a record found at start.
type Pending struct {
	Intent
	// Done removes the record once its steps are finished.
	Done func() error
}

// Pending returns the records of change sets a crash left committed but
// maybe unfinished, after removing the temp files of records that were
// never committed. Every record is decoded before any is returned: a
// damaged one fails the whole call, so that no set is half replayed.
func (l *Intents) Pending() ([]Pending, error) {
	entries, err := os.ReadDir(l.dir)
	if err != nil {
		return nil, fmt.Errorf("intent log: %w", err)
	}
	var out []Pending
	for _, e := range entries {
		name := e.Name()
		p := filepath.Join(l.dir, name)
		switch {
		case strings.HasSuffix(name, ".tmp"):
			// Written before a commit point that was never reached.
			if err := os.Remove(p); err != nil {
				return nil, fmt.Errorf("intent log: %w", err)
			}
			continue
		case !strings.HasSuffix(name, intentSuffix):
			continue
		}
		data, err := readLimited(p)
		if err != nil {
			return nil, fmt.Errorf("intent log: %w", err)
		}
		in, err := DecodeIntent(data)
		if err != nil {
			return nil, fmt.Errorf("intent log: record %s is damaged (%v); no change set was replayed. Inspect it: each step renames \"from\" to \"to\" or removes \"to\" in the workspace; finish or undo them by hand, then remove the record", p, err)
		}
		out = append(out, Pending{Intent: in, Done: func() error {
			if err := os.Remove(p); err != nil {
				return err
			}
			return l.syncDir()
		}})
	}
	return out, nil
}

func readLimited(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() > maxIntentBytes {
		return nil, fmt.Errorf("%s is %d bytes, more than any record", p, fi.Size())
	}
	data := make([]byte, fi.Size())
	_, err = f.ReadAt(data, 0)
	return data, err
}

// EncodeIntent returns the bytes of a record: a header line, the SHA-256
// of the body in hex on a line, and the body, JSON.
func EncodeIntent(in Intent) ([]byte, error) {
	if err := checkIntent(in); err != nil {
		return nil, err
	}
	body, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(body)
	var b bytes.Buffer
	b.WriteString(intentMagic)
	b.WriteString(hex.EncodeToString(sum[:]))
	b.WriteByte('\n')
	b.Write(body)
	return b.Bytes(), nil
}

// DecodeIntent parses a record, refusing any that is not exactly what
// EncodeIntent writes: a torn or damaged record is an error, never a
// partial set of steps.
func DecodeIntent(data []byte) (Intent, error) {
	rest, ok := bytes.CutPrefix(data, []byte(intentMagic))
	v1, v2 := false, false
	if !ok {
		rest, v2 = bytes.CutPrefix(data, []byte(intentMagicV2))
		if !v2 {
			rest, v1 = bytes.CutPrefix(data, []byte(intentMagicV1))
		}
		if !v1 && !v2 {
			if bytes.HasPrefix(data, []byte("hashline-intent ")) {
				return Intent{}, errors.New("a record of an unknown format (written by a newer hashline?); finish it with that build, or by hand")
			}
			return Intent{}, errors.New("no intent header")
		}
	}
	sumHex, body, ok := bytes.Cut(rest, []byte{'\n'})
	if !ok {
		return Intent{}, errors.New("no checksum line")
	}
	sum := sha256.Sum256(body)
	if want := hex.EncodeToString(sum[:]); string(sumHex) != want {
		return Intent{}, errors.New("checksum mismatch")
	}
	var in Intent
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return Intent{}, err
	}
	if dec.More() {
		return Intent{}, errors.New("data after the record")
	}
	if v1 && slices.ContainsFunc(in.Steps, func(s IntentStep) bool { return s.New != "" || s.Replaces != "" }) {
		return Intent{}, errors.New("a format 1 record with fields of format 2")
	}
	if (v1 || v2) && in.History != nil {
		return Intent{}, errors.New("a record of an older format with a field of format 3")
	}
	if err := checkIntent(in); err != nil {
		return Intent{}, err
	}
	return in, nil
}

// checkIntent checks a record's steps name paths inside a workspace root.
func checkIntent(in Intent) error {
	if !validID(in.ID) {
		return fmt.Errorf("bad change set id %q", in.ID)
	}
	if len(in.Steps) == 0 {
		return errors.New("no steps")
	}
	for i, s := range in.Steps {
		paths := []string{s.To}
		switch s.Op {
		case "rename":
			paths = append(paths, s.From)
		case "remove":
			if s.From != "" || s.New != "" || s.Replaces != "" {
				return fmt.Errorf("step %d: a removal has no from, new or replaces", i)
			}
		default:
			return fmt.Errorf("step %d: unknown op %q", i, s.Op)
		}
		if slices.ContainsFunc(paths, func(p string) bool { return !insidePath(p) }) {
			return fmt.Errorf("step %d: a path is not a clean path inside the workspace", i)
		}
	}
	return nil
}

// insidePath reports whether p is a clean, relative, slash-separated path
// below the root (not the root itself).
func insidePath(p string) bool {
	return p != "" && p != "." && !strings.ContainsRune(p, 0) &&
		path.Clean(p) == p && !path.IsAbs(p) && p != ".." && !strings.HasPrefix(p, "../") && !filepath.IsAbs(p)
}
