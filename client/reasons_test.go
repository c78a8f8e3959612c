package client_test

import (
	"errors"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/protoadapt"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
)

// sentinels names the sentinel of every reason. A reason added to the enum
// fails TestEveryReasonHasASentinel until it has one here, and an entry
// here only compiles if the sentinel exists.
var sentinels = map[hashlinev1.ErrorReason]error{
	hashlinev1.ErrorReason_ERROR_REASON_STALE_REF:           client.ErrStaleRef,
	hashlinev1.ErrorReason_ERROR_REASON_VERSION_MISMATCH:    client.ErrVersionMismatch,
	hashlinev1.ErrorReason_ERROR_REASON_INVALID_REF:         client.ErrInvalidRef,
	hashlinev1.ErrorReason_ERROR_REASON_LINE_OUT_OF_RANGE:   client.ErrLineOutOfRange,
	hashlinev1.ErrorReason_ERROR_REASON_OVERLAPPING_EDITS:   client.ErrOverlappingEdits,
	hashlinev1.ErrorReason_ERROR_REASON_EMPTY_EDITS:         client.ErrEmptyEdits,
	hashlinev1.ErrorReason_ERROR_REASON_INVALID_EDIT:        client.ErrInvalidEdit,
	hashlinev1.ErrorReason_ERROR_REASON_AMBIGUOUS_TEXT:      client.ErrAmbiguousText,
	hashlinev1.ErrorReason_ERROR_REASON_NO_CHANGE:           client.ErrNoChange,
	hashlinev1.ErrorReason_ERROR_REASON_TEXT_NOT_FOUND:      client.ErrTextNotFound,
	hashlinev1.ErrorReason_ERROR_REASON_NOT_READ:            client.ErrNotRead,
	hashlinev1.ErrorReason_ERROR_REASON_NOT_FOUND:           client.ErrNotFound,
	hashlinev1.ErrorReason_ERROR_REASON_ALREADY_EXISTS:      client.ErrAlreadyExists,
	hashlinev1.ErrorReason_ERROR_REASON_OUTSIDE_ROOT:        client.ErrOutsideRoot,
	hashlinev1.ErrorReason_ERROR_REASON_VCS_METADATA:        client.ErrVCSMetadata,
	hashlinev1.ErrorReason_ERROR_REASON_NOT_REGULAR_FILE:    client.ErrNotRegularFile,
	hashlinev1.ErrorReason_ERROR_REASON_BINARY_FILE:         client.ErrBinaryFile,
	hashlinev1.ErrorReason_ERROR_REASON_NOT_TEXT:            client.ErrNotText,
	hashlinev1.ErrorReason_ERROR_REASON_TOO_LARGE:           client.ErrTooLarge,
	hashlinev1.ErrorReason_ERROR_REASON_INVALID_PATH:        client.ErrInvalidPath,
	hashlinev1.ErrorReason_ERROR_REASON_INVALID_PATTERN:     client.ErrInvalidPattern,
	hashlinev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT:    client.ErrInvalidArgument,
	hashlinev1.ErrorReason_ERROR_REASON_BINARY_CONTENT:      client.ErrBinaryContent,
	hashlinev1.ErrorReason_ERROR_REASON_REQUEST_ID_REUSED:   client.ErrRequestIDReused,
	hashlinev1.ErrorReason_ERROR_REASON_PERMISSION_DENIED:   client.ErrPermissionDenied,
	hashlinev1.ErrorReason_ERROR_REASON_NOT_WRITABLE:        client.ErrNotWritable,
	hashlinev1.ErrorReason_ERROR_REASON_IO_ERROR:            client.ErrIO,
	hashlinev1.ErrorReason_ERROR_REASON_CANCELED:            client.ErrCanceled,
	hashlinev1.ErrorReason_ERROR_REASON_DEADLINE_EXCEEDED:   client.ErrDeadlineExceeded,
	hashlinev1.ErrorReason_ERROR_REASON_INTERNAL:            client.ErrInternal,
	hashlinev1.ErrorReason_ERROR_REASON_UNAUTHENTICATED:     client.ErrUnauthenticated,
	hashlinev1.ErrorReason_ERROR_REASON_READ_ONLY:           client.ErrReadOnly,
	hashlinev1.ErrorReason_ERROR_REASON_PATH_NOT_ALLOWED:    client.ErrPathNotAllowed,
	hashlinev1.ErrorReason_ERROR_REASON_RATE_LIMITED:        client.ErrRateLimited,
	hashlinev1.ErrorReason_ERROR_REASON_TOO_MANY_STREAMS:    client.ErrTooManyStreams,
	hashlinev1.ErrorReason_ERROR_REASON_SHUTTING_DOWN:       client.ErrShuttingDown,
	hashlinev1.ErrorReason_ERROR_REASON_WATCH_UNAVAILABLE:   client.ErrWatchUnavailable,
	hashlinev1.ErrorReason_ERROR_REASON_DIRECTORY_NOT_EMPTY: client.ErrDirectoryNotEmpty,
	hashlinev1.ErrorReason_ERROR_REASON_CONFLICTING_CHANGES: client.ErrConflictingChanges,
}

