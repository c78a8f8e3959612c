package history

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
	"time"
)

func sampleChanges() []Change {
	v := func(c byte) string { return "v2-" + string(bytes.Repeat([]byte{c}, 32)) }
	return []Change{
		{Kind: KindEdit, Agent: "alice", RequestID: "r1", Files: []File{{Path: "src/a.go", Before: v('1'), After: v('2'),
			Hunks: []Hunk{
				{Hunk: hk(1, 2, 1, 3), Removed: []string{"old"}, Added: []string{"new", "newer"}},
				{Hunk: hk(5, 5, 6, 7), Added: []string{"\tinserted"}},
				{Hunk: hk(9, 11, 11, 11), Removed: []string{"x", ""}},
			}}}},
		{Kind: KindWrite, Agent: "bob", Files: []File{{Path: "b.txt", After: "some-other-version",
			Hunks: []Hunk{{Hunk: hk(0, 0, 0, 1), Added: []string{"ünïcödé"}}}}}},
		{Kind: KindMove, Agent: "carol", Files: []File{{Path: "new/place.go", From: "old/place.go", Before: v('a'), After: v('a')}}},
		{Kind: KindDelete, Agent: External, Files: []File{{Path: "gone", Before: v('b'), Hunks: []Hunk{{Hunk: hk(0, 1, 0, 0), Removed: []string{"bye"}}}}}},
		{Kind: KindSet, Agent: "dave", RequestID: "set-1", Files: []File{
			{Path: "a", From: "b", Before: v('c'), After: v('d'), Hunks: []Hunk{{Hunk: hk(0, 1, 0, 1), Removed: []string{"1"}, Added: []string{"2"}}}},
			{Path: "b", From: "a", Before: v('d'), After: v('c')},
		}},
		{Kind: KindRevert, Agent: "alice", Reverts: ID{seq: 1}, Files: []File{{Path: "src/a.go", Before: v('2'), After: v('1'),
			Hunks: []Hunk{{Hunk: hk(1, 3, 1, 2), Removed: []string{"new", "newer"}, Added: []string{"old"}}}}}},
		{Kind: KindEdit, Agent: "e", LinesOmitted: true, Files: []File{{Path: "big", Before: v('e'), After: v('f'),
			Hunks: []Hunk{{Hunk: hk(0, 1000, 0, 2000)}}}}},
	}
}

// encoded gives c the counts Append gives and returns its record.
func encoded(t testing.TB, c *Change, seq uint64) []byte {
	for i := range c.Files {
		c.Files[i].Removed, c.Files[i].Added = counts(c.Files[i].Hunks)
	}
	c.ID = ID{seq: seq}
	c.Time = time.Unix(0, 1_700_000_000_123_456_789).UTC()
	b, _ := appendRecord(nil, c, seq, c.Time.UnixNano())
	return b
}

func TestRecordsRoundTrip(t *testing.T) {
	t.Parallel()
	for i, c := range sampleChanges() {
		t.Run(c.Kind.String(), func(t *testing.T) {
			t.Parallel()
			if err := c.checkWith(0, uint64(i+2), !c.LinesOmitted); err != nil {
				t.Fatalf("the sample is not a change Append takes: %v", err)
			}
			b := encoded(t, &c, uint64(i+2))
			got, n, err := decodeRecord(b)
			if err != nil || n != len(b) {
				t.Fatalf("decode: %v (%d of %d bytes)", err, n, len(b))
			}
			if !reflect.DeepEqual(got, c) {
				t.Fatalf("round trip:\n got %+v\nwant %+v", got, c)
			}
		})
	}
}

// Every single flipped bit and every cut is refused, never read as
// another change.
func TestRecordsRefuseDamage(t *testing.T) {
	t.Parallel()
	for i, c := range sampleChanges() {
		t.Run(c.Kind.String(), func(t *testing.T) {
			t.Parallel()
			b := encoded(t, &c, uint64(i+2))
			for off := range b {
				for bit := range 8 {
					d := bytes.Clone(b)
					d[off] ^= 1 << bit
					if _, _, err := decodeRecord(d); err == nil {
						t.Fatalf("a record with bit %d of byte %d flipped was read", bit, off)
					}
				}
				if _, _, err := decodeRecord(b[:off]); !errors.Is(err, errDamaged) {
					t.Fatalf("a record cut at %d: %v", off, err)
				}
			}
		})
	}
}

// FuzzDecodeRecord: whatever the bytes, decoding never panics, and what it
// accepts is a change Append would take, which encodes to a record that
// decodes to the same change.
func FuzzDecodeRecord(f *testing.F) {
	for i, c := range sampleChanges() {
		f.Add(encoded(f, &c, uint64(i+2)))
	}
	f.Add([]byte{})
	f.Add(make([]byte, frameLen))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, n, err := decodeRecord(b)
		if err != nil {
			return
		}
		if n > len(b) {
			t.Fatalf("read %d bytes of %d", n, len(b))
		}
		again, _ := appendRecord(nil, &c, c.ID.seq, c.Time.UnixNano())
		c2, _, err := decodeRecord(again)
		if err != nil {
			t.Fatalf("a decoded change does not encode back: %v", err)
		}
		if !reflect.DeepEqual(c, c2) {
			t.Fatalf("re-encoded:\n got %+v\nwant %+v", c2, c)
		}
		if !c.LinesOmitted {
			check := c
			check.Reverts.log = 1
			if err := check.check(1, c.ID.seq); err != nil {
				t.Fatalf("a decoded change Append would refuse: %v", err)
			}
		}
	})
}

func TestIDsParseAsWritten(t *testing.T) {
	t.Parallel()
	id := ID{seq: 42, log: 0x9f3a11be}
	if s := id.String(); s != "c42-9f3a11be" {
		t.Fatalf("String = %q", s)
	}
	if got, err := ParseID(id.String()); err != nil || got != id {
		t.Fatalf("ParseID = %v, %v", got, err)
	}
	for _, s := range []string{"", "c", "42-9f3a11be", "c42", "c42-", "c0-9f3a11be", "c042-9f3a11be", "c42-9F3A11BE",
		"c42-9f3a11b", "c42-9f3a11be0", "c-9f3a11be", "c42-00000000", "c4x-9f3a11be", "c18446744073709551616-9f3a11be", "c+4-9f3a11be", "d42-9f3a11be"} {
		if _, err := ParseID(s); !errors.Is(err, ErrMalformed) {
			t.Errorf("ParseID(%q) = %v, want ErrMalformed", s, err)
		}
	}
}
