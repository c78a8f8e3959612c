// Package versions is the memory of the multi-agent model (docs/DESIGN.md
// section 4) and its one policy, what an Edit's line references name: a
// content-addressed cache of file snapshots by version ([Cache], backed by
// files on disk, [Disk]), the versions each agent last saw of each file and
// which lines of each ([Views]), and [Resolve], which chooses the version a
// batch was made against and carries it onto the current file ([Rebase]),
// or refuses it: a batch whose base is no longer held ([UnknownBase]),
// references to lines the agent was never shown ([Unshown]), references
// two versions the agent saw read as different lines ([Ambiguous]).
// What a response showed the agent is worked out here too ([EditShown],
// [RefusalShown]), from the line numbers it carries. The policy works on
// versions, line numbers and hashes, given as plain values; it reads no
// file, no request, and no message text.
//
// # Choosing the base
//
// The versions an Edit's references are tried against are, in order, the
// baseVersion the agent gave, then the versions it was shown, the most
// recent first. The first in which every reference names, by number and
// hash, a line the agent was shown there ([Check]) is the base, and the
// batch is rebased from it (or read as it is, when it is the current
// file). A baseVersion the views do not hold is taken at its word, for
// every line. A version tried before the base that is no longer held
// refuses the batch: nothing proves what its references named there. When
// no version verifies, references to lines of the current file the agent
// was not shown are refused (NOT_SHOWN); the rest go to the planner, which
// checks them by line and hash. [Resolve] documents each case.
//
// # Snapshots and views
//
// A version names exact bytes, so a snapshot cached under it never goes
// stale: the cache needs no invalidation, only a bound. [Cache] keeps parsed
// documents, least recently used first out, within a byte budget shared by
// every agent and file; what it lets go, and what it holds at shutdown
// ([Cache.Save]), goes to a [Disk] in the server's state directory, where
// a later lookup, or a later server, finds it. [Views] remembers, per
// (agent, file), the last few versions responses showed the agent (the
// depth, [DefaultViewDepth]) and, per version, the runs of line numbers
// shown ([Lines]); the lines of its own edit's previous version that the
// edit left alone are carried to their new numbers ([Carry]), as moved
// when the number changed. [Check] says whether a batch's references name
// lines shown in a version, by number and hash. All within bounds on pairs
// and bytes.
//
// # A base that is no longer held
//
// Without the base's content nothing proves that a referenced line is the
// one the agent read: a short hash matches other lines, and a range's inner
// lines carry no reference at all. A batch with line references made
// against such a base is refused with the current lines ([UnknownBase]);
// one without (append, prepend, replaceText) reads no line of the base and
// is resolved against the current file, as a rebase would.
//
// # What the rebase compares
//
// [Diff] compares the base and the current document line by line, by
// content without the line ending (what a model saw in Read), with an exact
// Myers diff after trimming the common prefix and suffix: go-udiff's for a
// few changes, else sergi/go-diff's bisection on lines interned to runes.
// The library's "half match" shortcut is left off: it can return a diff
// longer than the shortest, whose extra changed lines would refuse
// references to lines nothing touched. A base line that the diff matches to
// a current line is untouched: it has exactly the same content, whatever its
// hash length. Every other base line is changed (the diff replaced it with
// other lines) or deleted (replaced with nothing). Among equal lines the
// diff picks one alignment (for example which of two identical "}" lines
// survived); nothing else could tell them apart. The diff search is bounded
// by [DiffTimeout]; past it the rest is reported as one changed block, or
// the library's half match is tried within the same bound and kept when it
// keeps more lines: the diff is then valid but may not be the shortest,
// which can only add conflicts, never hide one.
//
// # How each reference maps
//
// Lines and gaps below are in the base version. Gap g (0 <= g <= n) is the
// point between line g and line g+1: gap 0 is the start of the file, gap n
// its end. Another change "inserted into" gap g, as seen from an insertion
// anchored on one side of it, when the diff has a block that adds lines at
// g and removes none, or a block that starts (or ends) at g on the other
// side of the anchor and adds more lines than it removes: its extra lines
// may have been inserted right at g, and a diff cannot tell. A block that
// replaces lines next to the gap with as many or fewer lines did not insert
// into it.
//
//   - replace or delete start..end: start and end must be untouched
//     (else CHANGED or DELETED for that reference); every line strictly
//     between them must be untouched and no gap strictly inside the range
//     (start..end-1) may have been inserted into (else CONFLICT on start).
//     Lines inserted just before start or just after end are kept: the
//     range maps to the same number of lines, all of them the ones the
//     agent saw.
//   - insertAfter anchor: the anchor must be untouched (CHANGED or DELETED)
//     and no other change may have inserted into the gap after it
//     (CONFLICT): two insertions at one point have no order the server
//     could choose. The text goes right after the anchor's current line;
//     a change that only rewrote or deleted the line after the anchor does
//     not conflict.
//   - insertBefore anchor: the same with the gap before the anchor.
//   - append, prepend and replaceText carry no reference: they are resolved
//     against the current file as they would be without a rebase.
//
// When every reference maps, the rebase rewrites each one to its current
// number (the hash stays: the content is the same), and the batch is then
// planned against the current file like any other, so every batch rule
// (overlaps, NO_CHANGE, replaceText) holds unchanged. The result equals
// applying the batch to the base and merging the other changes in, which
// the package's property test checks against an independent merge.
//
// A reference that does not match the base at all (wrong number or hash)
// was not made against it; [Rebase] then returns an error wrapping
// [ErrNotBase]. [Resolve] tries the versions the agent saw in turn
// ([Check]) before it rebases, so that does not happen there.
package versions