// reasons returns every value of the enum but UNSPECIFIED, from the
// generated descriptor.
func reasons() []hashlinev1.ErrorReason {
	values := hashlinev1.ErrorReason(0).Descriptor().Values()
	var out []hashlinev1.ErrorReason
	for i := range values.Len() {
		if n := values.Get(i).Number(); n != 0 {
			out = append(out, hashlinev1.ErrorReason(n))
		}
	}
	return out
}

// statusWithReason is a server status carrying the reason string.
func statusWithReason(t *testing.T, reason string) error {
	t.Helper()
	st, err := status.New(codes.Unknown, "m").WithDetails(protoadapt.MessageV1Of(&hashlinev1.ErrorInfo{Reason: reason, Domain: "hashline.v1"}))
	if err != nil {
		t.Fatal(err)
	}
	return st.Err()
}

func TestEveryReasonHasASentinel(t *testing.T) {
	all := reasons()
	if len(all) < 37 {
		t.Fatalf("the enum has %d reasons; the descriptor walk is broken", len(all))
	}
	for _, r := range all {
		t.Run(r.String(), func(t *testing.T) {
			s, ok := sentinels[r]
			if !ok {
				t.Fatalf("no sentinel for %s: declare one in client/errors.go and list it in this test", r)
			}
			got := client.FromStatus(statusWithReason(t, client.ReasonName(r)))
			if !errors.Is(got, s) {
				t.Errorf("errors.Is(%v, sentinel) = false", got)
			}
			for other, os := range sentinels {
				if other != r && errors.Is(got, os) {
					t.Errorf("%v also matches the sentinel of %s", got, other)
				}
			}
		})
	}
	if len(sentinels) != len(all) {
		t.Errorf("%d sentinels listed for %d reasons", len(sentinels), len(all))
	}
}

func TestReasonNamesAreTheWireStrings(t *testing.T) {
	t.Run("every value's name is its enum name without the prefix, and parses back", func(t *testing.T) {
		for _, r := range reasons() {
			name := client.ReasonName(r)
			if name == "" || "ERROR_REASON_"+name != r.String() {
				t.Errorf("ReasonName(%s) = %q", r, name)
			}
			if got := client.ParseReason(name); got != r {
				t.Errorf("ParseReason(%q) = %s, want %s", name, got, r)
			}
		}
	})
	t.Run("the wire strings clients already match are unchanged", func(t *testing.T) {
		for r, want := range map[hashlinev1.ErrorReason]string{
			hashlinev1.ErrorReason_ERROR_REASON_STALE_REF: "STALE_REF",
			hashlinev1.ErrorReason_ERROR_REASON_IO_ERROR:  "IO_ERROR",
			hashlinev1.ErrorReason_ERROR_REASON_NOT_FOUND: "NOT_FOUND",
		} {
			if got := client.ReasonName(r); got != want {
				t.Errorf("ReasonName(%s) = %q, want %q", r, got, want)
			}
		}
	})
	t.Run("unspecified and unknown values have no name", func(t *testing.T) {
		for _, r := range []hashlinev1.ErrorReason{0, 9999, -1} {
			if got := client.ReasonName(r); got != "" {
				t.Errorf("ReasonName(%d) = %q, want empty", r, got)
			}
		}
	})
	t.Run("strings that are not a reason parse as unspecified", func(t *testing.T) {
		for _, s := range []string{"", "UNSPECIFIED", "ERROR_REASON_STALE_REF", "stale_ref", "SOMETHING_NEWER", " STALE_REF"} {
			if got := client.ParseReason(s); got != hashlinev1.ErrorReason_ERROR_REASON_UNSPECIFIED {
				t.Errorf("ParseReason(%q) = %s, want UNSPECIFIED", s, got)
			}
		}
	})
	t.Run("a reason newer than the client is kept as sent and matches no sentinel", func(t *testing.T) {
		got := client.FromStatus(statusWithReason(t, "SOMETHING_NEWER"))
		var e *client.Error
		if !errors.As(got, &e) || e.Reason != "SOMETHING_NEWER" {
			t.Fatalf("decoded %v, want reason SOMETHING_NEWER", got)
		}
		for r, s := range sentinels {
			if errors.Is(got, s) {
				t.Errorf("matches the sentinel of %s", r)
			}
		}
	})
}

func TestStaleRefReasonNames(t *testing.T) {
	values := hashlinev1.StaleRefReason(0).Descriptor().Values()
	if values.Len() < 4 {
		t.Fatalf("StaleRefReason has %d values", values.Len())
	}
	for i := range values.Len() {
		r := hashlinev1.StaleRefReason(values.Get(i).Number())
		name := client.StaleRefReasonName(r)
		if r == 0 {
			if name != "" {
				t.Errorf("StaleRefReasonName(UNSPECIFIED) = %q, want empty", name)
			}
			continue
		}
		if name == "" || strings.Contains(name, "STALE_REF_REASON") || "STALE_REF_REASON_"+name != r.String() {
			t.Errorf("StaleRefReasonName(%s) = %q", r, name)
		}
		if got := client.ParseStaleRefReason(name); got != r {
			t.Errorf("ParseStaleRefReason(%q) = %s, want %s", name, got, r)
		}
	}
	if got := client.ParseStaleRefReason("STALE_REF"); got != 0 {
		t.Errorf("ParseStaleRefReason(STALE_REF) = %s: an ErrorReason is not a StaleRefReason", got)
	}
}
