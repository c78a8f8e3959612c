package syntax

import (
	"path"
	"path/filepath"
	"strings"
	"sync"
)

// Lang is the language a file is checked as.
type Lang int

// The languages; LangOther gets the balance check.
const (
	LangOther Lang = iota
	LangGo
	LangJS // JavaScript, read as JSX (see the package doc)
	LangJSX
	LangTS
	LangTSX
	LangJSON
	LangJSONC // JSON with comments and trailing commas
	LangYAML
	LangProse
)

var langNames = [...]string{"other", "go", "javascript", "jsx", "typescript", "tsx", "json", "jsonc", "yaml", "prose"}

func (l Lang) String() string {
	if l >= 0 && int(l) < len(langNames) {
		return langNames[l]
	}
	return "unknown"
}

func (l Lang) checker() string {
	switch l {
	case LangGo:
		return CheckerGo
	case LangJS, LangJSX, LangTS, LangTSX:
		return CheckerESBuild
	case LangJSON, LangJSONC:
		return CheckerJSON
	case LangYAML:
		return CheckerYAML
	case LangProse:
		return ""
	}
	return CheckerBalance
}

var byExt = sync.OnceValue(func() map[string]Lang {
	return map[string]Lang{
		".go":   LangGo,
		".js":   LangJS,
		".mjs":  LangJS,
		".cjs":  LangJS,
		".jsx":  LangJSX,
		".ts":   LangTS,
		".mts":  LangTS,
		".cts":  LangTS,
		".tsx":  LangTSX,
		".json": LangJSON,
		// JSON with comments by name: VS Code's, TypeScript's and a few tools'.
		".jsonc":    LangJSONC,
		".json5":    LangOther, // JSON5 has unquoted keys and more: balance only
		".yaml":     LangYAML,
		".yml":      LangYAML,
		".md":       LangProse,
		".mdx":      LangProse,
		".markdown": LangProse,
		".txt":      LangProse,
		".text":     LangProse,
		".rst":      LangProse,
		".adoc":     LangProse,
		".asciidoc": LangProse,
		".org":      LangProse,
		".log":      LangProse,
		".csv":      LangProse,
		".tsv":      LangProse,
	}
})

// byName: well-known file names, matched whole (case-sensitive, as
// the tools that read them are).
var byName = sync.OnceValue(func() map[string]Lang {
	return map[string]Lang{
		"tsconfig.json":      LangJSONC,
		"jsconfig.json":      LangJSONC,
		"devcontainer.json":  LangJSONC,
		".devcontainer.json": LangJSONC,
		"settings.json":      LangJSONC, // VS Code's; plain JSON is JSONC too
		"launch.json":        LangJSONC,
		"tasks.json":         LangJSONC,
		"extensions.json":    LangJSONC,
		".eslintrc.json":     LangJSONC,
		".babelrc":           LangJSONC,
		".eslintrc":          LangJSONC,
		".prettierrc":        LangJSONC, // JSON or YAML; both parse as JSONC or fail alike
		"turbo.json":         LangJSONC,
		"go.mod":             LangOther,
		"go.sum":             LangProse, // hashes and versions, no brackets to balance
		"README":             LangProse,
		"LICENSE":            LangProse,
		"LICENCE":            LangProse,
		"COPYING":            LangProse,
		"AUTHORS":            LangProse,
		"NOTICE":             LangProse,
		"CHANGELOG":          LangProse,
		"CODEOWNERS":         LangProse,
		".gitignore":         LangProse,
		".dockerignore":      LangProse,
		".clang-format":      LangYAML,
		".golangci.yml":      LangYAML,
		"pnpm-lock.yaml":     LangYAML,
	}
})

// Language is the language path is checked as: by its base name when it is
// a well-known one, else by its extension (case-insensitive). tsconfig.*.json
// (tsconfig.base.json and the like) is JSON with comments.
func Language(name string) Lang {
	base := path.Base(filepath.ToSlash(name))
	if l, ok := byName()[base]; ok {
		return l
	}
	if strings.HasSuffix(base, ".json") && (strings.HasPrefix(base, "tsconfig.") || strings.HasPrefix(base, "jsconfig.")) {
		return LangJSONC
	}
	ext := strings.ToLower(filepath.Ext(base))
	if l, ok := byExt()[ext]; ok {
		return l
	}
	return LangOther
}
