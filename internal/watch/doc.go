// Package watch tells subscribers about changes to the files of a
// workspace, whether the server made them or another process did.
//
// It has three parts, none of which knows about gRPC:
//
//   - Hub fans change events out to subscribers, each interested in a path
//     prefix (a file, or a directory and everything under it). Publishing
//     never blocks and costs the same however many subscribers there are
//     and however far behind: each event is appended once to a bounded ring
//     that every subscriber reads from its own cursor. A subscriber that
//     falls more than the ring's length behind skips to the oldest event
//     kept; the next event it takes carries the number skipped in
//     Event.Dropped, which means "you missed changes: read the files you
//     care about again". The hub also
//     remembers the last version (and, within a byte budget, the content) of
//     every file it has seen, so that an event for a change made outside the
//     server can say what it replaced, and so that the server's own writes,
//     seen again by the file-system watcher, are not reported twice.
//
//   - Ranges computes the changed line regions between two contents with
//     go-udiff's line diff, in the shape of unified diff hunk headers.
//
//   - Tree watches a directory tree with fsnotify: recursively (directories
//     created later are added as they appear), skipping .git and the
//     workspace's own temporary files, and debouncing bursts of events into
//     batches of changed paths for a handler that re-reads the files.
package watch
