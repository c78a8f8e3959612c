package daemon

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/hashline/hashline/internal/state"
	"github.com/hashline/hashline/internal/workspace"
)

// A workspace has one running engine, whatever started it: hashlined, or
// an engine that hashline mcp or hashline --local started. The engine of a
// root holds the lock of its place for its whole life and serves on the
// place's socket; any process of the user finds it there. The lock, not
// the socket file, says whether an engine runs: a socket file left by a
// crashed engine is never trusted, and the next engine replaces it.
type place struct {
	// dir holds the lock and the record: the root's default state
	// directory, or, where that cannot be used (no home directory, or a
	// home inside the workspace), a directory of the user's under the
	// system's temporary directory.
	dir string
	// lock is the file the engine holds an advisory lock on.
	lock string
	// record says which process holds the lock, for the message that
	// refuses a second engine.
	record string
	// socket is the engine's unix socket: in dir when the path fits the
	// system's limit on socket paths, else under the temporary directory.
	socket string
}

// maxSocketPath is the longest socket path used: sockaddr_un holds 108
// bytes on Linux and 104 on macOS and BSDs, the terminating NUL included.
const maxSocketPath = 100

// locate returns the place of the engine of root, an absolute path with
// symlinks evaluated, creating its directory if missing. On a platform
// whose file systems ignore case (and normalization), every spelling of
// the root is one place: the root is folded as the workspace folds names.
func locate(root string) (place, error) {
	if fold := workspace.DefaultNameFold(); fold != nil {
		root = fold(root)
	}
	dir, err := placeDir(root)
	if err != nil {
		return place{}, err
	}
	p := place{dir: dir, lock: filepath.Join(dir, "engine.lock"), record: filepath.Join(dir, "engine.json"), socket: filepath.Join(dir, "engine.sock")}
	if len(p.socket) > maxSocketPath {
		tmp, err := userTemp()
		if err != nil {
			return place{}, err
		}
		p.socket = filepath.Join(tmp, short(dir)+".sock")
	}
	return p, nil
}

func placeDir(root string) (string, error) {
	sd, err := state.Open("", root)
	if err == nil {
		return sd.Path(), nil
	}
	// No usable default state directory: keep the engine's place under
	// the temporary directory, by the root's hash, so that every process
	// of the user still finds it.
	tmp, terr := userTemp()
	if terr != nil {
		return "", fmt.Errorf("no place for the workspace's engine: %v; %v", err, terr)
	}
	d := filepath.Join(tmp, short(root))
	if err := os.Mkdir(d, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return "", err
	}
	return d, state.CheckPrivate(d)
}

// userTemp is the user's own directory under the system's temporary
// directory, created 0700 and refused when another user owns it or may
// write to it.
func userTemp() (string, error) {
	d := filepath.Join(os.TempDir(), "hashline-"+strconv.Itoa(os.Geteuid()))
	if err := os.Mkdir(d, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return "", err
	}
	return d, state.CheckPrivate(d)
}

func short(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:8])
}

// holder is the record of the process holding a workspace's engine.
type holder struct {
	PID     int       `json:"pid"`
	Kind    string    `json:"kind"`
	Root    string    `json:"root"`
	Listen  string    `json:"listen,omitempty"`
	Socket  string    `json:"socket"`
	Started time.Time `json:"started"`
}

// readHolder reads the record at path; a missing or unreadable one is the
// zero holder.
func readHolder(path string) holder {
	var h holder
	if b, err := os.ReadFile(path); err == nil {
		json.Unmarshal(b, &h)
	}
	return h
}

// describe says who h is, for messages: "hashlined (pid 123, listening on
// 127.0.0.1:7420)".
func (h holder) describe() string {
	if h.PID == 0 {
		return "another hashline engine"
	}
	s := fmt.Sprintf("%s (pid %d", h.Kind, h.PID)
	if h.Listen != "" {
		s += ", listening on " + h.Listen
	}
	return s + ")"
}

func writeHolder(path string, h holder) error {
	b, err := json.MarshalIndent(h, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
