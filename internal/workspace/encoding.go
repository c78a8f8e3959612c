package workspace

import (
	"bytes"
	"encoding/binary"
	"unicode/utf16"
	"unicode/utf8"
)

// Encoding names how a file's text is stored on disk.
type Encoding string

// The encodings ReadFile recognises and WriteFile can produce. UTF-16 is
// recognised only by its byte-order mark: without one, UTF-16 cannot be told
// from binary data reliably.
const (
	UTF8    Encoding = "utf-8"
	UTF16LE Encoding = "utf-16le"
	UTF16BE Encoding = "utf-16be"
)

// byteOrder is what the UTF-16 codec needs of binary.LittleEndian and
// binary.BigEndian.
type byteOrder interface {
	binary.ByteOrder
	binary.AppendByteOrder
}

// binaryProbe is how much of a file is searched for a NUL byte to call it
// binary, the same heuristic as git and grep.
const binaryProbe = 8 << 10

// decodeText turns a file's raw bytes into UTF-8 text, or explains why it is
// not text. For UTF-8 the text is raw itself (no copy); a UTF-8 BOM stays in
// the text because the byte-exact round trip of the file depends on it.
func decodeText(op, p string, raw []byte) ([]byte, Encoding, error) {
	switch {
	case bytes.HasPrefix(raw, []byte{0xFF, 0xFE, 0, 0}), bytes.HasPrefix(raw, []byte{0, 0, 0xFE, 0xFF}):
		// Checked before UTF-16LE, whose BOM is a prefix of UTF-32LE's.
		return nil, "", newErr(op, p, ErrNotText, "file starts with a UTF-32 byte-order mark; only UTF-8 and UTF-16 text is supported, convert the file to UTF-8")
	case bytes.HasPrefix(raw, []byte{0xFF, 0xFE}):
		return decodeUTF16(op, p, raw, binary.LittleEndian, UTF16LE)
	case bytes.HasPrefix(raw, []byte{0xFE, 0xFF}):
		return decodeUTF16(op, p, raw, binary.BigEndian, UTF16BE)
	}
	if i := bytes.IndexByte(raw[:min(len(raw), binaryProbe)], 0); i >= 0 {
		return nil, "", newErr(op, p, ErrBinary, "binary file (NUL byte at byte offset %d); only text files can be read or edited", i)
	}
	if !utf8.Valid(raw) {
		return nil, "", newErr(op, p, ErrNotText, "invalid UTF-8 at byte offset %d; the file is not UTF-8 text (UTF-16 is accepted only with a byte-order mark)", invalidUTF8(raw))
	}
	return raw, UTF8, nil
}

// decodeUTF16 decodes raw (which starts with a BOM) to UTF-8 text without
// the BOM, and accepts the result only if encoding it again reproduces raw
// exactly: a lossy decode (an unpaired surrogate turned into U+FFFD) would
// otherwise corrupt the file on its next write.
func decodeUTF16(op, p string, raw []byte, order byteOrder, enc Encoding) ([]byte, Encoding, error) {
	body := raw[2:]
	if len(body)%2 != 0 {
		return nil, "", newErr(op, p, ErrNotText, "file has a %s byte-order mark but an odd number of bytes; it is not %s text", enc, enc)
	}
	text := make([]byte, 0, len(body)/2+len(body)/4)
	for i := 0; i < len(body); i += 2 {
		r := rune(order.Uint16(body[i:]))
		if utf16.IsSurrogate(r) {
			var r2 rune = utf8.RuneError
			if i+4 <= len(body) {
				r2 = rune(order.Uint16(body[i+2:]))
			}
			if r = utf16.DecodeRune(r, r2); r == utf8.RuneError {
				return nil, "", newErr(op, p, ErrNotText, "unpaired UTF-16 surrogate at byte offset %d; the file is not valid %s text", i+2, enc)
			}
			i += 2
		}
		text = utf8.AppendRune(text, r)
	}
	again, _ := encodeUTF16(text, order)
	if !bytes.Equal(again, raw) {
		return nil, "", newErr(op, p, ErrNotText, "%s text does not survive a round trip through UTF-8; it cannot be edited without changing bytes", enc)
	}
	if i := bytes.IndexByte(text[:min(len(text), binaryProbe)], 0); i >= 0 {
		return nil, "", newErr(op, p, ErrBinary, "binary file (NUL character in the decoded %s text at offset %d); only text files can be read or edited", enc, i)
	}
	return text, enc, nil
}

// encodeUTF16 encodes UTF-8 text as UTF-16 with a BOM. It returns the offset
// of the first invalid UTF-8 byte, or -1.
func encodeUTF16(text []byte, order byteOrder) ([]byte, int) {
	out := make([]byte, 0, 2+2*len(text))
	out = order.AppendUint16(out, 0xFEFF)
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRune(text[i:])
		if r == utf8.RuneError && n <= 1 {
			return nil, i
		}
		i += n
		if r1, r2 := utf16.EncodeRune(r); r1 != utf8.RuneError {
			out = order.AppendUint16(out, uint16(r1))
			out = order.AppendUint16(out, uint16(r2))
			continue
		}
		out = order.AppendUint16(out, uint16(r))
	}
	return out, -1
}

// Encode returns the bytes WriteFile would put on disk for text in enc, so
// a caller can compute the Version of a write it does not make (a dry run).
func Encode(text []byte, enc Encoding) ([]byte, error) {
	return encodeText("encode", "", text, enc)
}

// encodeText turns UTF-8 text into the bytes to write in enc.
func encodeText(op, p string, text []byte, enc Encoding) ([]byte, error) {
	var order byteOrder
	switch enc {
	case "", UTF8:
		if !utf8.Valid(text) {
			return nil, newErr(op, p, ErrNotText, "text to write is not valid UTF-8 (invalid byte at offset %d); send UTF-8 text", invalidUTF8(text))
		}
		return text, nil
	case UTF16LE:
		order = binary.LittleEndian
	case UTF16BE:
		order = binary.BigEndian
	default:
		return nil, newErr(op, p, ErrNotText, "unsupported encoding %q; use %q, %q or %q", string(enc), UTF8, UTF16LE, UTF16BE)
	}
	raw, bad := encodeUTF16(text, order)
	if bad >= 0 {
		return nil, newErr(op, p, ErrNotText, "text to write is not valid UTF-8 (invalid byte at offset %d); send UTF-8 text", bad)
	}
	return raw, nil
}

// invalidUTF8 returns the offset of the first byte that is not valid UTF-8.
func invalidUTF8(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return -1
}
