package mcp

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"strconv"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// spliceMin is the shortest text a result defers to the splicer; shorter
// texts cost the SDK's encoder less than the bookkeeping saves.
const spliceMin = 512

// splicer takes the encoding of long result texts out of the SDK's hands.
//
// The SDK turns a tool result into JSON three times over: the text
// content's MarshalJSON escapes the text, and encoding/json then compacts
// that output (validating it byte by byte) once inside the result's
// MarshalJSON, once when jsonrpc2 marshals the result, and once more when
// the transport encodes the response around it. For a 2000-line page that
// is about half of what hashline mcp does per read_file (perf: 55% of its
// CPU in encoding/json's appendCompact and scanner).
//
// So a long text goes into the result as a short placeholder, a string
// holding a NUL, a random per-session nonce and a sequence number, and its
// JSON encoding (escaped once, by encoding/json) waits here. The transport
// writes each message with one Write on the writer this wraps; Write finds
// the placeholder's JSON form in those bytes and puts the encoded text in
// its place. The client receives exactly what the SDK would have sent, up
// to how the text's characters are escaped.
//
// Each placeholder is replaced once, in the response that carries it: the
// SDK writes a response for every call after its handler returns, cancelled
// or not. The exceptions are responses dropped as the session shuts down
// (and a batch that never completes); their texts stay here until Serve
// returns and the splicer goes with it. The nonce is never written, so no
// file content or argument can name a pending text.
type splicer struct {
	w      io.Writer
	marker []byte // `"\u0000hl` + nonce + `:`, how a placeholder starts on the wire

	mu      sync.Mutex
	next    uint64
	pending map[uint64][]byte // sequence number -> encoded text, quotes included

	wmu sync.Mutex // one Write at a time
	out []byte     // Write's reused output buffer
}

func newSplicer(w io.Writer) *splicer {
	var n [8]byte
	_, _ = rand.Read(n[:]) // never fails (crypto/rand)
	return &splicer{
		w:       w,
		marker:  []byte(`"\u0000hl` + hex.EncodeToString(n[:]) + ":"),
		pending: map[uint64][]byte{},
	}
}

// placeholder is the string that stands for text number seq in a result;
// encoding/json writes it as s.marker, seq and a closing quote.
func (s *splicer) placeholder(seq uint64) string {
	// marker without its quote, with \u0000 as the byte it encodes.
	return "\x00" + string(s.marker[len(`"\u0000`):]) + strconv.FormatUint(seq, 10)
}

// hold replaces each long text in res with a placeholder and keeps its
// encoding for Write. A nil splicer leaves res as it is.
func (s *splicer) hold(res *sdk.CallToolResult) *sdk.CallToolResult {
	if s == nil || res == nil {
		return res
	}
	for _, c := range res.Content {
		tc, ok := c.(*sdk.TextContent)
		if !ok || len(tc.Text) < spliceMin {
			continue
		}
		enc, err := json.Marshal(tc.Text)
		if err != nil {
			continue // cannot happen for a string; the SDK encodes it then
		}
		s.mu.Lock()
		seq := s.next
		s.next++
		s.pending[seq] = enc
		s.mu.Unlock()
		tc.Text = s.placeholder(seq)
	}
	return res
}

// Write writes p, one message (or batch) as the transport encoded it, with
// every pending placeholder in it replaced by its text.
func (s *splicer) Write(p []byte) (int, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	i := bytes.Index(p, s.marker)
	if i < 0 {
		return s.w.Write(p)
	}
	out := s.out[:0]
	rest := p
	for ; i >= 0; i = bytes.Index(rest, s.marker) {
		out = append(out, rest[:i]...)
		digits := rest[i+len(s.marker):]
		if j := bytes.IndexByte(digits, '"'); j >= 0 {
			if enc, ok := s.take(digits[:j]); ok {
				out = append(out, enc...)
				rest = digits[j+1:]
				continue
			}
		}
		// Not one of ours after all: leave it as written.
		out = append(out, s.marker...)
		rest = digits
	}
	out = append(out, rest...)
	if cap(out) <= 1<<20 {
		s.out = out // keep buffers of ordinary pages, not of huge ones
	} else {
		s.out = nil
	}
	if _, err := s.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// take removes and returns the pending text whose sequence number is
// digits.
func (s *splicer) take(digits []byte) ([]byte, bool) {
	seq, err := strconv.ParseUint(string(digits), 10, 64)
	if err != nil {
		return nil, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	enc, ok := s.pending[seq]
	delete(s.pending, seq)
	return enc, ok
}

// pendingTexts reports how many texts wait for their response (for tests).
func (s *splicer) pendingTexts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.pending)
}
