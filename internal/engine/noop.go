package engine

import (
	"container/list"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/hashline/hashline/internal/hashline"
)

// A model refused a no-op edit often sends the same edit again, and again:
// each refusal shows it the lines, and it does not believe them. The
// server remembers, per agent, the no-ops it refused (a digest of the path
// and the normalized edits), so that the same no-op sent again is called
// what it is, and counted (the no_change_repeated edit outcome).

// noChangeEntries bounds the remembered no-ops, over all agents. A
// forgotten one only makes a repeat read as a first refusal.
const noChangeEntries = 4096

// noChanges is the memory of refused no-ops, least recently refused
// forgotten first. The zero value is ready to use; it is safe for
// concurrent use.
type noChanges struct {
	mu sync.Mutex
	ll list.List // of *noChangeEntry, most recently refused at the front
	m  map[noChangeKey]*list.Element
}

type noChangeKey struct {
	agent string
	sum   [sha256.Size]byte
}

type noChangeEntry struct {
	key     noChangeKey
	refused int
}

// refuse records that agent was refused the no-op with digest sum, and
// returns how many times it had been refused that same no-op before.
func (n *noChanges) refuse(agent string, sum [sha256.Size]byte) int {
	k := noChangeKey{agent, sum}
	n.mu.Lock()
	defer n.mu.Unlock()
	if el, ok := n.m[k]; ok {
		e := el.Value.(*noChangeEntry)
		e.refused++
		n.ll.MoveToFront(el)
		return e.refused - 1
	}
	if n.m == nil {
		n.m = make(map[noChangeKey]*list.Element)
	}
	n.m[k] = n.ll.PushFront(&noChangeEntry{key: k, refused: 1})
	for n.ll.Len() > noChangeEntries {
		el := n.ll.Back()
		n.ll.Remove(el)
		delete(n.m, el.Value.(*noChangeEntry).key)
	}
	return 0
}

// noChangeDigest identifies an edit request by what it asks: the file (its
// view key) and the edits, normalized so that spellings the planner treats
// alike are alike here: a ref with spaces, upper-case hex or a pasted line
// ("5:AB |x" is "5:ab"), an end equal to the start or absent, a text with
// or without its final newline or with pasted tag prefixes.
func noChangeDigest(key string, edits []hashline.Edit) [sha256.Size]byte {
	h := sha256.New()
	var n [binary.MaxVarintLen64]byte
	field := func(s string) {
		h.Write(n[:binary.PutUvarint(n[:], uint64(len(s)))])
		h.Write([]byte(s))
	}
	field(key)
	for _, e := range edits {
		start, end := canonicalRef(e.Start), canonicalRef(e.End)
		if end == start {
			end = ""
		}
		field(strconv.Itoa(int(e.Op)))
		field(start)
		field(end)
		field(canonicalText(e.Text))
		field(e.OldText)
		field(e.NewText)
		field(strconv.FormatBool(e.All))
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum
}

func canonicalRef(raw string) string {
	if r, err := hashline.ParseRef(raw); err == nil {
		return r.String()
	}
	return strings.TrimSpace(raw)
}

func canonicalText(text string) string {
	lines, _ := hashline.StripTagPrefixes(hashline.SplitText(text))
	return strings.Join(lines, "\n")
}

// noteNoChange passes err through, unless it refuses a no-op edit this
// agent was refused before: then it says so (RepeatedNoChangeError).
func (s *Engine) noteNoChange(agent, key string, edits []hashline.Edit, err error) error {
	var b *hashline.BatchError
	if !errors.As(err, &b) || b.Reason() != hashline.ReasonNoChange {
		return err
	}
	if n := s.noChanges.refuse(agent, noChangeDigest(key, edits)); n > 0 {
		return &RepeatedNoChangeError{Err: err, Before: n}
	}
	return err
}

// RepeatedNoChangeError is a no-op edit refused again: the agent sent the
// same edits to the same file, and was refused them before times.
type RepeatedNoChangeError struct {
	Err    error // the refusal, a *StaleError around the NO_CHANGE batch
	Before int
}

func (e *RepeatedNoChangeError) Error() string {
	return fmt.Sprintf("this exact edit was already refused (%s before): the file already contains it, and sending it again changes nothing. Stop sending it; if you expected a difference, read the file again.\n%v",
		times(e.Before), e.Err)
}

func (e *RepeatedNoChangeError) Unwrap() error { return e.Err }

// times is "once", "twice" or "N times".
func times(n int) string {
	switch n {
	case 1:
		return "once"
	case 2:
		return "twice"
	}
	return strconv.Itoa(n) + " times"
}
