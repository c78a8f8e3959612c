package syntax

import "github.com/evanw/esbuild/pkg/api"

// WithParser makes Check use parse in place of the language's parser.
func WithParser(o Options, parse func(src []byte) []Diagnostic) Options {
	o.parser = parse
	return o
}

// Hunk exposes the changed lines hunkOf finds: the first, and the last in
// before and in after.
func Hunk(before, after []byte) (first, bLast, aLast int) {
	h := hunkOf(before, after)
	return h.firstLine, h.bLast, h.aLast
}

// Chunk is the piece chunk would parse alone, and whether there is one.
func Chunk(name string, before, after []byte) (string, bool) {
	p, ok := chunk(Language(name), after, hunkOf(before, after))
	return string(p), ok
}

// Balance runs the balance check alone.
var Balance = balance

// ESBuildParses is esbuildParses of src, with the loader for name's
// extension, and ESBuildErrors the errors of a Transform of src alone.
func ESBuildParses(name string, src []byte) bool {
	return esbuildParses(src, loaderOf(Language(name)))
}

func ESBuildErrors(name string, src []byte) []Diagnostic {
	return esbuildErrors(transform(src, loaderOf(Language(name))))
}

func loaderOf(l Lang) api.Loader {
	switch l {
	case LangTS:
		return api.LoaderTS
	case LangTSX:
		return api.LoaderTSX
	}
	return api.LoaderJSX
}
