package checkers

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/hashline/hashline/internal/grep"
)

// Placeholder, in a word of a command, stands for the path of the private
// copy of the file's content the command is given (see the package doc).
const Placeholder = "{}"

// Rule is one GLOB=COMMAND of the operator's: the command runs for the
// files the glob matches.
type Rule struct {
	// Spec is the rule as given, for messages.
	Spec string
	// Glob is the glob part; Args the command split into words (Split),
	// the program first.
	Glob string
	Args []string
	// Path is the program found (Resolve): an absolute path with no
	// symbolic link in it, so that neither the child's PATH nor a link
	// changed later decides what runs.
	Path  string
	globs grep.Globs
}

// Parse parses spec, GLOB=COMMAND: the glob ends at the first "=" (a glob
// holds none), and COMMAND is split into words by Split. The glob matches
// as Grep's do: without "/" the file's name in any directory, with "/" its
// path from the root.
func Parse(spec string) (Rule, error) {
	glob, command, ok := strings.Cut(spec, "=")
	glob, command = strings.TrimSpace(glob), strings.TrimSpace(command)
	if !ok || glob == "" || command == "" {
		return Rule{}, fmt.Errorf("%q: want GLOB=COMMAND, e.g. '*.go=gofmt'", spec)
	}
	g, err := grep.CompileGlobs([]string{glob})
	if err != nil {
		return Rule{}, fmt.Errorf("%q: %w", spec, err)
	}
	args, err := Split(command)
	if err != nil {
		return Rule{}, fmt.Errorf("%q: %w", spec, err)
	}
	if len(args) == 0 {
		return Rule{}, fmt.Errorf("%q: the command is empty", spec)
	}
	return Rule{Spec: spec, Glob: glob, Args: args, globs: g}, nil
}

// Resolve finds the rule's program: on the server's PATH for a bare name
// (SearchPath: a PATH with a relative entry is refused), else the path
// given (relative to the server's working directory).
func (r *Rule) Resolve() error {
	if _, err := SearchPath(); err != nil {
		return fmt.Errorf("%q: %w", r.Spec, err)
	}
	p, err := exec.LookPath(r.Args[0])
	if err != nil {
		// exec.ErrDot too: a program found by a relative PATH entry,
		// which SearchPath refused already.
		return fmt.Errorf("%q: %w", r.Spec, err)
	}
	if p, err = filepath.Abs(p); err != nil {
		return fmt.Errorf("%q: %w", r.Spec, err)
	}
	if p, err = filepath.EvalSymlinks(p); err != nil {
		return fmt.Errorf("%q: %w", r.Spec, err)
	}
	r.Path = p
	return nil
}

// SearchPath is the directories of the server's PATH, where a rule's
// program is found and the programs a command runs by name are. An entry
// that is empty, "." or otherwise not absolute is refused: it names the
// current directory, or one below it, which is the server's when rules
// are resolved (a workspace, often) and the run's private directory, where
// the content is, when a command runs.
func SearchPath() ([]string, error) {
	var dirs []string
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		if d == "" || !filepath.IsAbs(d) {
			shown := d
			if d == "" {
				shown = "an empty entry, which stands for the current directory"
			} else {
				shown = strconv.Quote(d)
			}
			return nil, fmt.Errorf("the server's PATH holds %s, which is not an absolute directory: commands would be looked up relative to the current directory (the server's, then the run's, where the content checked is); remove it from PATH, or make it absolute", shown)
		}
		dirs = append(dirs, d)
	}
	return dirs, nil
}

// absolutePath is the PATH commands are given: the server's absolute
// entries, or the system's usual directories when it has none.
func absolutePath() string {
	var dirs []string
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		if d != "" && filepath.IsAbs(d) {
			dirs = append(dirs, d)
		}
	}
	if len(dirs) == 0 {
		return defaultPath
	}
	return strings.Join(dirs, string(os.PathListSeparator))
}

// Match reports whether the rule is for the file rel (relative to the
// workspace root).
func (r Rule) Match(rel string) bool { return r.globs.Match(rel) }

// Name is how messages name the command: the program's name, and its
// first argument too when that reads as a subcommand ("go vet", "ruff
// check").
func (r Rule) Name() string {
	name := filepath.Base(r.Args[0])
	if len(r.Args) > 1 {
		a := r.Args[1]
		if a != "" && (a[0] >= 'a' && a[0] <= 'z' || a[0] >= 'A' && a[0] <= 'Z') && !strings.ContainsAny(a, "{}/.=\\ ") {
			name += " " + a
		}
	}
	return name
}

// Split splits a command into words without a shell: words are separated
// by spaces and tabs; inside '...' every character is itself; inside "..."
// too, except that \" and \\ stand for " and \; elsewhere a backslash
// makes the next character itself. Nothing else is special: no variables,
// globs, pipes or redirections ($HOME, *, | and > are plain characters).
func Split(s string) ([]string, error) {
	var (
		words []string
		word  strings.Builder
		in    bool // a word has begun (an empty '' is a word)
	)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if in {
				words = append(words, word.String())
				word.Reset()
				in = false
			}
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, errors.New("a ' is not closed")
			}
			word.WriteString(s[i+1 : i+1+j])
			i += j + 1
			in = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\') {
					i++
				}
				word.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, errors.New(`a " is not closed`)
			}
			in = true
		case c == '\\':
			if i+1 >= len(s) {
				return nil, errors.New("the command ends with a lone \\")
			}
			i++
			word.WriteByte(s[i])
			in = true
		default:
			word.WriteByte(c)
			in = true
		}
	}
	if in {
		words = append(words, word.String())
	}
	return words, nil
}
