// Package history keeps the change history of a workspace: a log, in a
// directory of the server's state, of every committed change (who made
// it, when, in answer to which request, and per file its versions before
// and after and the lines it removed and added), and the queries over it:
// the changes of a file, a directory or the workspace ([Log.History]), one
// change by its id ([Log.Get]), and who last wrote each line of a file
// ([Log.Blame]). It is storage and queries only: the engine records every
// commit; the package knows nothing of the API.
//
// # The log
//
// A change is one entry however many files it touches: an Edit, a Write, a
// Delete, a Move, a change set, a revert (which names the change it
// reverts), or a change found made outside the server (agent [External]).
// [Log.Append] gives it a sequence number and a time and appends one record
// to the newest segment file of the directory; a segment that would grow
// past [Options.SegmentBytes] is closed and a new one started. The oldest
// segments are removed once the log is past [Options.MaxBytes], or once
// every change in them is older than [Options.MaxAge]; changes older than
// MaxAge that are still on disk are not shown either. Times never go
// backwards in the log: a clock that steps back records the latest time
// again, so that the log is ordered by time as by sequence.
//
// Every record carries its length and two CRC-32C checksums, one over its
// head (the change without its lines) and one over the rest. Opening the
// log reads every record back and checks both, and indexes each from its
// head; a record a crash tore at the end of the newest segment fails them
// and is cut off, never read as something else. With [Options.Fsync] an
// Append returns once its record is on disk, so a change reported appended
// survives a crash. Without, records wait in memory for a few milliseconds
// (or until 64 KiB of them do) and go to the file in one write, since a
// write per change would cost more than the rest of an Append: a crash of
// the process loses those waiting, one of the system what it had not
// written yet, and the sequence numbers of the changes lost are given
// again to the next ones.
//
// # Changes about to be made
//
// A change the engine is about to make is prepared ([Log.Prepare]) before
// the step that makes it, and resolved ([Log.Resolve]) after: pending, it
// has its id and no query shows it; resolved as made, it is shown; as not
// made, it never is, and its id is unknown. The outcome is written in the
// head of the next record appended, or in a note (a record of outcomes
// alone) when the log writes its records before one comes, so resolving
// costs no write of its own, and an outcome is always on file before any
// later record. A crash between the two leaves the change pending: the
// next Open finds it ([Log.Unresolved]) and the engine resolves it from
// the files. A change a change set's intent record carries ([Encode]) is
// recorded by replay with [Log.Restore], with its id, whether the log
// lost its record, holds it pending or holds it already.
//
// # Ids
//
// A change id ([ID], written like c42-9f3a11be) is the change's sequence
// number and the log's own random number, chosen when the log was created.
// Sequence numbers only grow, so an id the log once gave and has since
// dropped ([ErrExpired]) is told apart from one it never gave: a larger
// number, or another log's ([ErrUnknown]). A string that is no id at all
// is [ErrMalformed].
//
// # Memory
//
// Open builds an index in memory: per change its place on disk, time,
// agent and state (24 bytes), and per path the sequence numbers of the
// changes that touched it (8 bytes each). The changes themselves stay on disk: a query
// reads the heads of the records it returns, and their lines only when
// asked for hunks. Blame reads heads only: a head holds every hunk's place
// and size, which is all attribution needs.
//
// # Files that move
//
// A path's history is the history of the file now at that path: walking
// back from the newest change, a Move that brought the file to the path
// continues at the path it came from, with the changes made there before
// the move. Blame walks the same way and stops at the change that created
// the file. A directory's history is every change to a path under it,
// moves in or out included, and is not followed anywhere.
package history
