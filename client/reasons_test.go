package client_test

import (
	"errors"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/protoadapt"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
)

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
			s, ok := client.Sentinels[r]
			if !ok {
				t.Fatalf("no sentinel for %s: run make generate to regenerate client/sentinels.go", r)
			}
			if s.Reason != client.ReasonName(r) {
				t.Errorf("the sentinel of %s has reason %q", r, s.Reason)
			}
			got := client.FromStatus(statusWithReason(t, client.ReasonName(r)))
			if !errors.Is(got, s) {
				t.Errorf("errors.Is(%v, sentinel) = false", got)
			}
			for other, os := range client.Sentinels {
				if other != r && errors.Is(got, os) {
					t.Errorf("%v also matches the sentinel of %s", got, other)
				}
			}
		})
	}
	t.Run("every sentinel is of a reason of the enum", func(t *testing.T) {
		for r := range client.Sentinels {
			if r == hashlinev1.ErrorReason_ERROR_REASON_UNSPECIFIED || client.ReasonName(r) == "" {
				t.Errorf("a sentinel for %s, which is not a reason", r)
			}
		}
		if len(client.Sentinels) != len(all) {
			t.Errorf("%d sentinels for %d reasons", len(client.Sentinels), len(all))
		}
	})
	t.Run("the exported sentinels are the table's", func(t *testing.T) {
		for r, s := range map[hashlinev1.ErrorReason]*client.Error{
			hashlinev1.ErrorReason_ERROR_REASON_STALE_REF:         client.ErrStaleRef,
			hashlinev1.ErrorReason_ERROR_REASON_IO_ERROR:          client.ErrIO,
			hashlinev1.ErrorReason_ERROR_REASON_VCS_METADATA:      client.ErrVCSMetadata,
			hashlinev1.ErrorReason_ERROR_REASON_REQUEST_ID_REUSED: client.ErrRequestIDReused,
		} {
			if client.Sentinels[r] != s {
				t.Errorf("the table's sentinel of %s is not the exported one", r)
			}
		}
	})
}

func TestReasonCode(t *testing.T) {
	t.Run("every reason has the code its grpc_code option declares", func(t *testing.T) {
		for _, r := range reasons() {
			opt := proto.GetExtension(r.Descriptor().Values().ByNumber(r.Number()).Options(), hashlinev1.E_GrpcCode).(hashlinev1.GrpcCode)
			c, ok := client.ReasonCode(r)
			if !ok || opt == hashlinev1.GrpcCode_GRPC_CODE_UNSPECIFIED || c != codes.Code(opt) {
				t.Errorf("ReasonCode(%s) = %v, %v; the option declares %s", r, c, ok, opt)
			}
		}
	})
	t.Run("the codes clients already switch on are unchanged", func(t *testing.T) {
		for r, want := range map[hashlinev1.ErrorReason]codes.Code{
			hashlinev1.ErrorReason_ERROR_REASON_STALE_REF:         codes.Aborted,
			hashlinev1.ErrorReason_ERROR_REASON_NOT_FOUND:         codes.NotFound,
			hashlinev1.ErrorReason_ERROR_REASON_IO_ERROR:          codes.Internal,
			hashlinev1.ErrorReason_ERROR_REASON_CANCELED:          codes.Canceled,
			hashlinev1.ErrorReason_ERROR_REASON_UNAUTHENTICATED:   codes.Unauthenticated,
			hashlinev1.ErrorReason_ERROR_REASON_WATCH_UNAVAILABLE: codes.Unavailable,
		} {
			if got, ok := client.ReasonCode(r); !ok || got != want {
				t.Errorf("ReasonCode(%s) = %v, %v, want %v", r, got, ok, want)
			}
		}
	})
	t.Run("unspecified and unknown values have none", func(t *testing.T) {
		for _, r := range []hashlinev1.ErrorReason{0, 9999, -1} {
			if c, ok := client.ReasonCode(r); ok {
				t.Errorf("ReasonCode(%d) = %v, true", r, c)
			}
		}
	})
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
		for r, s := range client.Sentinels {
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
