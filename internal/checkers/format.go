package checkers

import (
	"bytes"
	"context"
	"fmt"
	"path"
	"strings"
	"unicode/utf8"
)

// Format runs the format command of r on content, the text of the file
// rel, and returns what it printed on stdout: the formatted content. A
// run whose output is not to be written says why instead, as a phrase of
// which the command is the subject (failed is "" when it is to be
// written): the command could not start, ran past its time, printed
// more than maxBytes, was killed, exited non-zero, printed nothing for a
// content that is not blank, or printed something that is not UTF-8 text
// (a NUL byte would make the file binary).
func (r Rule) Format(ctx context.Context, rel string, content []byte, maxBytes int, o Options) (formatted []byte, failed string) {
	o = o.withDefaults()
	out := r.run(ctx, path.Base(rel), content, o, false, maxBytes)
	switch {
	case out.failed != "":
		return nil, out.failed
	case out.exit != 0:
		msg := strings.ReplaceAll(strings.ToValidUTF8(string(out.output), "\uFFFD"), out.tmpFile, rel)
		msg = strings.ReplaceAll(msg, out.tmpDir, "$TMPDIR")
		if msg = oneLine(msg); msg != "" {
			msg = ": " + msg
		}
		return nil, fmt.Sprintf("exited with status %d%s", out.exit, msg)
	case len(out.stdout) == 0 && len(bytes.TrimSpace(content)) > 0:
		// Nothing for blank content is a formatter's due (Python's print
		// nothing for blank lines alone); for any other, a formatter that
		// failed quietly, or wrote elsewhere than on its stdout.
		return nil, "printed nothing"
	case !utf8.Valid(out.stdout) || bytes.IndexByte(out.stdout, 0) >= 0:
		return nil, "printed something that is not UTF-8 text"
	}
	return out.stdout, ""
}
