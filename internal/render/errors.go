package render

import (
	"fmt"
	"strings"
	"unicode"

	"google.golang.org/grpc/codes"

	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
)

// The refusals a call can meet, as a model reads them. What to do about a
// face's own set-up (its flags, the MCP client's configuration, whether
// the server is running) is said by the face, after these.

// Stale renders the refusal of a stale reference: the server's message,
// the view of the current lines with ">>>" on the changed ones, written
// to be acted on. The CLI and the Go client end it with the version the
// fresh tags come from; for MCP it is the message alone, as the published
// server's is.
func Stale(message, currentVersion string, f Face) string {
	if f == MCP {
		return message
	}
	msg := strings.TrimSuffix(message, "\n")
	if currentVersion != "" {
		msg += "\ncurrent version " + currentVersion
	}
	return msg + "\n"
}

// Refused renders any other refusal: why it was refused (the server's
// reason, e.g. NOT_FOUND, or without one the code's name, as CodeName
// spells it) and the server's message, which says what to do next. For
// MCP it says what was being done (doing, e.g. "editing") to which path:
//
//	Error editing main.go (NOT_FOUND): ...
func Refused(doing, path, why, message string, f Face) string {
	if f == MCP {
		return fmt.Sprintf("Error %s %s (%s): %s", doing, path, why, message)
	}
	return fmt.Sprintf("%s: %s\n", why, message)
}

// CodeName spells a gRPC code as the protocol and the reasons do:
// "DEADLINE_EXCEEDED".
func CodeName(c codes.Code) string {
	var b strings.Builder
	for i, r := range c.String() {
		if i > 0 && 'A' <= r && r <= 'Z' {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToUpper(r))
	}
	return b.String()
}

// RefusedChanges renders a refused change set: every failing change with
// its path, reason and message (for a stale reference, the current lines
// with ">>>" on the changed ones) and, for the CLI and the Go client, the
// version the fresh tags come from. For MCP, whose edit_file sends a set
// of total files, it says how many of them failed.
func RefusedChanges(changes []*hashlinev1.ChangeError, stale []*hashlinev1.StaleRef, total int, f Face) string {
	var b strings.Builder
	if f == MCP {
		fmt.Fprintf(&b, "Nothing was written: %d of %d files failed.", len(changes), total)
		for _, c := range changes {
			fmt.Fprintf(&b, "\n\n%s (%s): %s", c.GetPath(), c.GetReason(), strings.TrimSuffix(c.GetMessage(), "\n"))
		}
		return b.String()
	}
	fmt.Fprintf(&b, "The change set was refused and nothing was written: %s failed.\n", plural(len(changes), "change"))
	for _, c := range changes {
		msg := strings.TrimSuffix(c.GetMessage(), "\n")
		fmt.Fprintf(&b, "change %d (%s): %s: %s\n", c.GetChangeIndex(), c.GetPath(), c.GetReason(), msg)
		for _, s := range stale {
			if s.GetChangeIndex() == c.GetChangeIndex() && s.GetCurrentVersion() != "" {
				fmt.Fprintf(&b, "current version %s\n", s.GetCurrentVersion())
				break
			}
		}
	}
	return b.String()
}
