package state

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func sampleIntent() Intent {
	return Intent{ID: "ABC234", Steps: []IntentStep{
		{Op: "rename", Path: "a.go", From: "src/.hashline-AAAAAAAAAAAAAAAAAAAAAAAAAA.tmp", To: "src/a.go", New: "v2-89ab", Replaces: "v2-cdef"},
		{Op: "rename", Path: "old.go", From: "old.go", To: "new/old.go", Version: "v2-0123", New: "v2-0123"},
		{Op: "remove", Path: "gone.go", To: "gone.go", Version: "v2-4567"},
	}, History: []byte("a history entry\x00\xff")}
}

func TestIntentRecordsRoundTripAndRefuseDamage(t *testing.T) {
	data, err := EncodeIntent(sampleIntent())
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeIntent(data)
	if err != nil || !reflect.DeepEqual(got, sampleIntent()) {
		t.Fatalf("round trip: %v, %v", got, err)
	}
	damaged := map[string][]byte{
		"a torn record":            data[:len(data)-5],
		"a flipped bit":            flip(data, len(data)-10),
		"a flipped checksum digit": flip(data, len(intentMagic)+3),
		"no header":                data[len(intentMagic):],
		"an empty file":            nil,
	}
	for name, d := range damaged {
		t.Run(name+" is refused", func(t *testing.T) {
			if _, err := DecodeIntent(d); err == nil {
				t.Error("decoded")
			}
		})
	}
	bad := map[string]Intent{
		"a path out of the root": {ID: "x", Steps: []IntentStep{{Op: "remove", To: "../etc/passwd"}}},
		"an absolute path":       {ID: "x", Steps: []IntentStep{{Op: "rename", From: "/etc/passwd", To: "a"}}},
		"an unknown op":          {ID: "x", Steps: []IntentStep{{Op: "chmod", To: "a"}}},
		"no steps":               {ID: "x"},
		"an id that is a path":   {ID: "../x", Steps: []IntentStep{{Op: "remove", To: "a"}}},
	}
	for name, in := range bad {
		t.Run(name+" is never encoded", func(t *testing.T) {
			if _, err := EncodeIntent(in); err == nil {
				t.Error("encoded")
			}
		})
	}
}

// A record left by a crash of a build that wrote format 1 (no new nor
// replaces) is still read; one of an unknown format is refused with a
// reason, never read as something else.
func TestIntentRecordsOfAnOlderFormatAreReadAndUnknownOnesRefused(t *testing.T) {
	v1 := []byte(`{"id":"OLD1","steps":[{"op":"rename","path":"a","from":".hashline-X.tmp","to":"a"},{"op":"remove","path":"b","to":"b","version":"v2-1"}]}`)
	frame := func(magic string, body []byte) []byte {
		sum := sha256.Sum256(body)
		return append([]byte(magic+hex.EncodeToString(sum[:])+"\n"), body...)
	}
	in, err := DecodeIntent(frame("hashline-intent 1\n", v1))
	if err != nil || in.ID != "OLD1" || len(in.Steps) != 2 || in.Steps[0].New != "" {
		t.Fatalf("a format 1 record: %+v, %v", in, err)
	}
	withNew := []byte(`{"id":"OLD1","steps":[{"op":"rename","path":"a","from":"t","to":"a","new":"v2-1"}]}`)
	if _, err := DecodeIntent(frame("hashline-intent 1\n", withNew)); err == nil {
		t.Error("a format 1 record with format 2 fields was read")
	}
	// Format 2: new and replaces, no history entry.
	v2 := []byte(`{"id":"OLD2","steps":[{"op":"rename","path":"a","from":"t","to":"a","new":"v2-1","replaces":"v2-2"}]}`)
	if in, err := DecodeIntent(frame("hashline-intent 2\n", v2)); err != nil || in.ID != "OLD2" || in.Steps[0].Replaces != "v2-2" || in.History != nil {
		t.Errorf("a format 2 record: %+v, %v", in, err)
	}
	withHistory := []byte(`{"id":"OLD2","steps":[{"op":"remove","path":"b","to":"b","version":"v2-1"}],"history":"AQID"}`)
	if _, err := DecodeIntent(frame("hashline-intent 2\n", withHistory)); err == nil {
		t.Error("a format 2 record with a history entry was read")
	}
	if in, err := DecodeIntent(frame(intentMagic, withHistory)); err != nil || string(in.History) != "\x01\x02\x03" {
		t.Errorf("a format 3 record: %+v, %v", in, err)
	}
	if _, err := DecodeIntent(frame("hashline-intent 4\n", v1)); err == nil || !strings.Contains(err.Error(), "unknown format") {
		t.Errorf("a record of format 4: %v, want an unknown format error", err)
	}
}

