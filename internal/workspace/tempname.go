package workspace

import (
	"crypto/rand"
	"path/filepath"
	"strings"
)

// Temp-file names have one exact form: ".hashline-", then tempRandLen
// characters of the RFC 4648 base32 alphabet (A-Z and 2-7, upper case:
// 130 random bits), then ".tmp"; 40 bytes in all. It is the form
// crypto/rand.Text gives today, which every earlier release used, so the
// sweep still recognises what a crash under one of them left behind; it is
// spelled out here so that it cannot change under IsTempName. The names
// are unguessable, so nobody can pre-create or pre-link one, and exact, so
// that a user's file that merely looks similar (".hashline-notes.tmp") is
// never taken for one: the sweep removes what IsTempName matches.
const (
	tempPrefix   = ".hashline-"
	tempSuffix   = ".tmp"
	tempRandLen  = 26
	tempAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	tempNameLen  = len(tempPrefix) + tempRandLen + len(tempSuffix)
)

// tempName returns a new random temp-file base name.
func tempName() string {
	var b [tempNameLen]byte
	copy(b[:], tempPrefix)
	r := b[len(tempPrefix) : len(tempPrefix)+tempRandLen]
	rand.Read(r) // never fails: crypto/rand crashes the program instead
	for i := range r {
		r[i] = tempAlphabet[r[i]%32]
	}
	copy(b[len(tempPrefix)+tempRandLen:], tempSuffix)
	return string(b[:])
}

// IsTempName reports whether the last element of name (a base name or a
// path) is a temp file's name as WriteFile makes them, exactly: ".hashline-",
// 26 characters from A-Z and 2-7, ".tmp". Directory walkers skip those
// files, the API refuses to name them, and the start-up sweep removes the
// ones a crash left behind. Any other name is an ordinary file's, however
// alike it looks.
func IsTempName(name string) bool {
	name = filepath.ToSlash(name)
	base := name[strings.LastIndexByte(name, '/')+1:]
	if len(base) != tempNameLen || !strings.HasPrefix(base, tempPrefix) || !strings.HasSuffix(base, tempSuffix) {
		return false
	}
	for _, c := range []byte(base[len(tempPrefix) : len(tempPrefix)+tempRandLen]) {
		if !('A' <= c && c <= 'Z' || '2' <= c && c <= '7') {
			return false
		}
	}
	return true
}
