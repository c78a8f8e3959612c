package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
)

// The JSON changes a model makes to a real file: an entry added to an
// object or array, either at its end (after the last entry, which then
// needs a comma) or to an array or object written on one line. The broken
// classes send them as models get them wrong: the comma forgotten, the
// closing line or the closing bracket lost.

// jsonEntry is the entry a model adds, at indentation ind, into the
// container that close closes ('}' an object, ']' an array).
func jsonEntry(ind string, close byte, n int) string {
	if close == '}' {
		return fmt.Sprintf("%s\"hashline\": \"checkpoint %d\"", ind, n)
	}
	return fmt.Sprintf("%s\"hashline checkpoint %d\"", ind, n)
}

// jsonLast lists the lines (0-based) of a JSON file that are the last
// entry of a multi-line object or array: no trailing comma, not opening a
// container, and followed by the container's closing line, indented less.
// A file that is not strict JSON (comments, trailing commas) has none.
func jsonLast(src *source) []int {
	if src.lang != "json" || !json.Valid([]byte(src.text)) {
		return nil
	}
	ls := src.lines
	var out []int
	for i := 0; i+1 < len(ls); i++ {
		t, next := strings.TrimSpace(ls[i]), strings.TrimSpace(ls[i+1])
		if t == "" || next == "" || strings.HasSuffix(t, ",") || strings.HasSuffix(t, "{") || strings.HasSuffix(t, "[") ||
			t[0] == '}' || t[0] == ']' || (next[0] != '}' && next[0] != ']') || len(indentOf(ls[i+1])) >= len(indentOf(ls[i])) {
			continue
		}
		out = append(out, i)
	}
	return out
}

// jsonAppended: an entry added after the last one of a multi-line object
// or array, the last one given its comma: one line replaced by two.
func jsonAppended(src *source, rng *rand.Rand) []change {
	var out []change
	for _, i := range jsonLast(src) {
		l := src.lines[i]
		e := jsonEntry(indentOf(l), strings.TrimSpace(src.lines[i+1])[0], i+1)
		out = append(out, change{kind: "entry added at an object's end", start: i + 1, end: i + 1, text: []string{l + ",", e}})
	}
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// jsonClosed: the same, as a replacement of the last entry and the
// container's closing line, which the text repeats.
func jsonClosed(src *source, rng *rand.Rand) []change {
	var out []change
	for _, i := range jsonLast(src) {
		l, next := src.lines[i], src.lines[i+1]
		e := jsonEntry(indentOf(l), strings.TrimSpace(next)[0], i+1)
		out = append(out, change{kind: "entry added before an object's end", start: i + 1, end: i + 2, text: []string{l + ",", e, next}})
	}
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// jsonInline: an entry added to an array or object that opens and closes
// on one line ("files": ["dist"],), before its closing bracket.
func jsonInline(src *source, rng *rand.Rand) []change {
	if src.lang != "json" || !json.Valid([]byte(src.text)) {
		return nil
	}
	var out []change
	for i, l := range src.lines {
		t := strings.TrimSuffix(strings.TrimSpace(l), ",")
		if t == "" {
			continue
		}
		close := t[len(t)-1]
		open := byte('[')
		if close == '}' {
			open = '{'
		} else if close != ']' {
			continue
		}
		k := strings.IndexByte(l, open)
		if k < 0 || strings.Count(l, string(open)) != 1 || strings.Count(l, string(close)) != 1 || strings.IndexByte(l, close) < k {
			continue
		}
		j := strings.LastIndexByte(l, close)
		entry := strings.TrimSpace(jsonEntry("", close, i+1))
		if strings.TrimSpace(l[k+1:j]) != "" {
			entry = ", " + entry
		}
		out = append(out, change{kind: "entry added on one line", start: i + 1, end: i + 1, text: []string{l[:j] + entry + l[j:]}})
	}
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// breaksJSON reports whether the intended file is JSON and the file as
// sent is not.
func breaksJSON(want, sent []string) bool {
	return json.Valid(join(want)) && !json.Valid(join(sent))
}
