package wire

import (
	"fmt"
	"strconv"
	"strings"
)

// WorkspaceMetadataKey is the request metadata that names the workspace a
// call is meant for. A router may route on it (header-based routing), and
// a server started with a workspace name refuses a call that names another
// (WRONG_WORKSPACE), so that a misrouted call never reads or edits the
// wrong tree.
const WorkspaceMetadataKey = "x-hashline-workspace"

// RouterMessagePrefix starts the messages of the statuses the repository's
// router configuration (deploy/nginx) answers itself: they say which
// workspace's server is down or unknown and what to do, so a client adds
// no advice of its own about a server at the address it dialled (the
// router's, which answered).
const RouterMessagePrefix = "hashline router: "

// MaxWorkspaceName is the longest workspace name: a DNS label, so that the
// name can also be the first label of a host name (<workspace>.<domain>).
const MaxWorkspaceName = 63

// CheckWorkspaceName returns nil if name is a workspace name: a DNS label
// (RFC 1123) of 1 to 63 lowercase letters, digits and '-', starting and
// ending with a letter or digit. Names with path or host syntax are refused
// with the reason, so that a name can be used as a header value, a host's
// first label and a Kubernetes name alike, and never reads as a path or an
// address. The error quotes at most the start of a long name.
func CheckWorkspaceName(name string) error {
	q := quoteName(name)
	switch {
	case name == "":
		return fmt.Errorf("the workspace name is empty: name one, e.g. \"alpha\" (lowercase letters, digits and '-', at most %d)", MaxWorkspaceName)
	case len(name) > MaxWorkspaceName:
		return fmt.Errorf("workspace name %s is %d bytes: at most %d (a DNS label)", q, len(name), MaxWorkspaceName)
	case strings.ContainsAny(name, "/\\") || strings.Contains(name, ".."):
		return fmt.Errorf("workspace name %s has path syntax: a workspace is named, not a directory; use its name alone, e.g. \"alpha\"", q)
	case strings.ContainsAny(name, ".:@[]"):
		return fmt.Errorf("workspace name %s has host syntax: use the workspace's name alone (\"alpha\"), not a host, domain or port", q)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case c == '-' && i > 0 && i < len(name)-1:
		case c >= 'A' && c <= 'Z':
			return fmt.Errorf("workspace name %s has upper case: workspace names are lowercase (%q)", q, strings.ToLower(name))
		default:
			return fmt.Errorf("workspace name %s: use only lowercase letters, digits and '-', starting and ending with a letter or digit", q)
		}
	}
	return nil
}

// quoteName quotes name for a message, cut to the longest valid length
// and a marker, so that an oversized name does not fill the message.
func quoteName(name string) string {
	if len(name) > MaxWorkspaceName {
		return strconv.Quote(name[:MaxWorkspaceName]) + "..."
	}
	return strconv.Quote(name)
}
