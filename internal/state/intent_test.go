package state

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func sampleIntent() Intent {
	return Intent{ID: "ABC234", Steps: []IntentStep{
		{Op: "rename", Path: "a.go", From: "src/.hashline-AAAAAAAAAAAAAAAAAAAAAAAAAA.tmp", To: "src/a.go"},
		{Op: "rename", Path: "old.go", From: "old.go", To: "new/old.go", Version: "v2-0123"},
		{Op: "remove", Path: "gone.go", To: "gone.go", Version: "v2-4567"},
	}}
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
