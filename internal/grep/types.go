package grep

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrUnknownType is wrapped by the error Search (and CheckTypes) returns
// for a file type that is not in the table; the message lists the known
// ones.
var ErrUnknownType = errors.New("unknown file type")

// fileTypes maps a type name to the base-name globs of its files. The
// globs follow ripgrep's default type definitions, trimmed to the common
// ones.
var fileTypes = map[string][]string{
	"asm":    {"*.asm", "*.s", "*.S"},
	"c":      {"*.c", "*.h", "*.H"},
	"cpp":    {"*.C", "*.cc", "*.cpp", "*.cxx", "*.c++", "*.h", "*.H", "*.hh", "*.hpp", "*.hxx", "*.inl"},
	"cs":     {"*.cs"},
	"css":    {"*.css", "*.scss", "*.sass", "*.less"},
	"docker": {"Dockerfile", "Dockerfile.*", "*.dockerfile", "Containerfile"},
	"go":     {"*.go"},
	"html":   {"*.html", "*.htm", "*.xhtml"},
	"java":   {"*.java", "*.jsp", "*.jspx", "*.properties"},
	"js":     {"*.js", "*.jsx", "*.mjs", "*.cjs", "*.vue"},
	"json":   {"*.json", "*.jsonc", "*.json5", "composer.lock"},
	"kotlin": {"*.kt", "*.kts"},
	"lua":    {"*.lua"},
	"make":   {"Makefile", "makefile", "GNUmakefile", "*.mk", "*.mak"},
	"md":     {"*.md", "*.markdown", "*.mdown", "*.mdwn", "*.mkd", "*.mkdn", "*.mdx"},
	"php":    {"*.php", "*.php3", "*.php4", "*.php5", "*.phtml"},
	"proto":  {"*.proto"},
	"py":     {"*.py", "*.pyi"},
	"rb":     {"*.rb", "*.gemspec", "Gemfile", "Rakefile"},
	"rs":     {"*.rs"},
	"scala":  {"*.scala", "*.sbt"},
	"sh":     {"*.sh", "*.bash", "*.zsh", "*.ksh", ".bashrc", ".bash_profile", ".bash_login", ".profile", ".zshrc", ".zprofile"},
	"sql":    {"*.sql"},
	"swift":  {"*.swift"},
	"toml":   {"*.toml", "Cargo.lock"},
	"ts":     {"*.ts", "*.tsx", "*.cts", "*.mts"},
	"txt":    {"*.txt"},
	"xml":    {"*.xml", "*.xsd", "*.xsl", "*.xslt", "*.svg"},
	"yaml":   {"*.yaml", "*.yml"},
}

// typeAliases are other names people give the same types.
var typeAliases = map[string]string{
	"bash": "sh", "c++": "cpp", "csharp": "cs", "dockerfile": "docker", "golang": "go",
	"javascript": "js", "kt": "kotlin", "makefile": "make", "markdown": "md", "python": "py",
	"ruby": "rb", "rust": "rs", "shell": "sh", "text": "txt", "typescript": "ts", "yml": "yaml",
}

// TypeNames returns the names of the known file types, sorted; aliases
// (such as "rust" for "rs") are accepted too but not listed.
func TypeNames() []string {
	names := make([]string, 0, len(fileTypes))
	for name := range fileTypes {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// TypeGlobs returns the globs of a known type (or alias), and false for an
// unknown one.
func TypeGlobs(name string) ([]string, bool) {
	name = strings.ToLower(strings.TrimSpace(name))
	if a, ok := typeAliases[name]; ok {
		name = a
	}
	globs, ok := fileTypes[name]
	return slices.Clone(globs), ok
}

// CheckTypes returns an error wrapping ErrUnknownType, listing the known
// types, for the first unknown name of types; nil if all are known.
func CheckTypes(types []string) error {
	_, err := typeGlobSet(types)
	return err
}

// typeGlobSet returns the globs of every type in types, nil for none.
func typeGlobSet(types []string) (globSet, error) {
	var pats []string
	for _, t := range types {
		globs, ok := TypeGlobs(t)
		if !ok {
			return nil, fmt.Errorf("%w %q; known types: %s", ErrUnknownType, t, strings.Join(TypeNames(), ", "))
		}
		pats = append(pats, globs...)
	}
	return newGlobSet(pats)
}
