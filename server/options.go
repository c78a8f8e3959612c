package server

import (
	"io"
	"log/slog"

	"github.com/hashline/hashline/internal/hashline"
)

// Defaults for the read limits of DESIGN.md section 3.
const (
	DefaultReadLimit      = 2000
	DefaultReadByteBudget = 256 << 10
	DefaultMaxLineBytes   = 4 << 10
	DefaultContext        = 3
	DefaultMaxEdits       = 10000
	// DefaultMaxResponseBytes matches grpc-go's default client receive
	// limit: a larger Edit response would be written and then lost.
	DefaultMaxResponseBytes = 4 << 20
)

// Option configures a Service.
type Option func(*options)

type options struct {
	hasher           hashline.Hasher
	readLimit        int
	readByteBudget   int
	maxLineBytes     int
	maxEdits         int
	maxResponseBytes int
	logger           *slog.Logger
}

func defaultOptions() options {
	return options{
		readLimit:        DefaultReadLimit,
		readByteBudget:   DefaultReadByteBudget,
		maxLineBytes:     DefaultMaxLineBytes,
		maxEdits:         DefaultMaxEdits,
		maxResponseBytes: DefaultMaxResponseBytes,
		logger:           slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
}

// WithHasher sets the line hasher (and so the hash length) of every tag the
// service prints and checks.
func WithHasher(h hashline.Hasher) Option { return func(o *options) { o.hasher = h } }

// WithReadLimit sets how many lines Read returns when the request gives no
// limit, and the most it returns whatever the request asks.
func WithReadLimit(n int) Option {
	return func(o *options) {
		if n > 0 {
			o.readLimit = n
		}
	}
}

// WithReadByteBudget caps the bytes of tagged text one Read returns; past it
// the response is truncated with a next offset.
func WithReadByteBudget(n int) Option {
	return func(o *options) {
		if n > 0 {
			o.readByteBudget = n
		}
	}
}

// WithMaxLineBytes sets the length past which a line's content is shown cut
// (its hash still covers the whole line).
func WithMaxLineBytes(n int) Option {
	return func(o *options) {
		if n > 0 {
			o.maxLineBytes = n
		}
	}
}

// WithMaxEdits caps the edits of one batch.
func WithMaxEdits(n int) Option {
	return func(o *options) {
		if n > 0 {
			o.maxEdits = n
		}
	}
}

// WithMaxResponseBytes caps an Edit response; a bigger one is refused
// before anything is written (set it to the clients' receive limit).
func WithMaxResponseBytes(n int) Option {
	return func(o *options) {
		if n > 0 {
			o.maxResponseBytes = n
		}
	}
}

// WithLogger sets the logger; the default discards.
func WithLogger(l *slog.Logger) Option {
	return func(o *options) {
		if l != nil {
			o.logger = l
		}
	}
}