func flip(b []byte, i int) []byte {
	c := bytes.Clone(b)
	c[i] ^= 1
	return c
}

func TestPendingRemovesUncommittedRecordsAndReturnsCommittedOnes(t *testing.T) {
	root := t.TempDir()
	d, err := Open(t.TempDir(), root)
	if err != nil {
		t.Fatal(err)
	}
	l, err := d.Intents(true)
	if err != nil {
		t.Fatal(err)
	}
	done, err := l.Record(sampleIntent())
	if err != nil {
		t.Fatal(err)
	}
	// A record a crash cut before its rename: never committed.
	os.WriteFile(filepath.Join(l.Dir(), "XYZ-123.tmp"), []byte("hashline-intent 1\ntorn"), 0o600)
	p, err := l.Pending()
	if err != nil || len(p) != 1 || p[0].ID != "ABC234" {
		t.Fatalf("Pending = %v, %v", p, err)
	}
	if _, err := os.Stat(filepath.Join(l.Dir(), "XYZ-123.tmp")); !os.IsNotExist(err) {
		t.Error("the uncommitted record is still there")
	}
	if err := done(); err != nil {
		t.Fatal(err)
	}
	if p, err := l.Pending(); err != nil || len(p) != 0 {
		t.Fatalf("Pending after done = %v, %v", p, err)
	}
}

// FuzzDecodeIntent: whatever the bytes of a record, decoding never panics,
// and what it accepts encodes back to the same bytes.
func FuzzDecodeIntent(f *testing.F) {
	data, _ := EncodeIntent(sampleIntent())
	f.Add(data)
	f.Add([]byte(intentMagic + "00\n{}"))
	f.Add([]byte(intentMagicV1 + "00\n{}"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		in, err := DecodeIntent(b)
		if err != nil {
			return
		}
		again, err := EncodeIntent(in)
		if err != nil {
			t.Fatalf("a decoded record does not encode: %v", err)
		}
		if _, err := DecodeIntent(again); err != nil {
			t.Fatalf("a re-encoded record does not decode: %v", err)
		}
	})
}

func TestOneEngineAtATimeHoldsTheIntentLog(t *testing.T) {
	d, err := Open(t.TempDir(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	l, err := d.Intents(true)
	if err != nil {
		t.Fatal(err)
	}
	release, err := l.Lock()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Lock(); !errors.Is(err, ErrLogInUse) {
		t.Fatalf("a second Lock while the first is held: %v, want ErrLogInUse", err)
	}
	if err := release(); err != nil {
		t.Fatal(err)
	}
	again, err := l.Lock()
	if err != nil {
		t.Fatalf("Lock after release: %v", err)
	}
	again()
	if p, err := l.Pending(); err != nil || len(p) != 0 {
		t.Errorf("the lock file is taken for a record: %v, %v", p, err)
	}
}

// A refused Lock names the process that holds the log, from the holder
// file; the holder removes it before it lets go.
func TestAHeldIntentLogNamesItsHolder(t *testing.T) {
	d, err := Open(t.TempDir(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	l, err := d.Intents(true)
	if err != nil {
		t.Fatal(err)
	}
	release, err := l.Lock()
	if err != nil {
		t.Fatal(err)
	}
	_, err = l.Lock()
	if want := "process " + strconv.Itoa(os.Getpid()) + " ("; !errors.Is(err, ErrLogInUse) || !strings.Contains(err.Error(), want) {
		t.Errorf("a second Lock: %v, want ErrLogInUse naming %q", err, want)
	}
	if err := release(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(l.Dir(), "holder")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the holder file outlives the lock: %v", err)
	}
	// A holder that wrote no ID (an older build) is not named.
	unlock, err := LockFile(filepath.Join(l.Dir(), "lock"))
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	if _, err = l.Lock(); !errors.Is(err, ErrLogInUse) || strings.Contains(err.Error(), "process") {
		t.Errorf("a Lock held without a holder file: %v, want ErrLogInUse naming no process", err)
	}
}
